import Foundation
import StreakTestKit
import Testing

@Suite("status and calendar", .fastTier)
struct StatusCalendarTests {
    @Test func sevenDaysEndingYesterdayInBerlin() throws {
        let s = try Sandbox()
        s.addUser()
        try s.importLines(sevenDays)
        let r = s.run(["status", "u1", "-o", "json"])
        #expect(r.code == 0)
        #expect(r.err == "")
        #expect(
            r.out == """
                {"user":"u1","streak":"daily","timezone":"Europe/Berlin","today":"2026-11-21","current":7,"longest":7,"freezes":1,"today_count":0,"goal":1,"total_checkins":7,"last_qualifying_date":"2026-11-20","next_refill":"2026-12-21T11:00:00Z","next_reminder":{"kind":"at_risk","due":"2026-11-21T19:00:00Z","local_due":"2026-11-21T20:00:00+01:00","local_date":"2026-11-21","streak_length":7},"paused_until":null,"repairs_left":1,"remind_at":"20:00","remind_usual":false,"xp":170,"level":1,"next_level_xp":500}

                """)
        // The keys SPEC §6 requires, whatever else is there.
        let o = try jsonObject(r.out)
        let required = [
            "user", "streak", "current", "longest", "freezes", "today_count", "goal", "total_checkins",
            "last_qualifying_date",
            "next_reminder", "xp", "level", "next_level_xp",
        ]
        for key in required { #expect(o.keys.contains(key), "status -o json lacks \(key)") }
        #expect(o["user"] as? String == "u1")
        #expect(o["streak"] as? String == "daily")
        #expect(o["current"] as? Int == 7)
        #expect(o["longest"] as? Int == 7)
        #expect(o["freezes"] as? Int == 1)
        #expect(o["today_count"] as? Int == 0)
        #expect(o["goal"] as? Int == 1)
        #expect(o["total_checkins"] as? Int == 7)
        #expect(o["last_qualifying_date"] as? String == "2026-11-20")
        let next = try #require(o["next_reminder"] as? [String: Any])
        #expect(next["kind"] as? String == "at_risk")
        #expect(next["due"] as? String == "2026-11-21T19:00:00Z")
        #expect(next["local_date"] as? String == "2026-11-21")
        #expect(next["streak_length"] as? Int == 7)

        let short = s.run(["status", "u1"])
        #expect(short.code == 0)
        #expect(
            short.out == """
                u1 · daily · Europe/Berlin · today 2026-11-21
                  current streak   7 days (today not done yet)
                  longest streak   7 days
                  today            0 of 1 check-in
                  check-ins        7 in all, last qualifying date 2026-11-20
                  freezes          1, next refill from 2026-12-21T11:00:00Z
                  next reminder    2026-11-21T20:00:00+01:00 (2026-11-21T19:00:00Z), for a 7-day streak
                  reminder time    20:00
                  level            1, 170 XP, level 2 at 500 XP

                """)

