import Foundation
import StreakCore
import StreakDelivery
import StreakSQLite
import StreakStore
import StreakTestKit
import Testing

@testable import StreakJobs

/// Issue 3's test of record: for users in every tzdata zone, a simulated week of quarter-hour
/// ticks sends exactly the notifications `preview` announced at its start; with rest days and
/// pauses (SPEC §14) among them.
@Suite(.fastTier) struct WeekAgreementTests {
    @Test(arguments: ["2027-03-10T00:00:00Z", "2027-10-27T00:00:00Z"])
    func aWeekOfTicksSendsWhatPreviewAnnounced(start: String) throws {
        var config = Config()
        var late = StreakSettings()
        late.leewayHours = 3
        // SPEC §14: the leeway streak rests at weekends, next to its leeway.
        late.restDays = RestDays(names: ["sat", "sun"])!
        config.streaks["late"] = late
        let (c, _) = try makeContext(now: start, config: config)
        let t0 = RFC3339.parse(start)!
        let zones = allTzdataZones()
        var lines: [String] = []
        for (n, zone) in zones.enumerated() {
            // "a" at 20:00; "b" at 02:30, which spring-forward gaps skip, with a leeway streak too.
            try c.addUser(id: "a\(n)", tz: zone, remindAt: nil, remind: true)
            try c.addUser(id: "b\(n)", tz: zone, remindAt: "02:30", remind: true)
            let z = try c.zones.stored(zone)
            let today = z.date(of: t0)
            for k in 1...7 {
                let noon = z.instant(of: today - k, secondsIntoDay: 12 * 3600)
                lines.append(#"{"user":"a\#(n)","at":"\#(noon)","tz":"\#(zone)"}"#)
                lines.append(#"{"user":"b\#(n)","at":"\#(noon)","tz":"\#(zone)"}"#)
                lines.append(#"{"user":"b\#(n)","streak":"late","at":"\#(noon)","tz":"\#(zone)"}"#)
            }
        }
        let file = TestFiles.path("week") + ".jsonl"
        try lines.joined(separator: "\n").write(toFile: file, atomically: true, encoding: .utf8)
        try at(c, start).importCheckins(path: file, format: nil, skipInvalid: false)

        // Every fifth user pauses their daily streak over two days of the week (SPEC §14).
        for n in stride(from: 0, to: zones.count, by: 5) {
            let z = try c.zones.stored(zones[n])
            let first = z.date(of: t0) + 1 + n % 4
            _ = try c.pause(
                user: "a\(n)", streak: nil, all: false, from: first.description, until: (first + 1).description,
                author: "test")
        }
        try c.tick(delivery: Delivery(sinks: []))
        let end = t0 + 7 * Instant.day
        let announced = try c.upcoming(through: end)
        let sink = MemorySink()
        var t = t0 + 900
        while t <= end {
            try at(c, t.description).tick(delivery: Delivery(sinks: [sink]))
            t = t + 900
        }
        func row(_ n: StreakDelivery.Notification) -> String {
            "\(n.key) \(n.due) \(n.localDue) \(n.timezone) \(n.streakLength)"
        }
        let sent = sink.received.map(row)
        #expect(Set(sent).count == sent.count, "a key was sent twice")
        #expect(sent.sorted() == announced.map(row).sorted())
        #expect(announced.count > 4 * zones.count)
        for kind in ["at_risk", "freeze_used", "streak_broken"] {
            #expect(announced.contains { $0.kind.rawValue == kind })
        }
    }
}
