import StreakCore
import StreakDelivery
import StreakRecompute
import StreakSQLite
import StreakStore
import StreakTestKit
import Testing

@testable import StreakJobs

/// `streakTotals` (packed histories, the simple walk, the engine, stale rows read from the
/// tables) sums exactly what `Engine.evaluate` gives for every streak, in any number of parts.
@Suite(.fastTier) struct StreakTotalsTests {
    @Test func partsSumWhatTheEngineGivesEveryStreak() throws {
        let (c, _) = try makeContext(now: "2026-11-01T10:00:00Z")
        let users = [
            ("a", "Europe/Berlin"), ("b", "Asia/Tokyo"), ("c", "America/New_York"), ("d", "Europe/Berlin"),
            ("e", "Australia/Lord_Howe"), ("f", "UTC"),
        ]
        for (id, tz) in users { try c.addUser(id: id, tz: tz, remindAt: nil, remind: true) }
        let day = at(c, "2026-11-21T10:00:00Z")
        for d in 10...20 where d != 15 {
            try day.checkin(user: "a", streak: "daily", at: "2026-11-\(d)T10:00:00Z", tz: nil, eventID: nil, meta: [])
            try day.checkin(user: "b", streak: "run", at: "2026-11-\(d)T01:00:00Z", tz: nil, eventID: nil, meta: [])
            try day.checkin(user: "c", streak: "daily", at: "2026-11-\(d)T23:30:00Z", tz: nil, eventID: nil, meta: [])
            try day.checkin(user: "e", streak: "daily", at: "2026-11-\(d)T13:00:00Z", tz: nil, eventID: nil, meta: [])
        }
        try day.checkin(user: "a", streak: "read", at: "2026-11-20T12:00:00Z", tz: nil, eventID: nil, meta: [])
        // Not simple: a check-in in another zone; a freeze used; a move.
        try day.checkin(
            user: "d", streak: "daily", at: "2026-11-19T20:00:00Z", tz: "Asia/Tokyo", eventID: nil, meta: [])
        try day.checkin(user: "d", streak: "daily", at: "2026-11-20T20:00:00Z", tz: nil, eventID: nil, meta: [])
        try at(c, "2026-11-15T12:00:00Z").useFreeze(user: "e", streak: "daily", date: "2026-11-16")
        try at(c, "2026-11-18T00:00:00Z").setUser(id: "c", tz: "Europe/London", remindAt: nil, remind: nil)
        // Every streak packed, then one more check-in and a new streak left stale.
        try at(c, "2026-11-21T10:00:00Z").tick(delivery: Delivery(sinks: [MemorySink()]))
        try day.checkin(user: "b", streak: "run", at: "2026-11-21T01:00:00Z", tz: nil, eventID: nil, meta: [])
        try day.checkin(user: "f", streak: "daily", at: "2026-11-21T09:00:00Z", tz: nil, eventID: nil, meta: [])

        let now = at(c, "2026-11-21T12:00:00Z")
        var expected = StreakTotals()
        try c.store.read { r in
            for (id, _) in users {
                let user = try #require(try r.user(id))
                for streak in try r.streaks(of: id) {
                    let state = Engine.evaluate(try now.history(of: user, streak: streak, in: r), at: now.now)
                    expected.streaks += 1
                    expected.checkins += try r.checkins(of: id, streak: streak).count
                    expected.current += state.current
                    expected.longest += state.longest
                }
            }
        }
        #expect(expected.streaks == 7 && expected.current > 0)
        for parts in 1...3 {
            var total = StreakTotals()
            for part in 0..<parts {
                total.add(try now.streakTotals(in: c.store as! SQLiteStore, part: part, of: parts))
            }
            #expect(total.packed == 5, "\(parts) parts")
            total.packed = 0
            #expect(
                (total.streaks, total.checkins, total.current, total.longest)
                    == (expected.streaks, expected.checkins, expected.current, expected.longest), "\(parts) parts")
        }
    }
}
