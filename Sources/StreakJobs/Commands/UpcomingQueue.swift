import StreakCore

/// The notices `preview` has planned but not printed yet, in the order it prints them. Notices
/// fall due at few distinct instants (a reminder time or a day's end in each zone, many thousand
/// users at each), so they wait in a bucket per instant, the instants in a small binary heap: a
/// notice goes in with one dictionary lookup, and a bucket is sorted once, when its instant is
/// taken out. (A heap of every notice cost a third of the printing thread at a million users.)
/// The buckets move 16-byte keys; the entries stay in place in a slab until they are taken out,
/// in blocks: one growing array copied every entry at each doubling (a fifth of the printing
/// thread at a million users).
struct UpcomingQueue {
    /// One notice, with what its line needs besides.
    struct Entry {
        var notice: Notice
        var user: String
        /// The user's language (nil: the configuration's default).
        var language: String?
        var streak: String
        /// The user's zone at the due instant, as an index into the run's zone list.
        var zone: Int32
        /// Its place among its streak's notices (`Notices.upcoming`'s order breaks ties).
        var order: Int32
    }

    /// An entry's place in its instant's bucket: what orders it first, and its slot.
    private struct Key {
        /// The user id's first eight bytes, big-endian: ids are ASCII, so these order as the
        /// ids do.
        var user: UInt64
        var slot: Int32
        /// Day ends come before reminders at one instant (SPEC §3).
        var atRisk: Bool
    }

    static func prefix(_ id: String) -> UInt64 {
        var id = id
        return id.withUTF8 { bytes in
            var p: UInt64 = 0
            for i in 0..<8 { p = p << 8 | UInt64(i < bytes.count ? bytes[i] : 0) }
            return p
        }
    }

    private var blocks: [[Entry]] = []
    private var slotCount = 0
    private var freeSlots: [Int32] = []
    private static let blockShift = 12
    private static let blockMask = (1 << blockShift) - 1
    /// Each due instant's entries, and the instants in a min-heap.
    private var buckets: [Int64: [Key]] = [:]
    private var instants: [Int64] = []
    /// The entries held, and the most held at once.
    private(set) var count = 0
    private(set) var peak = 0

    mutating func push(_ entry: Entry) {
        let slot: Int32
        if let free = freeSlots.popLast() {
            slot = free
            blocks[Int(slot) >> Self.blockShift][Int(slot) & Self.blockMask] = entry
        } else {
            slot = Int32(slotCount)
            if slotCount & Self.blockMask == 0 {
                blocks.append([])
                blocks[blocks.count - 1].reserveCapacity(Self.blockMask + 1)
            }
            blocks[blocks.count - 1].append(entry)
            slotCount += 1
        }
        let key = Key(user: Self.prefix(entry.user), slot: slot, atRisk: entry.notice.kind == .atRisk)
        let due = entry.notice.due.seconds
        if let bucket = buckets.index(forKey: due) {
            buckets.values[bucket].append(key)
        } else {
            buckets[due] = [key]
            pushInstant(due)
        }
        count += 1
        peak = max(peak, count)
    }

    /// Takes out, in order, every entry due before `instant` (nil: every entry).
    mutating func pop(before instant: Instant?) -> [Entry] {
        var out: [Entry] = []
        while let first = instants.first, instant.map({ first < $0.seconds }) ?? true {
            popInstant()
            var keys = buckets.removeValue(forKey: first) ?? []
            keys.sort(by: less)
            out.reserveCapacity(out.count + keys.count)
            for k in keys {
                out.append(entry(k.slot))
                freeSlots.append(k.slot)
            }
            count -= keys.count
        }
        if count == 0 {
            blocks.removeAll(keepingCapacity: true)
            slotCount = 0
            freeSlots.removeAll(keepingCapacity: true)
        }
        return out
    }

    /// `preview`'s order at one instant: day ends before reminders, user, streak, then the
    /// streak's own.
    private func less(_ a: Key, _ b: Key) -> Bool {
        if a.atRisk != b.atRisk { return b.atRisk }
        if a.user != b.user { return a.user < b.user }
        let (x, y) = (entry(a.slot), entry(b.slot))
        if x.user != y.user { return x.user < y.user }
        if x.streak != y.streak { return x.streak < y.streak }
        return x.order < y.order
    }

    private func entry(_ slot: Int32) -> Entry { blocks[Int(slot) >> Self.blockShift][Int(slot) & Self.blockMask] }

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
