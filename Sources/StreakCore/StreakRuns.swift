/// A streak's runs as they finally stand (the engine's marks), each as the instants at which its
/// qualifying dates qualified, in date order. Answers when a run first had n qualifying dates.
struct StreakRuns {
    /// Every run's instants end to end; run r is `instants[starts[r]..<starts[r + 1]]`.
    var instants: [Instant] = []
    var starts: [Int] = []
    /// Whether run r's dates qualified in date order (most do), when its n-th date decides.
    var inOrder: [Bool] = []

    init(_ state: StreakState) {
        // In instant order, which is nearly always date order: the sort finds it so.
        let qualified = state.qualified.sorted { $0.date < $1.date }
        var q = 0
        var open = false
        for (date, mark) in state.marks {
            switch mark {
            case .qualifying:
                // The engine marks a date qualifying exactly when it has a qualifying instant.
                while q < qualified.count && qualified[q].date < date { q += 1 }
                guard q < qualified.count && qualified[q].date == date else { continue }
                let at = qualified[q].at
                if !open {
                    starts.append(instants.count)
                    inOrder.append(true)
                    open = true
                } else if at < instants[instants.count - 1] {
                    inOrder[inOrder.count - 1] = false
                }
                instants.append(at)
            case .missed:
                open = false
            case .frozen, .bridged, .rest, .paused, .repaired, .open:
                // A freeze, a repair or a bridge keeps a run alive and adds no day; a date that has not
                // ended never breaks one.
                break
            }
        }
        starts.append(instants.count)
    }

    /// The longest run's length (equals the engine's `longest`).
    var longest: Int {
        var result = 0
        for r in 0..<(starts.count - 1) { result = max(result, starts[r + 1] - starts[r]) }
        return result
    }

    /// The first instant at which some run had `n` consecutive qualifying dates, all qualified:
    /// over every window of n dates, the latest of their instants; the earliest such. Dates
    /// usually qualify in date order, when this is the instant of the run's n-th date; one
    /// qualified late (a check-in in a zone behind the user's) completes its window only then.
    func earliest(_ n: Int) -> Instant? {
        guard n >= 1 else { return nil }
        var best: Instant?
        var window: [Int] = []  // indices whose instants decrease: the window's latest first
        for r in 0..<(starts.count - 1) where starts[r + 1] - starts[r] >= n {
            if inOrder[r] {
                best = min(best ?? instants[starts[r] + n - 1], instants[starts[r] + n - 1])
                continue
            }
            window.removeAll(keepingCapacity: true)
            var head = 0
            for i in starts[r]..<starts[r + 1] {
                while window.count > head && instants[window[window.count - 1]] <= instants[i] {
                    window.removeLast()
                }
                window.append(i)
                if window[head] <= i - n { head += 1 }
                if i - starts[r] + 1 >= n {
                    let latest = instants[window[head]]
                    best = min(best ?? latest, latest)
                }
            }
        }
        return best
    }
}
