import StreakCore

/// The notices `preview` has planned but not printed yet, in the order it prints them: a binary
/// heap, so a notice planned early and due late waits here while earlier ones go out. The heap
/// moves 24-byte keys; the entries stay in place in a slab until they are taken out.
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

    /// An entry's place in the heap: what orders it first, and its slot.
    private struct Key {
        var due: Int64
        /// The user id's first eight bytes, big-endian: ids are ASCII, so these order as the
        /// ids do, and many notices fall due at one instant.
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

    private var slots: [Entry] = []
    private var freeSlots: [Int32] = []
    private var heap: [Key] = []
    /// The most entries held at once.
    private(set) var peak = 0

    var count: Int { heap.count }

    mutating func push(_ entry: Entry) {
        let slot: Int32
        if let free = freeSlots.popLast() {
            slot = free
            slots[Int(slot)] = entry
        } else {
            slot = Int32(slots.count)
            slots.append(entry)
        }
        heap.append(
            Key(
                due: entry.notice.due.seconds, user: Self.prefix(entry.user), slot: slot,
                atRisk: entry.notice.kind == .atRisk))
        var i = heap.count - 1
        while i > 0 {
            let parent = (i - 1) / 2
            guard less(heap[i], heap[parent]) else { break }
            heap.swapAt(i, parent)
            i = parent
        }
        peak = max(peak, heap.count)
    }

    /// Takes out, in order, every entry due before `instant` (nil: every entry).
    mutating func pop(before instant: Instant?) -> [Entry] {
        var out: [Entry] = []
        while let first = heap.first, instant.map({ first.due < $0.seconds }) ?? true {
            out.append(slots[Int(first.slot)])
            freeSlots.append(first.slot)
            let last = heap.removeLast()
            guard !heap.isEmpty else { break }
            heap[0] = last
            siftDown()
        }
        if heap.isEmpty {
            slots.removeAll(keepingCapacity: true)
            freeSlots.removeAll(keepingCapacity: true)
        }
        return out
    }

    /// `preview`'s order: due instant, day ends before reminders, user, streak, then the streak's own.
    private func less(_ a: Key, _ b: Key) -> Bool {
        if a.due != b.due { return a.due < b.due }
        if a.atRisk != b.atRisk { return b.atRisk }
        if a.user != b.user { return a.user < b.user }
        let (x, y) = (slots[Int(a.slot)], slots[Int(b.slot)])
        if x.user != y.user { return x.user < y.user }
        if x.streak != y.streak { return x.streak < y.streak }
        return x.order < y.order
    }

    private mutating func siftDown() {
        var i = 0
        let n = heap.count
        while true {
            let (l, r) = (2 * i + 1, 2 * i + 2)
            var least = i
            if l < n && less(heap[l], heap[least]) { least = l }
            if r < n && less(heap[r], heap[least]) { least = r }
            guard least != i else { return }
            heap.swapAt(i, least)
            i = least
        }
    }
}
