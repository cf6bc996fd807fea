import StreakStore

/// (user, streak) pairs in ascending order, each once: each user's bytes once, end to end,
/// and the pair's streak as a number in a short list (about 16 bytes a pair).
struct PairList {
    struct Pair {
        var userStart: UInt32
        var userCount: UInt16
        var streak: UInt16
    }

    private(set) var bytes: [UInt8] = []
    private var pairs: [Pair] = []
    /// The streak ids, end to end, and where each is.
    private(set) var streakText: [UInt8] = []
    private var streaks: [Range<Int>] = []
    /// Streak ids a list holds at most: past it the pairs are given up (the schedule is then
    /// updated from the rows).
    static let maxStreaks = 64

    var count: Int { pairs.count }

    /// Pair `k`, its bytes in `bytes` and `streakText`.
    func pair(_ k: Int, users: UnsafeBufferPointer<UInt8>, streaks text: UnsafeBufferPointer<UInt8>)
        -> (UnsafeBufferPointer<UInt8>, UnsafeBufferPointer<UInt8>)
    {
        let p = pairs[k]
        let user = Int(p.userStart)..<(Int(p.userStart) + Int(p.userCount))
        return (UnsafeBufferPointer(rebasing: users[user]), UnsafeBufferPointer(rebasing: text[streaks[Int(p.streak)]]))
    }


    /// Adds a pair after the last; false when it comes before it, or does not fit the list.
    mutating func add(_ user: UnsafeBufferPointer<UInt8>, _ streak: UnsafeBufferPointer<UInt8>) -> Bool {
        var sameUser = false
        if let last = pairs.last {
            let start = Int(last.userStart)
            let byUser = bytes.withUnsafeBufferPointer { b in
                compareBytes(UnsafeBufferPointer(rebasing: b[start..<(start + Int(last.userCount))]), user)
            }
            if byUser > 0 { return false }
            if byUser == 0 {
                let byStreak = streakText.withUnsafeBufferPointer { compareBytes(UnsafeBufferPointer(rebasing: $0[streaks[Int(last.streak)]]), streak) }
                if byStreak == 0 { return true }
                if byStreak > 0 { return false }
                sameUser = true
            }
        }
        guard user.count <= Int(UInt16.max), bytes.count + user.count <= Int(UInt32.max) else { return false }
        let number =
            streakText.withUnsafeBufferPointer { text in
                streaks.indices.first { compareBytes(UnsafeBufferPointer(rebasing: text[streaks[$0]]), streak) == 0 }
            } ?? streaks.count
        if number == streaks.count {
            guard streaks.count < Self.maxStreaks else { return false }
            streakText.append(contentsOf: streak)
            streaks.append((streakText.count - streak.count)..<streakText.count)
        }
        let start = sameUser ? pairs.last!.userStart : UInt32(bytes.count)
        if !sameUser { bytes.append(contentsOf: user) }
        pairs.append(Pair(userStart: start, userCount: UInt16(user.count), streak: UInt16(number)))
        return true
    }
}
