import Foundation
import StreakDelivery
import StreakSQLite
import StreakStore
import StreakTestKit
import Testing

@testable import StreakJobs

/// Travel through the real commands and store: `user set --tz` records the
/// zone change, history never moves, and the streak survives the date line.
@Suite(.fastTier) struct TravelTests {
    func status(_ c: Context, _ captured: Captured, _ user: String) throws -> [String: Any] {
        try c.status(user: user, streak: "daily")
        return try JSONSerialization.jsonObject(with: Data(captured.out.last!.utf8)) as! [String: Any]
    }

    func checkin(_ c: Context, _ user: String, _ instant: String) throws {
        try at(c, instant).checkin(user: user, streak: "daily", at: nil, tz: nil, eventID: nil, meta: [])
    }

    @Test func eastOverTheDateLineBridgesTheSkippedDate() throws {
        let (c, captured) = try makeContext(now: "2026-11-01T00:00:00Z")
        try c.addUser(id: "ann", tz: "Pacific/Pago_Pago", remindAt: nil, remind: true)
        for day in 10...13 { try checkin(c, "ann", "2026-11-\(day)T23:00:00Z") }  // noon, UTC-11
        // 23:30 on Nov 13 in Pago Pago is 00:30 on Nov 15 in Kiritimati (UTC+14): Nov 14 is skipped.
        try at(c, "2026-11-14T10:30:00Z").setUser(id: "ann", tz: "Pacific/Kiritimati", remindAt: nil, remind: nil)
        try checkin(c, "ann", "2026-11-14T22:00:00Z")  // noon Nov 15 in Kiritimati
        let s = try status(at(c, "2026-11-15T23:00:00Z"), captured, "ann")
        #expect(s["today"] as? String == "2026-11-16")
        #expect(s["current"] as? Int == 5)
        #expect(s["freezes"] as? Int == 1, "the skipped date takes no freeze")
        try at(c, "2026-11-15T23:00:00Z").calendar(user: "ann", streak: "daily", weeks: 2)
        #expect(captured.out.contains { $0.contains(#""date":"2026-11-14","state":"bridged""#) })
    }

    @Test func westOverTheDateLineNeverLivesADateTwice() throws {
        let (c, captured) = try makeContext(now: "2026-11-01T00:00:00Z")
        try c.addUser(id: "kei", tz: "Asia/Tokyo", remindAt: nil, remind: true)
        for day in 10...13 { try checkin(c, "kei", "2026-11-\(day)T03:00:00Z") }  // noon JST
        try checkin(c, "kei", "2026-11-13T23:00:00Z")  // 08:00 Nov 14 in Tokyo
        // Lands in Honolulu at 20:00 on Nov 13, local time: Nov 13 has ended already.
        try at(c, "2026-11-14T06:00:00Z").setUser(id: "kei", tz: "Pacific/Honolulu", remindAt: nil, remind: nil)
        let landed = try status(at(c, "2026-11-14T06:00:00Z"), captured, "kei")
        #expect(landed["today"] as? String == "2026-11-14")
        #expect(landed["current"] as? Int == 5)
        try checkin(c, "kei", "2026-11-15T22:00:00Z")  // noon Nov 15 in Honolulu
        let s = try status(at(c, "2026-11-15T23:00:00Z"), captured, "kei")
        #expect(s["current"] as? Int == 6)
        #expect(s["freezes"] as? Int == 1)
        #expect(s["last_qualifying_date"] as? String == "2026-11-15")
    }

    @Test func removingAUserDeletesTheirHistory() throws {
        let (c, _) = try makeContext(now: "2026-11-21T12:00:00Z")
        try c.addUser(id: "zoe", tz: "Europe/Paris", remindAt: nil, remind: true)
        try c.checkin(user: "zoe", streak: "daily", at: nil, tz: nil, eventID: "e1", meta: [])
        try c.removeUser(id: "zoe")
        try c.addUser(id: "zoe", tz: "Europe/Paris", remindAt: nil, remind: true)
        let total = try c.store.read { r in try r.checkins(of: "zoe", streak: "daily").count }
        #expect(total == 0)
    }
}
