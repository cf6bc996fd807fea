import Foundation
import StreakTestKit
import Testing

/// SPEC §14 on the command line: pause, resume and repair, their refusals (65 with the reason),
/// and what status and calendar show. Now is Saturday 2026-11-21, 12:00 in Europe/Berlin.
@Suite("pause, resume and repair", .fastTier)
struct ForgivenessCLITests {
    let ann = ["LOGNAME": "ann"]

    @Test func pauseRefusalsSayWhy() throws {
        let s = try Sandbox()
        s.addUser()
        try s.file("config/streakd/streakd.toml", "[pause]\nmax_days = 10\ndays_per_year = 12\n")
        func refused(
            _ args: [String], _ reason: String, code: Int32 = 65, sourceLocation: SourceLocation = #_sourceLocation
        ) {
            let r = s.run(["pause", "u1"] + args, env: ann)
            #expect(r.code == code && r.out.isEmpty, "\(r)", sourceLocation: sourceLocation)
            #expect(r.err == error(reason), sourceLocation: sourceLocation)
        }
        refused(
            ["--from", "2026-11-20", "--until", "2026-11-22"],
            "u1 (daily): --from 2026-11-20 is in the past; a pause begins today (2026-11-21) or later")
        refused(
            ["--from", "9999-06-01", "--until", "9999-06-02"],
            "u1 (daily): --from 9999-06-01 is more than a year ahead; a pause begins by 2027-11-21")
        refused(
            ["--from", "2026-11-22", "--until", "2026-12-05"],
            "u1 (daily): 14 days is too long a pause; at most 10 days (pause.max_days)")
        refused(
            ["--from", "2026-11-31", "--until", "2026-12-05"], "--from: \"2026-11-31\" is not a date; use YYYY-MM-DD",
            code: 64)
        let ok = s.run(["pause", "u1", "--from", "2026-11-21", "--until", "2026-11-27", "-o", "json"], env: ann)
        #expect(ok.code == 0, "\(ok)")
        let record = try jsonObject(ok.out)
        #expect(record["from"] as? String == "2026-11-21" && record["until"] as? String == "2026-11-27")
        #expect(record["author"] as? String == "ann" && record["at"] as? String == "2026-11-21T11:00:00Z")
        refused(
            ["--from", "2026-11-27", "--until", "2026-11-28"],
            "u1 (daily): it overlaps the pause from 2026-11-21 through 2026-11-27")
        refused(
            ["--from", "2026-12-20", "--until", "2026-12-25"],
            "u1 (daily): 13 days paused within 365 consecutive dates would be over the allowance of 12 days "
                + "(pause.days_per_year)")
        // Another streak is not affected; --all is all or nothing.
        #expect(
            s.run(["pause", "u1", "--streak", "workout", "--from", "2026-12-20", "--until", "2026-12-25"]).code == 0)
        refused(
            ["--all", "--from", "2026-12-24", "--until", "2026-12-26"],
            "u1 (workout): it overlaps the pause from 2026-12-20 through 2026-12-25")
        #expect(try s.statusObject()["paused_until"] as? String == "2026-11-27")
        // Back to back, two pauses are one absence: paused_until is the last paused date.
        #expect(s.run(["pause", "u1", "--from", "2026-11-28", "--until", "2026-11-29"]).code == 0)
        #expect(try s.statusObject()["paused_until"] as? String == "2026-11-29")
        let short = s.run(["status", "u1"]).out
        #expect(short.contains("paused           through 2026-11-29"), "\(short)")
    }

    @Test func aPauseShowsInStatusAndCalendarAndResumeEndsIt() throws {
        let s = try Sandbox()
        s.addUser()
        try s.importLines(sevenDays)
        #expect(s.run(["pause", "u1", "--from", "2026-11-21", "--until", "2026-12-20"]).code == 0)
        var status = try s.statusObject()
        #expect(status["paused_until"] as? String == "2026-12-20")
        #expect(status["current"] as? Int == 7)
        // The next reminder is a month away, after the pause, for the 7-day streak.
        let next = try #require(status["next_reminder"] as? [String: Any])
        #expect(next["local_date"] as? String == "2026-12-21" && next["streak_length"] as? Int == 7)
        let calendar = s.run(["calendar", "u1", "--weeks", "1"])
        #expect(calendar.out.contains("[=]"), "\(calendar.out)")
        // Resume on Tuesday: paused through Monday only.
        s.now = "2026-11-24T11:00:00Z"
        let resumed = s.run(["resume", "u1"])
        #expect(resumed.code == 0 && resumed.out == "resumed u1 (daily): paused 2026-11-21 through 2026-11-23 only\n")
        status = try s.statusObject()
        #expect(status["paused_until"] is NSNull && status["current"] as? Int == 7)
        let again = s.run(["resume", "u1"])
        #expect(again.code == 65 && again.err == error("u1 has no pause to resume for daily (none in force or ahead)"))
    }

    @Test func repairRefusalsAndARepair() throws {
        let s = try Sandbox()
        s.addUser()
        try s.file("config/streakd/streakd.toml", "[freeze]\ninitial = 0\n")
        func refused(_ reason: String, sourceLocation: SourceLocation = #_sourceLocation) {
            let r = s.run(["repair", "u1"], env: ann)
            #expect(r.code == 65 && r.err == error(reason), "\(r)", sourceLocation: sourceLocation)
        }
        refused("u1 (daily): nothing broken: the streak has no break to repair")
        // 2026-11-12 … 11-19, then 11-20 missed: broken when it ended (2026-11-21 00:00).
        try s.importLines((12...19).map { checkinLine("2026-11-\($0)T18:00:00+01:00", id: "r\($0)") })
        #expect(try s.statusObject()["current"] as? Int == 0)
        #expect(try s.statusObject()["repairs_left"] as? Int == 1)
        s.now = "2026-11-23T12:00:00Z"
        refused(
            "u1 (daily): too late: the streak broke on 2026-11-20, which ended at 2026-11-20T23:00:00Z; a repair "
                + "must come within 48 hours of that (repair.window_hours)")
        s.now = "2026-11-21T20:00:00Z"
        let r = s.run(["repair", "u1", "-o", "json"], env: ann)
        #expect(r.code == 0, "\(r)")
        let record = try jsonObject(r.out)
        #expect(record["date"] as? String == "2026-11-20" && record["current"] as? Int == 8)
        #expect(record["repairs_left"] as? Int == 0 && record["author"] as? String == "ann")
        let status = try s.statusObject()
        #expect(status["current"] as? Int == 8 && status["repairs_left"] as? Int == 0)
        #expect(s.run(["calendar", "u1", "--weeks", "1"]).out.contains(" +  "))
        refused("u1 (daily): nothing broken: the streak has no break to repair")
        // A second break within 720 hours: none left.
        s.now = "2026-11-22T12:00:00Z"
        refused(
            "u1 (daily): none left: 1 repair within 720 hours (repair.per_30_days = 1); the next from 2026-12-21T20:00:00Z"
        )
        // The check-in for the broken date, stored later, gives the repair back.
        try s.importLines([checkinLine("2026-11-20T18:00:00+01:00", id: "late")], name: "late.jsonl")
        #expect(try s.statusObject()["repairs_left"] as? Int == 1)
    }

    /// A repair names the dates it made repaired, not those after the break that qualified (it
    /// said "2026-11-22 through 2026-11-23 mended" when 11-23 had a check-in).
    @Test func aRepairNamesOnlyTheDatesItMended() throws {
        let s = try Sandbox()
        s.addUser()
        try s.importLines(sevenDays)  // through 11-20; the freeze takes 11-21, 11-22 breaks
        s.now = "2026-11-23T18:00:00Z"
        #expect(s.run(["checkin", "u1", "--at", "2026-11-23T12:00:00+01:00"]).code == 0)
        s.now = "2026-11-24T18:00:00Z"
        let r = s.run(["repair", "u1"])
        #expect(
            r.code == 0 && r.out == "repaired u1's daily streak: 2026-11-22 mended, back at 8 days; 0 repairs left\n",
            "\(r)")
    }

    /// Rest days in preview as the engine (status) has them: no `at_risk` on a rest date and the
    /// streak alive over the weekend. Preview walks such a history without the engine; it once
    /// left the rest days out and listed a reminder, a freeze and a break on Saturday and Sunday.
    @Test func previewFollowsRestDays() throws {
        let s = try Sandbox()
        let config = try s.file("c.toml", "[streaks.weekend]\nrest_days = [\"sat\", \"sun\"]\n")
        s.addUser("u1", tz: "UTC")
        s.now = "2026-11-20T12:00:00Z"
        for day in 16...20 {
            let r = s.run([
                "checkin", "u1", "--streak", "weekend", "--at", "2026-11-\(day)T10:00:00Z", "--config", config,
            ])
            #expect(r.code == 0, "\(r)")
        }
        #expect(s.run(["tick", "--config", config]).code == 0)
        s.now = "2026-11-21T12:00:00Z"
        let preview = s.run(["preview", "--until", "72h", "--config", config])
        let lines = preview.out.split(separator: "\n").filter { $0.contains("u1/weekend") }
        #expect(preview.code == 0 && lines.count == 2, "\(preview)")
        #expect(
            lines.first?.hasPrefix("2026-11-23T20:00:00Z at_risk u1/weekend 2026-11-23: Your 5-day") == true, "\(lines)"
        )
        #expect(lines.last?.hasPrefix("2026-11-24T00:00:00Z freeze_used u1/weekend 2026-11-23") == true, "\(lines)")
    }

    /// Paused dates in preview as the engine (status) has them, from the tables (before a tick)
    /// and from the packed history a tick leaves: no `at_risk` on a paused date, the streak alive
    /// over the pause, the reminder the day after it ends.
    @Test func previewFollowsPauses() throws {
        let s = try Sandbox()
        s.addUser("u1", tz: "UTC")
        s.now = "2026-11-20T12:00:00Z"
        for day in 16...20 { #expect(s.run(["checkin", "u1", "--at", "2026-11-\(day)T10:00:00Z"]).code == 0) }
        #expect(s.run(["pause", "u1", "--from", "2026-11-21", "--until", "2026-11-22"]).code == 0)
        for state in ["before a tick", "after a tick"] {
            if state == "after a tick" { #expect(s.run(["tick"]).code == 0) }
            let preview = s.run(["preview", "--until", "96h"])
            let lines = preview.out.split(separator: "\n").filter { $0.contains("u1/daily") }
            #expect(preview.code == 0 && lines.count == 2, "\(state): \(preview)")
            #expect(
                lines.first?.hasPrefix("2026-11-23T20:00:00Z at_risk u1/daily 2026-11-23: Your 5-day") == true,
                "\(state): \(lines)")
            #expect(
                lines.last?.hasPrefix("2026-11-24T00:00:00Z freeze_used u1/daily 2026-11-23") == true,
                "\(state): \(lines)")
        }
    }

    @Test func restDaysAreValidatedWithFileAndLine() throws {
        let s = try Sandbox()
        let path = try s.file("c.toml", "[streaks.workout]\ngoal = 1\nrest_days = [\"sat\", \"Sonntag\"]\n")
        let r = s.run(["config", "check", "--config", path])
        #expect(r.code == 78)
        #expect(r.err.contains("c.toml:3: streaks.workout.rest_days: \"Sonntag\" is not a weekday"), "\(r.err)")
        let good = try s.file(
            "d.toml", "[streaks.workout]\nrest_days = [\"SAT\", \"sunday\"]\n[pause]\nmax_days = 14\n")
        let ok = s.run(["config", "check", "--config", good])
        #expect(
            ok.code == 0 && ok.out.contains("rest_days = [\"sat\", \"sun\"]") && ok.out.contains("max_days = 14"),
            "\(ok)")
    }
}
