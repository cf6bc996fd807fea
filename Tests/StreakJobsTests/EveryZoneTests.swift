import Foundation
import StreakCore
import StreakDelivery
import StreakSQLite
import StreakStore
import StreakTestKit
import Testing

@testable import StreakJobs

/// `status` agrees with the rules for a user in every zone of the system
/// tzdata, checked against Foundation's Calendar as an independent oracle.
@Suite(.fastTier) struct EveryZoneTests {
    /// Instants chosen so that histories cross 2027's DST changes.
    @Test(arguments: ["2026-11-21T12:00:00Z", "2027-03-29T06:00:00Z", "2027-11-01T23:30:00Z"])
    func sevenDaysEndingYesterdayInEveryZone(now: String) throws {
        let zones = allTzdataZones()
        #expect(zones.count > 400)
        let (context, captured) = try makeContext(now: now)
        let nowDate = Date(timeIntervalSince1970: TimeInterval(RFC3339.parse(now)!.seconds))
        var lines: [String] = []
        for (n, zone) in zones.enumerated() {
            let id = "u\(n)"
            var calendar = Calendar(identifier: .gregorian)
            calendar.timeZone = TimeZone(identifier: zone)!
            let today = calendar.startOfDay(for: nowDate)
            for k in 1...7 {
                let day = calendar.date(byAdding: .day, value: -k, to: today)!
                let noon = calendar.date(bySettingHour: 12, minute: 0, second: 0, of: day)!
                lines.append(#"{"user":"\#(id)","at":"\#(Instant(seconds: Int64(noon.timeIntervalSince1970)))"}"#)
            }
            try context.addUser(id: id, tz: zone, remindAt: nil, remind: true)
        }
        let file = TestFiles.path("every-zone") + ".jsonl"
        try lines.joined(separator: "\n").write(toFile: file, atomically: true, encoding: .utf8)
        try context.importCheckins(path: file, format: nil, skipInvalid: false)

        for (n, zone) in zones.enumerated() {
            let before = captured.out.count
            try context.status(user: "u\(n)", streak: "daily")
            let status = try JSONSerialization.jsonObject(with: Data(captured.out[before].utf8)) as! [String: Any]
            var calendar = Calendar(identifier: .gregorian)
            calendar.timeZone = TimeZone(identifier: zone)!
            // (DateFormatter reads "MST" as an abbreviation with DST; Calendar keeps tzdata's fixed -07:00.)
            func day(_ d: Date) -> String {
                let c = calendar.dateComponents([.year, .month, .day], from: d)
                return LocalDate(year: c.year!, month: c.month!, day: c.day!)!.description
            }
            let yesterday = calendar.date(byAdding: .day, value: -1, to: calendar.startOfDay(for: nowDate))!
            #expect(status["today"] as? String == day(nowDate), "\(zone)")
            #expect(status["current"] as? Int == 7, "\(zone)")
            #expect(status["longest"] as? Int == 7, "\(zone)")
            #expect(status["total_checkins"] as? Int == 7, "\(zone)")
            #expect(status["last_qualifying_date"] as? String == day(yesterday), "\(zone)")
            // 7 is in reminders.days: today at 20:00 if that is still ahead, else
            // tomorrow (today's end uses the one freeze and keeps the streak at 7).
            let eight = calendar.date(bySettingHour: 20, minute: 0, second: 0, of: nowDate)!
            let due = eight > nowDate ? eight : calendar.date(byAdding: .day, value: 1, to: eight)!
            let reminder = status["next_reminder"] as? [String: Any]
            #expect(
                reminder?["due"] as? String == Instant(seconds: Int64(due.timeIntervalSince1970)).description, "\(zone)"
            )
            #expect(reminder?["streak_length"] as? Int == 7, "\(zone)")
        }
    }
}
