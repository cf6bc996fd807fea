import StreakStore

/// The (user, streak) pairs an import stored rows for, each to be made due once at its end,
/// kept the cheapest way the rows allow (docs/ARCHITECTURE.md, "Import at scale"):
///
/// - in order, while the rows come sorted by (user, streak), bytes compared (`PairList`, about
///   20 bytes a pair: no read of the table at the end);
/// - else as a set (a `ByteTable` of the user's bytes, 0xFF, the streak's), up to `looseLimit`;
/// - else not at all: the schedule is then updated from every row above the ids before the
///   import (which reads the table).
struct ImportPairs {
    /// The pairs a set holds at most.
    static let looseLimit = 1 << 16
    let looseLimit: Int
    private var sorted: PairList? = PairList()
    private var loose: ByteTable?
    /// Scratch for a set's key.
    private var key: [UInt8] = []

    init(looseLimit: Int) { self.looseLimit = looseLimit }

    /// Whether the pairs are still kept (`add` is worth calling).
    var isKept: Bool { sorted != nil || loose != nil }

    /// How many pairs are kept; nil when they were given up.
    var keptCount: Int? { sorted?.count ?? loose?.count }

    mutating func add(_ user: UnsafeBufferPointer<UInt8>, _ streak: UnsafeBufferPointer<UInt8>) {
        if sorted != nil {
            if sorted!.add(user, streak) { return }
            // Out of order (or past what a list holds): the pairs so far go to a set.
            let list = sorted!
            sorted = nil
            guard list.count < looseLimit else { return }
            loose = ByteTable(capacity: list.count + 1)
            list.forEach { _, u, s in addLoose(u, s) }
        }
        addLoose(user, streak)
    }

    private mutating func addLoose(_ user: UnsafeBufferPointer<UInt8>, _ streak: UnsafeBufferPointer<UInt8>) {
        guard loose != nil else { return }
        key.removeAll(keepingCapacity: true)
        key.append(contentsOf: user)
        key.append(0xFF)  // never in UTF-8
        key.append(contentsOf: streak)
        _ = key.withUnsafeBufferPointer { loose!.intern($0) }
        if loose!.count > looseLimit { loose = nil }
    }

    /// Calls `body` with each pair kept, numbered from 0, by user then streak (bytes compared),
    /// the bytes valid until the call returns.
    func forEachInOrder(
        _ body: (Int, _ user: UnsafeBufferPointer<UInt8>, _ streak: UnsafeBufferPointer<UInt8>) throws -> Void
    ) rethrows {
        if let sorted { return try sorted.forEach(body) }
        guard let loose else { return }
        // Each key split at its 0xFF into user and streak, sorted, then visited.
        var split = PackedTexts(reservingTexts: 2 * loose.count, bytes: 0)
        for n in 0..<loose.count {
            loose.withKey(n) { k in
                let cut = k.firstIndex(of: 0xFF)!
                split.append(UnsafeBufferPointer(rebasing: k[..<cut]))
                split.append(UnsafeBufferPointer(rebasing: k[(cut + 1)...]))
            }
        }
        try split.withTexts { t in
            let order = (0..<loose.count).sorted { a, b in
                let byUser = compareBytes(t[2 * a], t[2 * b])
                return byUser != 0 ? byUser < 0 : compareBytes(t[2 * a + 1], t[2 * b + 1]) < 0
            }
            for (k, n) in order.enumerated() { try body(k, t[2 * n], t[2 * n + 1]) }
        }
    }
}

/// (user, streak) pairs in ascending order, each once: each user's bytes once and each streak
/// id once (`PackedTexts`), a pair their two numbers.
struct PairList {
    /// A pair: its user's number in `users`, its streak's in `streaks`.
    struct Pair {
        var user: UInt32
        var streak: UInt16
    }

    private var users = PackedTexts()
    private var streaks = PackedTexts()
    private var pairs: [Pair] = []
    /// Streak ids a list holds at most: past it the pairs go to a set.
    static let maxStreaks = 64

    var count: Int { pairs.count }

    /// Adds a pair after the last; false when it comes before it, or does not fit the list.
    mutating func add(_ user: UnsafeBufferPointer<UInt8>, _ streak: UnsafeBufferPointer<UInt8>) -> Bool {
        var sameUser = false
        if let last = pairs.last {
            let byUser = users.withText(Int(last.user)) { compareBytes($0, user) }
            if byUser > 0 { return false }
            if byUser == 0 {
                let byStreak = streaks.withText(Int(last.streak)) { compareBytes($0, streak) }
                if byStreak == 0 { return true }
                if byStreak > 0 { return false }
                sameUser = true
            }
        }
        guard users.byteCount + user.count <= PackedTexts.maxBytes, pairs.count < Int(UInt32.max) else { return false }
        let number =
            streaks.withTexts { t in (0..<t.count).first { sameBytes(t[$0], streak) } } ?? streaks.count
        if number == streaks.count {
            guard streaks.count < Self.maxStreaks else { return false }
            streaks.append(streak)
        }
        if !sameUser { users.append(user) }
        pairs.append(Pair(user: UInt32(users.count - 1), streak: UInt16(number)))
        return true
    }

    /// Calls `body` with each pair, numbered from 0, in order; the bytes valid until the call returns.
    func forEach(
        _ body: (Int, _ user: UnsafeBufferPointer<UInt8>, _ streak: UnsafeBufferPointer<UInt8>) throws -> Void
    ) rethrows {
        try users.withTexts { u in
            try streaks.withTexts { s in
                for (k, p) in pairs.enumerated() { try body(k, u[Int(p.user)], s[Int(p.streak)]) }
            }
        }
    }
}
