import StreakCore
import StreakTestKit
import Testing

@testable import StreakJobs

/// The queue hands out `preview`'s order (due instant, day ends before reminders, user, streak,
/// then the streak's own order), whatever order the notices came in and wherever the frontier
/// stops: with many at one instant, and user ids that share their first eight bytes or are
/// shorter than eight.
@Suite struct UpcomingQueueTests {
    @Test func itHandsOutPreviewsOrder() {
        var r = SplitMix64(state: 7)
        let users = ["u1", "u10", "u2", "u0000001", "u00000010", "u00000011", "alice", "alice.b", "A", "a", "u0000001x"]
        var queue = UpcomingQueue()
        var all: [UpcomingQueue.Entry] = []
        var out: [UpcomingQueue.Entry] = []
        let base = Instant(seconds: 1_795_000_000)
        for round in 0..<50 {
            for _ in 0..<r.int(0...200) {
                let due = base + Int64(round * 900 + 900 * r.int(0...6))
                let kind = NotificationKind.allCases[r.int(0...2)]
                let e = UpcomingQueue.Entry(
                    notice: Notice(kind: kind, date: LocalDate(day: 20_000), due: due, length: 1, freezes: 0),
                    user: users[r.int(0...users.count - 1)], language: nil, streak: ["daily", "a_1"][r.int(0...1)], zone: 0,
                    order: Int32(all.count))  // a streak's notices each have a place of their own
                all.append(e)
                queue.push(e)
            }
            // Nothing later can come before this round's first instant.
            out += queue.pop(before: base + Int64(round * 900))
        }
        out += queue.pop(before: nil)
        func less(_ a: UpcomingQueue.Entry, _ b: UpcomingQueue.Entry) -> Bool {
            if a.notice.due != b.notice.due { return a.notice.due < b.notice.due }
            if (a.notice.kind == .atRisk) != (b.notice.kind == .atRisk) { return b.notice.kind == .atRisk }
            return (a.user, a.streak, a.order) < (b.user, b.streak, b.order)
        }
        let key = { (e: UpcomingQueue.Entry) in "\(e.notice.due) \(e.notice.kind) \(e.user) \(e.streak) \(e.order)" }
        #expect(out.count == all.count && queue.count == 0)
        let expected = all.sorted(by: less).map(key)
        let got = out.map(key)
        let first = got.indices.first { $0 >= expected.count || got[$0] != expected[$0] }
        #expect(first == nil, "from \(first ?? 0): \(out.map(key).dropFirst(first ?? 0).prefix(4)) \(expected.dropFirst(first ?? 0).prefix(4))")
    }
}
