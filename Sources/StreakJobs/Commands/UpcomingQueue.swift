import StreakCore

/// The notices `preview` has planned but not printed yet, in the order it prints them. Notices
/// fall due at few distinct instants (a reminder time or a day's end in each zone, many thousand
/// users at each), so they wait in a bucket per instant, the instants in a small binary heap: a
/// notice goes in with one dictionary lookup, and a bucket is sorted once, when its instant is
/// taken out. (A heap of every notice cost a third of the printing thread at a million users.)
/// A bucket keeps its notices as plain values and their user ids' bytes in one buffer
/// (`NoticeBatch`); when it is taken out, 16-byte keys made for it are sorted (made then, they
/// take no room while a million notices wait).
struct UpcomingQueue {
    /// A notice's place in its instant's bucket: what orders it first, and its slot.
    private struct Key {
        /// The user id's first eight bytes, big-endian: ids are ASCII, so these order as the
        /// ids do.
        var user: UInt64
        var slot: Int32
        /// Day ends come before reminders at one instant (SPEC §3).
        var atRisk: Bool
    }


    static func prefix(_ id: UnsafeRawBufferPointer) -> UInt64 {
        if id.count >= 8 { return UInt64(bigEndian: id.loadUnaligned(as: UInt64.self)) }
        var p: UInt64 = 0
        for i in 0..<8 { p = p << 8 | UInt64(i < id.count ? id[i] : 0) }
        return p
    }

    /// Each due instant's bucket, by its place in `buckets` (places of buckets taken out are
    /// used again), and the instants in a min-heap.
    private var places: [Int64: Int] = [:]
    private var buckets: [NoticeBatch] = []
    private var free: [Int] = []
    private var instants: [Int64] = []
    /// The instant and place of the bucket the last notice went into: most come in runs at one
    /// instant.
    private var last: (due: Int64, place: Int)?
    /// The notices held, and the most held at once.
    private(set) var count = 0
    private(set) var peak = 0

    /// Queues `item`, whose user id is `user`.
    mutating func push(_ item: QueuedNotice, user: UnsafeRawBufferPointer) {
        let due = item.dueSeconds
        let place: Int
        if let last, last.due == due {
            place = last.place
        } else if let known = places[due] {
            place = known
        } else {
            place = free.popLast() ?? buckets.count
            if place == buckets.count { buckets.append(NoticeBatch()) }
            places[due] = place
            pushInstant(due)
        }
        last = (due, place)
        buckets[place].append(item, user: user)
        count += 1
        peak = max(peak, count)
    }

    /// Takes out, in order, every notice due before `instant` (nil: every one), a batch per due
    /// instant. `streaks` names the notices' streaks (they order ties).
    mutating func pop(before instant: Instant?, streaks: [String]) -> [NoticeBatch] {
        var out: [NoticeBatch] = []
        while let first = instants.first, instant.map({ first < $0.seconds }) ?? true {
            popInstant()
            guard let place = places.removeValue(forKey: first) else { continue }
            if last?.place == place { last = nil }
            var batch = NoticeBatch()
            swap(&batch, &buckets[place])
            free.append(place)
            // Nothing moves: the batch is read in the keys' order.
            batch.order = batch.users.withUnsafeBytes { users in
                var keys = batch.items.enumerated().map { slot, item in
                    Key(user: Self.prefix(item.user(in: users)), slot: Int32(slot), atRisk: item.isAtRisk)
                }
                keys.sort { a, b in Self.less(a, b, batch, users, streaks) }
                return keys.map(\.slot)
            }
            count -= batch.count
            out.append(batch)
        }
        return out
    }

    /// `preview`'s order at one instant: day ends before reminders, user, streak, then the
    /// streak's own.
    private static func less(
        _ a: Key, _ b: Key, _ batch: NoticeBatch, _ users: UnsafeRawBufferPointer, _ streaks: [String]
    ) -> Bool {
        if a.atRisk != b.atRisk { return b.atRisk }
        if a.user != b.user { return a.user < b.user }
        let (x, y) = (batch.items[Int(a.slot)], batch.items[Int(b.slot)])
        let (u, v) = (x.user(in: users), y.user(in: users))
        if !u.elementsEqual(v) { return u.lexicographicallyPrecedes(v) }
        if x.streak != y.streak { return streaks[Int(x.streak)] < streaks[Int(y.streak)] }
        return x.order < y.order
    }

    private mutating func pushInstant(_ due: Int64) {
        instants.append(due)
        var i = instants.count - 1
        while i > 0 {
            let parent = (i - 1) / 2
            guard instants[i] < instants[parent] else { break }
            instants.swapAt(i, parent)
            i = parent
        }
    }

    private mutating func popInstant() {
        let last = instants.removeLast()
        guard !instants.isEmpty else { return }
        instants[0] = last
        var i = 0
        let n = instants.count
        while true {
            let (l, r) = (2 * i + 1, 2 * i + 2)
            var least = i
            if l < n && instants[l] < instants[least] { least = l }
            if r < n && instants[r] < instants[least] { least = r }
            guard least != i else { return }
            instants.swapAt(i, least)
            i = least
        }
    }
}
