import Foundation
import StreakCore
import StreakDelivery
import StreakStore
import StreakTestKit
import Testing

@testable import StreakJobs

/// SPEC §14 through `tick`: a repair's `streak_repaired` is sent once, in the user's language;
/// no reminder is sent during a pause, and the first after it counts the length before it.
@Suite(.fastTier) struct ForgivenessTickTests {
    func checkins(_ c: Context, _ user: String, days: ClosedRange<Int>) throws {
        for d in days {
            try at(c, "2026-11-21T10:00:00Z").checkin(
                user: user, streak: "daily", at: "2026-11-\(d)T10:00:00Z", tz: nil, eventID: nil, meta: [])
        }
    }

    @Test func aRepairIsAnnouncedOnce() throws {
        var config = Config()
        config.freeze.initial = 0
        let (c, _) = try makeContext(now: "2026-11-10T10:00:00Z", config: config)
        try c.addUser(id: "alice", tz: "Europe/Berlin", remindAt: nil, remind: true)
        try c.addUser(id: "li", tz: "Asia/Shanghai", remindAt: nil, remind: true, language: "zh-Hans")
        try checkins(c, "alice", days: 12...19)
        try checkins(c, "li", days: 12...19)
        let sink = MemorySink()
        try at(c, "2026-11-21T00:30:00Z").tick(delivery: Delivery(sinks: [sink]))
        #expect(sink.received.map(\.key).sorted() == ["streak_broken/alice/daily/2026-11-20", "streak_broken/li/daily/2026-11-20"])
        let a = try at(c, "2026-11-21T09:00:00Z").repair(user: "alice", streak: nil, author: "ann")
        #expect(a.date == day("2026-11-20") && a.length == 8 && a.repairsLeft == 0)
        _ = try at(c, "2026-11-21T09:00:00Z").repair(user: "li", streak: nil, author: "ann")
        for t in ["09:15", "09:30"] { try at(c, "2026-11-21T\(t):00Z").tick(delivery: Delivery(sinks: [sink])) }
        let repaired = sink.received.filter { $0.kind == .streakRepaired }
        #expect(repaired.map(\.key).sorted() == ["streak_repaired/alice/daily/2026-11-20", "streak_repaired/li/daily/2026-11-20"])
        let en = try #require(repaired.first { $0.user == "alice" })
        #expect(en.streakLength == 8 && en.due.description == "2026-11-21T09:00:00Z")
        #expect(en.message == "Your streak is mended: the break on 2026-11-20 is repaired and your streak is back at 8 days.")
        let zh = try #require(repaired.first { $0.user == "li" })
        #expect(zh.message == "你在 2026-11-20 中断的连续打卡已修复，现在连续 8 天。")
        #expect(zh.title == "连续打卡已修复")
    }

    @Test func noReminderDuringAPause() throws {
        let (c, _) = try makeContext(now: "2026-11-10T10:00:00Z")
        try c.addUser(id: "alice", tz: "Europe/Berlin", remindAt: nil, remind: true)
        try checkins(c, "alice", days: 14...20)
        _ = try at(c, "2026-11-21T10:00:00Z").pause(
            user: "alice", streak: nil, all: true, from: "2026-11-21", until: "2026-11-23", author: "ann")
        let sink = MemorySink()
        var t = at("2026-11-21T10:00:00Z")
        while t <= at("2026-11-24T22:00:00Z") {
            try at(c, t.description).tick(delivery: Delivery(sinks: [sink]))
            t = t + 3 * 3600
        }
        let reminders = sink.received.filter { $0.kind == .atRisk }
        #expect(reminders.map(\.key) == ["at_risk/alice/daily/2026-11-24"])
        #expect(reminders.first?.streakLength == 7)
    }
}
