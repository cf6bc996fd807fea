import StreakCore
import StreakTestKit
import Testing

@testable import StreakJobs

/// `preview` writes its lines straight into bytes (`PreviewLines`): they are exactly what
/// `Notification.line` and `Notification.json.text` print, for every kind, in every tzdata zone
/// (offsets behind UTC, of quarter and half hours, across DST changes), near the epoch and far
/// from it, with goals, freezes and streak ids that change the message.
@Suite(.fastTier) struct PreviewLinesTests {
    @Test func linesAreTheNotificationsOwn() throws {
        let (c, _) = try makeContext(now: "2026-11-21T19:00:00Z")
        let zones = try allTzdataZones().map { try c.zones.stored($0) }
        var r = SplitMix64(state: 20)
        let users = ["u1", "alice.b@example.org", "A-9_x", String(repeating: "z", count: 128)]
        let streaks = ["daily", "workout", "a_1"]
        for i in 0..<20_000 {
            let zone = zones[i % zones.count]
            let due = Instant(seconds: Int64(r.int(-86_400...4_102_444_800)))
            let kinds: [NotificationKind] = [.atRisk, .freezeUsed, .streakBroken, .freezeRefilled]
            let kind = kinds[r.int(0...kinds.count - 1)]
            let goal = r.chance(80) ? 1 : r.int(2...5)
            let notice = Notice(
                kind: kind, date: zone.date(of: due) - r.int(0...1), due: due, length: r.int(0...1000),
                count: r.int(0...goal), goal: goal, freezes: r.int(0...3))
            let language = r.chance(70) ? nil : "zh-Hans"
            let entry = UpcomingQueue.Entry(
                notice: notice, user: users[r.int(0...users.count - 1)], language: language,
                streak: streaks[r.int(0...streaks.count - 1)], zone: 0, order: 0)
            let n = c.notification(notice, user: entry.user, language: language, streak: entry.streak, zone: zone)
            let message = c.config.messages.render(notice, streak: entry.streak, tag: language).text
            for json in [false, true] {
                var lines = PreviewLines()
                lines.append(entry, zone: zone, message: message, json: json)
                let expected = (json ? n.json.text : n.line) + "\n"
                #expect(String(decoding: lines.bytes, as: UTF8.self) == expected)
                if String(decoding: lines.bytes, as: UTF8.self) != expected { return }
            }
        }
    }

    @Test func jsonEscapesAsJSONDoes() {
        let text = "a\"b\\c\nd\re\tf\u{1}g\u{1f}h/é€😀"
        var lines = PreviewLines()
        lines.string(text)
        #expect(String(decoding: lines.bytes, as: UTF8.self) == JSON.string(text).text)
    }
}

extension SplitMix64 {
    mutating func int(_ range: ClosedRange<Int>) -> Int {
        range.lowerBound + Int(next() % UInt64(range.count))
    }
    mutating func chance(_ percent: Int) -> Bool { int(0...99) < percent }
}
