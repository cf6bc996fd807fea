import StreakCore
import StreakTestKit
import Testing

@testable import StreakJobs

/// The queue hands out `preview`'s order (due instant, day ends before reminders, user, streak,
/// then the streak's own order), whatever order the notices came in and wherever the frontier
/// stops: with many at one instant, and user ids that share their first eight bytes or are
/// shorter than eight.
@Suite(.fastTier) struct UpcomingQueueTests {
    @Test func itHandsOutPreviewsOrder() {
        var r = SplitMix64(state: 7)
        let users = ["u1", "u10", "u2", "u0000001", "u00000010", "u00000011", "alice", "alice.b", "A", "a", "u0000001x"]
        var queue = UpcomingQueue()
        var names = NoticeNames()
        func out(_ batches: [NoticeBatch]) -> [UpcomingQueue.Entry] { UpcomingBatch(parts: batches, names: names).entries }
        var all: [UpcomingQueue.Entry] = []
        var got: [UpcomingQueue.Entry] = []
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
                let item = QueuedNotice(
                    notice: e.notice, streak: names.number(streak: e.streak), language: -1, zone: 0, order: Int(e.order))
                var user = e.user
                user.withUTF8 { queue.push(item, user: UnsafeRawBufferPointer($0)) }
            }
            // Nothing later can come before this round's first instant.
            got += out(queue.pop(before: base + Int64(round * 900), streaks: names.streaks))
        }
        got += out(queue.pop(before: nil, streaks: names.streaks))
        func less(_ a: UpcomingQueue.Entry, _ b: UpcomingQueue.Entry) -> Bool {
            if a.notice.due != b.notice.due { return a.notice.due < b.notice.due }
            if (a.notice.kind == .atRisk) != (b.notice.kind == .atRisk) { return b.notice.kind == .atRisk }
            return (a.user, a.streak, a.order) < (b.user, b.streak, b.order)
        }
        let key = { (e: UpcomingQueue.Entry) in "\(e.notice.due) \(e.notice.kind) \(e.user) \(e.streak) \(e.order)" }
        #expect(got.count == all.count && queue.count == 0)
        let expected = all.sorted(by: less).map(key)
        let keys = got.map(key)
        let first = keys.indices.first { $0 >= expected.count || keys[$0] != expected[$0] }
        #expect(first == nil, "from \(first ?? 0): \(keys.dropFirst(first ?? 0).prefix(4)) \(expected.dropFirst(first ?? 0).prefix(4))")
    }
}
