import Foundation
import StreakCore
import StreakDelivery
import StreakStore
import StreakTestKit
import Testing

@testable import StreakJobs

/// Badges and levels through the store and `tick` (SPEC §9, issue 19), over a real SQLite file.
@Suite(.fastTier) struct AchievementTickTests {
    func checkin(_ c: Context, _ user: String, _ instant: String, now: String? = nil, meta: [String] = []) throws {
        try at(c, now ?? instant).checkin(user: user, streak: "daily", at: instant, tz: nil, eventID: nil, meta: meta)
    }

    func ledger(_ c: Context, _ keys: [String]) throws -> [String: LedgerState] {
        try c.store.read { try $0.ledgerStates(keys: keys) }
    }

    func jsonLines(_ captured: Captured) -> [[String: Any]] {
        captured.out.flatMap { $0.split(separator: "\n") }.compactMap {
            try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
        }
    }

    /// The lines of `badges -o json`.
    func badgeLines(_ captured: Captured) -> [[String: Any]] { jsonLines(captured).filter { $0["category"] != nil } }

    /// A 7-day streak whose seventh check-in comes after local midnight, within the leeway: it
    /// counts for the day before, and unlocks `streak_7` at that check-in, in every zone.
    @Test(arguments: [
        ("Asia/Tokyo", "+09:00"), ("America/New_York", "-05:00"), ("Asia/Kathmandu", "+05:45"),
        ("Pacific/Chatham", "+13:45"),
    ])
    func sevenDaysCompletedWithinLeewayUnlockAtThatCheckin(zone: String, offset: String) throws {
        var config = Config()
        var daily = StreakSettings()
        daily.leewayHours = 3
        config.streaks["daily"] = daily
        let (c, out) = try makeContext(now: "2026-11-10T00:00:00Z", config: config)
        try at(c, "2026-11-10T00:00:00Z").addUser(id: "kai", tz: zone, remindAt: nil, remind: false)
        for d in 14...19 { try checkin(c, "kai", "2026-11-\(d)T12:00:00\(offset)") }
        let seventh = "2026-11-21T01:30:00\(offset)"  // counts for the 20th
        try checkin(c, "kai", seventh)
        let due = RFC3339.parse(seventh)!
        let sink = MemorySink()
        let minute = Instant(seconds: due.seconds + 60)
        try at(c, minute.description).tick(delivery: Delivery(sinks: [sink]))
        #expect(sink.received.map(\.key) == ["badge_unlocked/kai/streak_7"])
        let n = try #require(sink.received.first)
        #expect(n.due == due && n.badge == "streak_7" && n.level == nil && n.streak == "")
        #expect(n.localDue == seventh && n.timezone == zone && n.localDate.description == "2026-11-21")
        #expect(n.message == "You unlocked the “One Week Strong” badge!" && n.title == "Badge unlocked")
        #expect(n.streakLength == 7)
        // streak_3 was reached days ago: recorded, never sent.
        #expect(
            try ledger(c, ["badge_unlocked/kai/streak_3", "badge_unlocked/kai/streak_7"])
                == ["badge_unlocked/kai/streak_3": .expired, "badge_unlocked/kai/streak_7": .sent])
        // badges -o json: the unlock instant is the seventh check-in's.
        try at(c, minute.description).badges(user: "kai")
        let seven = badgeLines(out).first { $0["badge"] as? String == "streak_7" }
        #expect(seven?["unlocked_at"] as? String == due.description)
        #expect(seven?["current"] as? Int == 7 && seven?["progress"] as? Int == 100)
    }

    /// Check-ins tagged with `--meta` and through an import count for the tagged badges; the
    /// same check-ins without the tag do not.
    @Test func taggedCheckinsCountThroughImportAndMeta() throws {
        let (c, out) = try makeContext(now: "2026-11-21T12:00:00Z")
        try c.addUser(id: "ann", tz: "Europe/Berlin", remindAt: nil, remind: false)
        try checkin(c, "ann", "2026-11-21T09:00:00Z", now: "2026-11-21T12:00:00Z", meta: ["kind=social"])
        try checkin(c, "ann", "2026-11-21T09:30:00Z", now: "2026-11-21T12:00:00Z", meta: ["kind=knowledge", "pages=3"])
        try checkin(c, "ann", "2026-11-21T10:00:00Z", now: "2026-11-21T12:00:00Z")
        let dir = try ScratchDir()
        let lines =
            (1...4).map {
                #"{"user":"ann","at":"2026-11-1\#($0)T08:00:00Z","id":"s\#($0)","meta":{"kind":"social","with":"bo"}}"#
            } + [#"{"user":"ann","at":"2026-11-17T08:00:00Z","id":"k1","meta":{"kind":"knowledge"}}"#]
        let file = try dir.write("tagged.jsonl", lines.joined(separator: "\n"))
        try c.importCheckins(path: file, format: nil, skipInvalid: false)
        try c.badges(user: "ann")
        let byBadge = Dictionary(
            uniqueKeysWithValues: badgeLines(out).compactMap { o in
                (o["badge"] as? String).map { ($0, o) }
            })
        #expect(byBadge["social_1"]?["current"] as? Int == 5)
        #expect(byBadge["social_5"]?["progress"] as? Int == 100)
        #expect(byBadge["social_5"]?["unlocked_at"] as? String == "2026-11-21T09:00:00Z")
        #expect(byBadge["knowledge_1"]?["current"] as? Int == 2)
        #expect(byBadge["knowledge_10"]?["progress"] as? Int == 20)
        #expect(byBadge["checkins_10"]?["current"] as? Int == 8)
        #expect(
            Set(badgeLines(out).map { $0.keys.sorted() }.map { $0.joined(separator: ",") }) == [
                "badge,category,current,description,progress,title,unlocked_at,user,value"
            ])
    }

    /// Check-ins older than import.backfill_days when stored count for no badge and no XP.
    @Test func backfilledCheckinsCountForNothing() throws {
        let (c, out) = try makeContext(now: "2026-11-21T12:00:00Z")
        try c.addUser(id: "bea", tz: "UTC", remindAt: nil, remind: false)
        let dir = try ScratchDir()
        let old = (1...20).map {
            #"{"user":"bea","at":"2026-0\#($0 % 2 + 1)-\#(10 + $0 / 2)T08:00:00Z","id":"o\#($0)","meta":{"kind":"social"}}"#
        }
        let file = try dir.write("old.jsonl", old.joined(separator: "\n"))
        try c.importCheckins(path: file, format: nil, skipInvalid: false)
        try c.badges(user: "bea")
        #expect(badgeLines(out).count == 12)
        #expect(badgeLines(out).allSatisfy { $0["current"] as? Int == 0 && $0["unlocked_at"] is NSNull })
        let sink = MemorySink()
        let r = try c.tick(delivery: Delivery(sinks: [sink]))
        #expect(r.sent == 0 && r.expired == 0 && sink.received.isEmpty)
        try c.status(user: "bea", streak: nil)
        #expect(jsonLines(out).last?["xp"] as? Int == 0 && jsonLines(out).last?["level"] as? Int == 1)
    }

    /// A year of history imported at once: every badge and level it reached is recorded expired,
    /// none is sent; two thresholds crossed in one import make one `level_up` each.
    @Test func aYearImportedRecordsEveryUnlockExpiredAndSendsNone() throws {
        var config = Config()
        config.backfillDays = 400
        let (c, out) = try makeContext(now: "2026-11-21T12:00:00Z", config: config)
        try c.addUser(id: "cy", tz: "America/Sao_Paulo", remindAt: nil, remind: false)
        var day = LocalDate("2025-11-21")!
        var lines: [String] = []
        while day < LocalDate("2026-11-21")! {
            lines.append(#"{"user":"cy","at":"\#(day)T15:00:00Z","id":"d\#(day)"}"#)
            day = day + 1
        }
        let dir = try ScratchDir()
        let file = try dir.write("year.jsonl", lines.joined(separator: "\n"))
        try c.importCheckins(path: file, format: nil, skipInvalid: false)
        let sink = MemorySink()
        let r = try c.tick(delivery: Delivery(sinks: [sink]))
        #expect(sink.received.isEmpty && r.sent == 0)
        let recorded = jsonLines(out).filter {
            ($0["kind"] as? String)?.hasPrefix("badge") == true || $0["kind"] as? String == "level_up"
        }
        #expect(recorded.allSatisfy { $0["state"] as? String == "expired" })
        // 365 days × 10 XP + streak_3/7/30 and checkins_10/50/100 (6 × 50): levels 2 and 3.
        #expect(
            Set(recorded.compactMap { $0["badge"] as? String }) == [
                "streak_3", "streak_7", "streak_30", "checkins_10", "checkins_50", "checkins_100",
            ])
        #expect(recorded.compactMap { $0["level"] as? Int } == [2, 3])
        #expect(recorded.allSatisfy { $0["streak"] is NSNull })
        // Never again, and no day-after reminders about them.
        let again = try at(c, "2026-11-21T12:15:00Z").tick(delivery: Delivery(sinks: [sink]))
        #expect(again.sent + again.expired == 0 && sink.received.isEmpty)
    }

    /// Two thresholds crossed by one import of recent check-ins: one `level_up` per level, each
    /// fresh or expired by its own instant.
    @Test func twoLevelsInOneImportEachByItsOwnInstant() throws {
        var config = Config()
        config.achievements.badges = []
        config.achievements.xpPerDay = 100
        config.achievements.levelThresholds = [300, 1100, 5000, 9000]
        let (c, out) = try makeContext(now: "2026-11-21T12:00:00Z", config: config)
        try c.addUser(id: "dee", tz: "UTC", remindAt: nil, remind: false)
        // Eleven days: the 3rd (level 2) days ago, the 11th (level 3) an hour ago.
        let lines =
            (11...20).map { #"{"user":"dee","at":"2026-11-\#($0)T11:00:00Z"}"# }
            + [#"{"user":"dee","at":"2026-11-21T11:00:00Z"}"#]
        let dir = try ScratchDir()
        let file = try dir.write("ten.jsonl", lines.joined(separator: "\n"))
        try c.importCheckins(path: file, format: nil, skipInvalid: false)
        let sink = MemorySink()
        try c.tick(delivery: Delivery(sinks: [sink]))
        #expect(sink.received.map(\.key) == ["level_up/dee/3"])
        #expect(sink.received.first?.due.description == "2026-11-21T11:00:00Z")
        #expect(sink.received.first?.message == "You reached level 3!")
        let levels = jsonLines(out).filter { $0["kind"] as? String == "level_up" }
        #expect(levels.map { $0["level"] as? Int } == [2, 3])
        #expect(levels.map { $0["state"] as? String } == ["expired", "sent"])
        #expect(levels.map { $0["due"] as? String } == ["2026-11-13T11:00:00Z", "2026-11-21T11:00:00Z"])
    }

    /// A live check-in's badge goes out with the next tick, once; later ticks and check-ins
    /// never send it again.
    @Test func aLiveBadgeIsSentOnceByTheNextTick() throws {
        let (c, _) = try makeContext(now: "2026-11-21T08:00:00Z")
        try c.addUser(id: "eve", tz: "Europe/Paris", remindAt: nil, remind: false)
        let sink = MemorySink()
        try checkin(c, "eve", "2026-11-21T08:00:00Z", meta: ["kind=knowledge"])
        #expect(sink.received.isEmpty)
        try at(c, "2026-11-21T08:15:00Z").tick(delivery: Delivery(sinks: [sink]))
        #expect(sink.received.map(\.key) == ["badge_unlocked/eve/knowledge_1"])
        try checkin(c, "eve", "2026-11-21T09:00:00Z", meta: ["kind=knowledge"])
        for t in ["09:15", "09:30", "12:00"] {
            try at(c, "2026-11-21T\(t):00Z").tick(delivery: Delivery(sinks: [sink]))
        }
        #expect(sink.received.count == 1)
        // status shows the XP: one qualifying date and one badge.
        let (s, out) = try makeContext(now: "2026-11-21T12:00:00Z", store: c.store)
        try s.status(user: "eve", streak: nil)
        let json = try #require(jsonLines(out).last)
        #expect(json["xp"] as? Int == 60 && json["level"] as? Int == 1 && json["next_level_xp"] as? Int == 500)
    }

    /// The messages are in the user's language.
    @Test func theBadgeSpeaksTheUsersLanguage() throws {
        let (c, _) = try makeContext(now: "2026-11-21T08:00:00Z")
        try c.addUser(id: "lin", tz: "Asia/Shanghai", remindAt: nil, remind: false, language: "zh-Hans")
        try checkin(c, "lin", "2026-11-21T08:00:00Z", meta: ["kind=social"])
        let sink = MemorySink()
        try at(c, "2026-11-21T08:15:00Z").tick(delivery: Delivery(sinks: [sink]))
        #expect(sink.received.map(\.message) == ["你解锁了“一起更好”徽章！"])
        #expect(sink.received.map(\.title) == ["徽章已解锁"])
    }

    /// Removing a user removes their badges and levels from the ledger.
    @Test func removingAUserRemovesTheirAchievements() throws {
        let (c, _) = try makeContext(now: "2026-11-21T08:00:00Z")
        try c.addUser(id: "fay", tz: "UTC", remindAt: nil, remind: false)
        try checkin(c, "fay", "2026-11-21T08:00:00Z", meta: ["kind=social"])
        try at(c, "2026-11-21T08:15:00Z").tick(delivery: Delivery(sinks: []))
        #expect(try ledger(c, ["badge_unlocked/fay/social_1"]) == ["badge_unlocked/fay/social_1": .sent])
        try c.removeUser(id: "fay")
        #expect(try ledger(c, ["badge_unlocked/fay/social_1"]).isEmpty)
        #expect(throws: StreakdError.self) { try c.badges(user: "fay") }
        // Added again, the user starts afresh and earns the badge anew.
        try c.addUser(id: "fay", tz: "UTC", remindAt: nil, remind: false)
        try checkin(c, "fay", "2026-11-21T09:00:00Z", meta: ["kind=social"])
        let sink = MemorySink()
        try at(c, "2026-11-21T09:15:00Z").tick(delivery: Delivery(sinks: [sink]))
        #expect(sink.received.map(\.key) == ["badge_unlocked/fay/social_1"])
    }
}
