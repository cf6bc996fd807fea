import Foundation
import StreakTestKit
import Testing

@Suite("freeze add and use", .fastTier)
struct FreezeTests {
    @Test func addIsCappedAtFreezeMax() throws {
        let s = try Sandbox()
        s.addUser()
        let full = s.run(["freeze", "add", "u1"])
        #expect(full.code == 0)
        #expect(full.out == "u1 (daily) holds 1 of 1 freezes already (freeze.max); nothing added\n")
        let json = s.run(["freeze", "add", "u1", "-o", "json"])
        #expect(json.out == #"{"user":"u1","streak":"daily","freezes":1,"added":false}"# + "\n")
        #expect(try s.statusObject()["freezes"] as? Int == 1)

        let ghost = s.run(["freeze", "add", "ghost"])
        #expect(ghost.code == 65)
        #expect(ghost.err == error(#"unknown user "ghost"; add it first with: streakd user add ghost --tz ZONE"#))
    }

    @Test func addUpToAConfiguredMax() throws {
        let s = try Sandbox()
        s.addUser()
        try s.file("config/streakd/streakd.toml", "[freeze]\nmax = 3\n")
        #expect(s.run(["freeze", "add", "u1"]).out == "granted a freeze to u1 (daily): 2 of 3\n")
        #expect(
            s.run(["freeze", "add", "u1", "-o", "json"]).out
                == #"{"user":"u1","streak":"daily","freezes":3,"added":true}"# + "\n")
        #expect(
            s.run(["freeze", "add", "u1"]).out
                == "u1 (daily) holds 3 of 3 freezes already (freeze.max); nothing added\n")
        #expect(try s.statusObject()["freezes"] as? Int == 3)
    }

    /// A refused grant ("nothing added") is still stored, and counts once freeze.max is raised.
    @Test func refusedGrantsDoNotCountLater() throws {
        let s = try Sandbox()
        s.addUser()
        for _ in 0..<2 {
            #expect(
                s.run(["freeze", "add", "u1"]).out
                    == "u1 (daily) holds 1 of 1 freezes already (freeze.max); nothing added\n")
        }
        try s.file("config/streakd/streakd.toml", "[freeze]\nmax = 3\n")
        do {
            #expect(try s.statusObject()["freezes"] as? Int == 1)
            #expect(s.run(["freeze", "add", "u1"]).out == "granted a freeze to u1 (daily): 2 of 3\n")
        }
    }

    @Test func useNeedsAStreakOfThree() throws {
        let s = try Sandbox()
        s.addUser()
        try s.importLines(Array(sevenDays.suffix(2)))
        let r = s.run(["freeze", "use", "u1"])
        #expect(r.code == 65)
        #expect(r.out == "")
        #expect(r.err == error("the current streak is 2 days; a freeze needs at least 3 days (freeze.min_streak)"))
        #expect(try s.statusObject()["freezes"] as? Int == 1)
    }

    @Test func useTodayOrAComingDate() throws {
        let s = try Sandbox()
        s.addUser()
        try s.importLines(sevenDays)

        // A date the rules refuse is 65, as a pause's (SPEC §14); one that does not parse 64.
        let past = s.run(["freeze", "use", "u1", "--date", "2026-11-20"])
        #expect(past.code == 65)
        #expect(
            past.err
                == error("--date: 2026-11-20 has begun or ended already; freeze today (2026-11-21) or a coming date"))
        let garbage = s.run(["freeze", "use", "u1", "--date", "11/24"])
        #expect(garbage.code == 64)
        #expect(garbage.err == error(#"--date: "11/24" is not a date; use YYYY-MM-DD"#))
        let far = s.run(["freeze", "use", "u1", "--date", "2027-12-01"])
        #expect(far.code == 65)
        #expect(far.err == error("--date: 2027-12-01 is more than a year ahead"))

        let use = s.run(["freeze", "use", "u1", "--date", "2026-11-22"])
        #expect(use.code == 0)
        #expect(use.out == "froze 2026-11-22 for u1 (daily); 0 freezes left\n")
        let twice = s.run(["freeze", "use", "u1", "--date", "2026-11-22"])
        #expect(twice.code == 65)
        #expect(twice.err == error("--date: 2026-11-22 is frozen already"))
        let none = s.run(["freeze", "use", "u1"])
        #expect(none.code == 65)
        #expect(none.err == error("u1 has no freeze left for daily"))
        #expect(s.run(["calendar", "u1", "--weeks", "1"]).out.contains("2026-11-16    #   #   #   #   #  [.]  *  \n"))

        // Granted again, today can be frozen too; checking in today later gives it back.
        #expect(s.run(["freeze", "add", "u1"]).code == 0)
        let today = s.run(["freeze", "use", "u1", "-o", "json"])
        #expect(today.out == #"{"user":"u1","streak":"daily","date":"2026-11-21","freezes":0}"# + "\n")
        #expect(try s.statusObject()["freezes"] as? Int == 0)
        #expect(s.run(["checkin", "u1"]).code == 0)
        #expect(try s.statusObject()["freezes"] as? Int == 1)
        let qualifies = s.run(["freeze", "use", "u1"])
        #expect(qualifies.code == 65)
        #expect(qualifies.err == error("2026-11-21 qualifies already; it needs no freeze"))
    }

    /// A rest or paused date is bridged (SPEC §14): a freeze used on it would be given back, so it
    /// is refused as on a date that qualifies (it said "0 freezes left" and kept the freeze).
    @Test func aRestOrPausedDateNeedsNoFreeze() throws {
        let s = try Sandbox()
        s.addUser()
        try s.importLines(sevenDays)
        #expect(s.run(["pause", "u1", "--from", "2026-11-23", "--until", "2026-11-24"]).code == 0)
        let paused = s.run(["freeze", "use", "u1", "--date", "2026-11-24"])
        #expect(paused.code == 65, "\(paused)")
        #expect(
            paused.err == error("--date: 2026-11-24 is paused (from 2026-11-23 through 2026-11-24); it needs no freeze")
        )
        let config = try s.file("rest.toml", "[streaks.daily]\nrest_days = [\"sat\", \"sun\"]\n")
        let rest = s.run(["freeze", "use", "u1", "--date", "2026-11-22", "--config", config])
        #expect(rest.code == 65 && rest.err == error("--date: 2026-11-22 is a rest day of daily; it needs no freeze"))
        #expect(try s.statusObject()["freezes"] as? Int == 1, "the freeze is kept")
        #expect(s.run(["freeze", "use", "u1", "--date", "2026-11-25"]).code == 0, "a plain date takes it")
    }
}
