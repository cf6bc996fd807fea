import Foundation
import StreakCore
import StreakJobs
import StreakStore

/// Streak recomputation from full history: every (user, streak) read from the store in one
/// ordered pass (`eachStreak`) and evaluated by the engine as of `now`, on `threads` threads
/// that each read half of the users over their own connection.
struct Recomputation {
    struct Totals: Sendable {
        var streaks = 0
        var checkins = 0
        var current = 0
        var longest = 0

        mutating func add(_ o: Totals) {
            streaks += o.streaks
            checkins += o.checkins
            current += o.current
            longest += o.longest
        }
    }

    let store: String
    let now: Instant

    func run(threads: Int) throws -> Totals {
        let middle = threads > 1 ? try SQLiteStore(path: store).read { try $0.middleUser() } : nil
        let ranges = middle.map { [UserRange(until: $0), UserRange(from: $0)] } ?? [.all]
        let results = Locked<[Result<Totals, any Error>]>([])
        DispatchQueue.concurrentPerform(iterations: ranges.count) { i in
            let r = Result { try part(ranges[i]) }
            results.update { $0.append(r) }
        }
        var total = Totals()
        for r in results.value { total.add(try r.get()) }
        return total
    }

    func part(_ range: UserRange) throws -> Totals {
        let store = try SQLiteStore(path: store)
        let context = Context(
            store: store, config: Config(), now: now, zones: ZoneBook(around: now), printer: .standard(format: .short))
        var totals = Totals()
        var epochs: [String: [SettingsEpoch]] = [:]
        try store.read { r in
            try r.eachStreak(users: range) { s in
                if epochs[s.streak] == nil { epochs[s.streak] = try r.settingsEpochs(of: s.streak) }
                let state = Engine.evaluate(try context.history(of: s, epochs: epochs[s.streak]!), at: now)
                totals.streaks += 1
                totals.checkins += s.checkins.count
                totals.current += state.current
                totals.longest += state.longest
            }
        }
        return totals
    }
}

/// A value shared between threads behind a lock.
final class Locked<T>: @unchecked Sendable {
    private var stored: T
    private let lock = NSLock()
    init(_ value: T) { stored = value }
    var value: T { lock.withLock { stored } }
    func update(_ body: (inout T) -> Void) { lock.withLock { body(&stored) } }
}
