import StreakCore

/// The notices `preview` has planned but not printed yet, in the order it prints them: a binary
/// heap, so a notice planned early and due late waits here while earlier ones go out.
struct UpcomingQueue {
    /// One notice, with what its line needs besides.
    struct Entry {
        var notice: Notice
        var user: String
        var streak: String
        /// The user's zone at the due instant, as an index into the run's zone list.
        var zone: Int32
        /// Its place among its streak's notices (`Notices.upcoming`'s order breaks ties).
        var order: Int32

        /// `preview`'s order: due instant, day ends before reminders (SPEC §3), user, streak.
        static func < (a: Entry, b: Entry) -> Bool {
            if a.notice.due != b.notice.due { return a.notice.due < b.notice.due }
            let (ar, br) = (a.notice.kind == .atRisk, b.notice.kind == .atRisk)
            if ar != br { return br }
            if a.user != b.user { return a.user < b.user }
            if a.streak != b.streak { return a.streak < b.streak }
            return a.order < b.order
        }
    }

    private var heap: [Entry] = []
    /// The most entries held at once.
    private(set) var peak = 0

    var count: Int { heap.count }

    mutating func push(_ entry: Entry) {
        heap.append(entry)
        var i = heap.count - 1
        while i > 0 {
            let parent = (i - 1) / 2
            guard heap[i] < heap[parent] else { break }
            heap.swapAt(i, parent)
            i = parent
        }
        peak = max(peak, heap.count)
    }

    /// Takes out, in order, every entry due before `instant` (nil: every entry).
    mutating func pop(before instant: Instant?) -> [Entry] {
        var out: [Entry] = []
        while let first = heap.first, instant.map({ first.notice.due < $0 }) ?? true {
            out.append(first)
            let last = heap.removeLast()
            guard !heap.isEmpty else { break }
            heap[0] = last
            siftDown()
        }
        return out
    }

    private mutating func siftDown() {
        var i = 0
        let n = heap.count
        while true {
            let (l, r) = (2 * i + 1, 2 * i + 2)
            var least = i
            if l < n && heap[l] < heap[least] { least = l }
            if r < n && heap[r] < heap[least] { least = r }
            guard least != i else { return }
            heap.swapAt(i, least)
            i = least
        }
    }
}