        // Checked in today: no reminder is due any more.
        #expect(s.run(["checkin", "u1"]).code == 0)
        let done = try s.statusObject()
        #expect(done["current"] as? Int == 8)
        #expect(done["today_count"] as? Int == 1)
        #expect(done["next_reminder"] is NSNull)
    }

    @Test func sixDaysHaveNoReminder() throws {
        let s = try Sandbox()
        s.addUser()
        try s.importLines(Array(sevenDays.dropFirst()))
        let o = try s.statusObject()
        #expect(o["current"] as? Int == 6)
        #expect(o["next_reminder"] is NSNull)
    }

    @Test func knownUserWithoutCheckinsGetsZeros() throws {
        let s = try Sandbox()
        s.addUser()
        let r = s.run(["status", "u1", "-o", "json"])
        #expect(r.code == 0)
        #expect(r.err == "")
        #expect(
            r.out == """
                {"user":"u1","streak":"daily","timezone":"Europe/Berlin","today":"2026-11-21","current":0,"longest":0,"freezes":1,"today_count":0,"goal":1,"total_checkins":0,"last_qualifying_date":null,"next_refill":null,"next_reminder":null,"paused_until":null,"repairs_left":1,"remind_at":"20:00","remind_usual":false,"xp":0,"level":1,"next_level_xp":500}

                """)
        let other = s.run(["status", "u1", "--streak", "reading", "-o", "json"])
        #expect(other.code == 0)
        #expect(try jsonObject(other.out)["total_checkins"] as? Int == 0)
        // A streak the user does not have is shown with zeros, and named as such (a typo?).
        #expect(
            other.err
                == #"streakd: warning: u1 has no streak "reading" (their streaks: daily); showing it with no check-ins"#
                + "\n")
        let short = s.run(["status", "u1"])
        #expect(
            short.out == """
                u1 · daily · Europe/Berlin · today 2026-11-21
                  current streak   0 days
                  longest streak   0 days
                  today            0 of 1 check-in
                  check-ins        0 in all, last qualifying date none
                  freezes          1
                  next reminder    none: no streak to keep yet (reminders at 5, 7, 14 days)
                  reminder time    20:00
                  level            1, 0 XP, level 2 at 500 XP

                """)
        let unknown = s.run(["status", "nobody"])
        #expect(unknown.code == 65)
        #expect(unknown.err == error(#"unknown user "nobody"; add it first with: streakd user add nobody --tz ZONE"#))
    }

    @Test func calendarGrid() throws {
        let s = try Sandbox()
        s.addUser()
        try s.importLines(sevenDays)
        let r = s.run(["calendar", "u1"])
        #expect(r.code == 0)
        #expect(r.err == "")
        #expect(
            r.out == """
                u1 · daily · Europe/Berlin   current 7 days, longest 7 days, freezes 1
                week of       Mon Tue Wed Thu Fri Sat Sun
                \(row("2026-10-26", "       "))
                \(row("2026-11-02", "       "))
                \(row("2026-11-09", "     ##"))
                \(row("2026-11-16", "#####. ", today: 5))
                # qualifying   * frozen   + repaired   - rest day   = paused   x missed   ~ skipped by travel   . open   [ ] today

                """)
        #expect(r.out.split(separator: "\n")[1] == "week of       Mon Tue Wed Thu Fri Sat Sun")

        let json = s.run(["calendar", "u1", "--weeks", "1", "-o", "json"])
        #expect(json.code == 0)
        #expect(
            json.out == """
                {"user":"u1","streak":"daily","date":"2026-11-16","state":"qualifying","today":false}
                {"user":"u1","streak":"daily","date":"2026-11-17","state":"qualifying","today":false}
                {"user":"u1","streak":"daily","date":"2026-11-18","state":"qualifying","today":false}
                {"user":"u1","streak":"daily","date":"2026-11-19","state":"qualifying","today":false}
                {"user":"u1","streak":"daily","date":"2026-11-20","state":"qualifying","today":false}
                {"user":"u1","streak":"daily","date":"2026-11-21","state":"open","today":true}
                {"user":"u1","streak":"daily","date":"2026-11-22","state":"future","today":false}

                """)
        // One object per date: 4 weeks by default.
        let all = try jsonLines(s.run(["calendar", "u1", "-o", "json"]).out)
        #expect(all.count == 28)
        #expect(Set(all.compactMap { $0["date"] as? String }).count == 28)
    }

    @Test func calendarMarksFrozenAndMissed() throws {
        let s = try Sandbox()
        s.addUser()
        // 11–14 and 16–19: the 15th is frozen automatically, the 20th is missed with no freeze left.
        let lines = [11, 12, 13, 14, 16, 17, 18, 19].map { checkinLine("2026-11-\($0)T12:00:00+01:00", id: "d\($0)") }
        try s.importLines(lines)
        let r = s.run(["calendar", "u1", "--weeks", "2"])
        #expect(
            r.out == """
                u1 · daily · Europe/Berlin   current 0 days, longest 8 days, freezes 0
                week of       Mon Tue Wed Thu Fri Sat Sun
                \(row("2026-11-09", "  ####*"))
                \(row("2026-11-16", "####x. ", today: 5))
                # qualifying   * frozen   + repaired   - rest day   = paused   x missed   ~ skipped by travel   . open   [ ] today

                """)
    }

    @Test(arguments: ["0", "-1", "521"])
    func calendarRejectsWeeksOutOfRange(_ weeks: String) throws {
        let s = try Sandbox()
        s.addUser()
        let r = s.run(["calendar", "u1", "--weeks=\(weeks)"])
        #expect(r.code == 64)
        #expect(r.out == "")
        #expect(r.err == error("--weeks: \(weeks) is out of range; use 1 to 520"))
    }

    /// One grid row as streakd draws it: the Monday, three spaces, then a
    /// four-character cell per day (" #  ", or "[#] " for today).
    func row(_ monday: String, _ marks: String, today: Int? = nil) -> String {
        monday + "   " + marks.enumerated().map { i, m in i == today ? "[\(m)] " : " \(m)  " }.joined()
    }
}
