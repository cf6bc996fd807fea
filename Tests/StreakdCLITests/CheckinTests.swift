import Foundation
import StreakTestKit
import Testing

@Suite("checkin", .fastTier)
struct CheckinTests {
    @Test func atTzIdAndMeta() throws {
        let s = try Sandbox()
        s.addUser()
        let first = s.run([
            "checkin", "u1", "--at", "2026-11-21T09:00:00+01:00", "--id", "e1", "--meta", "reps=20", "--meta",
            "ok=true",
            "--meta", "note=hi there",
        ])
        #expect(first.code == 0)
        #expect(first.out == "u1 checked in (daily): today 2026-11-21 1 of 1, current streak 1 day, longest 1 day\n")
        #expect(first.err == "")

        // The same event id again is a no-op, whatever else it says.
        let again = s.run(["checkin", "u1", "--at", "2026-11-20T09:00:00+01:00", "--id", "e1"])
        #expect(again.code == 0)
        #expect(
            again.out
                == "u1 already checked in (event e1) (daily): today 2026-11-21 1 of 1, current streak 1 day, longest 1 day\n"
        )
        // An id is the user's: naming another streak, it is still a replay, and it shows the
        // streak the id was stored for, not one it never counted in.
        let elsewhere = s.run(["checkin", "u1", "--streak", "reading", "--id", "e1"])
        #expect(elsewhere.code == 0)
        #expect(
            elsewhere.out
                == "u1 already checked in (event e1) (daily): today 2026-11-21 1 of 1, current streak 1 day, longest 1 day\n"
        )
        #expect(s.run(["status", "u1", "--streak", "reading", "-o", "json"]).out.contains(#""total_checkins":0"#))
        let json = s.run(["checkin", "u1", "--id", "e1", "-o", "json"])
        #expect(json.code == 0)
        #expect(
            json.out
                == #"{"user":"u1","streak":"daily","stored":false,"today":"2026-11-21","today_count":1,"goal":1,"current":1,"longest":1}"#
                + "\n")
        #expect(try s.statusObject()["total_checkins"] as? Int == 1)

        // --tz: 2026-11-20T16:00Z is 17:00 on the 20th in Berlin but 01:00 on the 21st in Tokyo.
        let tokyo = s.run(["checkin", "u1", "--at", "2026-11-20T16:00:00Z", "--tz", "Asia/Tokyo", "-o", "json"])
        #expect(tokyo.code == 0)
        #expect(
            tokyo.out
                == #"{"user":"u1","streak":"daily","stored":true,"today":"2026-11-21","today_count":2,"goal":1,"current":1,"longest":1}"#
                + "\n")
        let tokyo2 = s.run(["checkin", "u1", "--at", "2026-11-20T10:00:00Z", "--tz", "Asia/Tokyo", "-o", "json"])
        #expect(
            tokyo2.out
                == #"{"user":"u1","streak":"daily","stored":true,"today":"2026-11-21","today_count":2,"goal":1,"current":2,"longest":2}"#
                + "\n")

        // Without --at: now.
        #expect(s.run(["checkin", "u1"]).code == 0)
        let st = try s.statusObject()
        #expect(st["today_count"] as? Int == 3)
        #expect(st["total_checkins"] as? Int == 4)

        // Other streaks are separate.
        let w = s.run(["checkin", "u1", "--streak", "workout", "--at", "2026-11-21T08:00:00Z"])
        #expect(w.out == "u1 checked in (workout): today 2026-11-21 1 of 1, current streak 1 day, longest 1 day\n")
    }

    /// SPEC §1: a check-in may be up to 5 minutes ahead of now. It is accepted and
    /// stored, but status leaves it out of today_count and total_checkins until "now" passes it.
    @Test func checkinFiveMinutesAheadCountsAtOnce() throws {
        let s = try Sandbox()
        s.addUser()
        let r = s.run(["checkin", "u1", "--at", "2026-11-21T11:05:00Z", "-o", "json"])
        #expect(r.code == 0)
        #expect(try jsonObject(r.out)["stored"] as? Bool == true)
        do {
            #expect(try jsonObject(r.out)["today_count"] as? Int == 1)
            let st = try s.statusObject()
            #expect(st["today_count"] as? Int == 1)
            #expect(st["total_checkins"] as? Int == 1)
        }
        // Once now has passed it, it counts.
        s.now = "2026-11-21T11:06:00Z"
        let later = try s.statusObject()
        #expect(later["today_count"] as? Int == 1)
        #expect(later["total_checkins"] as? Int == 1)
    }

    @Test func metadataIsStored() throws {
        let s = try Sandbox()
        s.addUser()
        let r = s.run([
            "checkin", "u1", "--id", "m1", "--meta", "reps=20", "--meta", "ok=true", "--meta", "off=false", "--meta",
            "note=hi",
        ])
        #expect(r.code == 0, "\(r)")
        let meta = try storedMeta(s, event: "m1")
        #expect(meta == #"{"reps":20,"ok":true,"off":false,"note":"hi"}"# + "\n")
    }

    @Test func metadataIntegersOnlyAsWrittenAndKeysOnce() throws {
        let s = try Sandbox()
        s.addUser()
        #expect(
            s.run(["checkin", "u1", "--id", "m2", "--meta", "zip=007", "--meta", "n=+5", "--meta", "k=-3"]).code == 0)
        let twice = s.run(["checkin", "u1", "--meta", "reps=20", "--meta", "reps=21"])
        #expect(twice.code == 64)
        #expect(twice.err == error(#"--meta: key "reps" is given twice; give each key once"#))
        let meta = try storedMeta(s, event: "m2")
        #expect(meta == #"{"zip":"007","n":"+5","k":-3}"# + "\n")
    }

    @Test func globalOptionsMayComeBeforeTheSubcommand() throws {
        let s = try Sandbox()
        s.addUser()
        let r = s.runBare(["--store", s.store, "--now", "2026-11-21T11:00:00Z", "-o", "json", "user", "list"])
        #expect(r.code == 0, "\(r)")
        #expect(
            r.out
                == #"{"user":"u1","timezone":"Europe/Berlin","remind_at":"20:00","remind_usual":false,"remind":true,"language":null}"#
                + "\n")
    }

    /// Each case: arguments after `checkin`, and the whole message after `streakd: error: `.
    static let rejected: [([String], String)] = [
        (["nobody"], #"unknown user "nobody"; add it first with: streakd user add nobody --tz ZONE"#),
        (
            ["bad id"],
            #""bad id" is not a user id; use 1 to 128 characters: a letter or digit, then letters, digits, '.', '_', '@' or '-'"#
        ),
        (
            ["u1", "--tz", "../../etc/passwd"],
            #"--tz: "../../etc/passwd" is a path, not a time zone name; "# + zoneRule
        ),
        (["u1", "--tz", "/etc/localtime"], #"--tz: "/etc/localtime" is a path, not a time zone name; "# + zoneRule),
        (
            ["u1", "--tz", "/usr/share/zoneinfo/UTC"],
            #"--tz: "/usr/share/zoneinfo/UTC" is a path, not a time zone name; "# + zoneRule
        ),
        (["u1", "--tz", "posix/Europe/Berlin"], #"--tz: "posix/Europe/Berlin" is not a time zone name; "# + zoneRule),
        (["u1", "--tz", "right/UTC"], #"--tz: "right/UTC" is not a time zone name; "# + zoneRule),
        (["u1", "--tz", "localtime"], #"--tz: "localtime" is not a time zone name; "# + zoneRule),
        (["u1", "--tz", "Europe/./Berlin"], #"--tz: "Europe/./Berlin" is not a time zone name; "# + zoneRule),
        (["u1", "--tz", "zone.tab"], #"--tz: "zone.tab" is not a time zone name; "# + zoneRule),
        (["u1", "--tz", "Mars/Olympus"], #"--tz: unknown time zone "Mars/Olympus"; "# + zoneRule),
        (["u1", "--tz", "europe/berlin"], #"--tz: unknown time zone "europe/berlin"; "# + zoneRule),
        (["u1", "--tz", "Europe"], #"--tz: unknown time zone "Europe"; "# + zoneRule),
        (
            ["u1", "--at", "2026-11-21T11:05:01Z"],
            "--at: 2026-11-21T11:05:01Z is in the future (now is 2026-11-21T11:00:00Z); a check-in may be at most 5 minutes ahead"
        ),
        (
            ["u1", "--at", "2027-01-01T00:00:00+01:00"],
            "--at: 2026-12-31T23:00:00Z is in the future (now is 2026-11-21T11:00:00Z); a check-in may be at most 5 minutes ahead"
        ),
        (
            ["u1", "--at", "2025-11-21T10:59:59Z"],
            "--at: 2025-11-21T10:59:59Z is more than a year before now (2026-11-21T11:00:00Z); check-ins must be from the last 365 days"
        ),
        (
            ["u1", "--meta", "Bad=1"],
            #"--meta: key "Bad" is not valid; use a lowercase letter, then up to 63 of a-z, 0-9 and '_'"#
        ),
        (
            ["u1", "--meta", "1x=1"],
            #"--meta: key "1x" is not valid; use a lowercase letter, then up to 63 of a-z, 0-9 and '_'"#
        ),
        (["u1", "--meta", "=1"], #"--meta: "=1" is not KEY=VALUE; use e.g. --meta reps=20"#),
        (["u1", "--meta", "novalue"], #"--meta: "novalue" is not KEY=VALUE; use e.g. --meta reps=20"#),
        (
            ["u1", "--id", String(repeating: "a", count: 129)],
            #"--id: ""# + String(repeating: "a", count: 77)
                + #"..." is not an event id; use 1 to 128 printable ASCII characters without spaces"#
        ),
        (
            ["u1", "--id", String(repeating: "x", count: 100_000)],
            #"--id: ""# + String(repeating: "x", count: 77)
                + #"..." is not an event id; use 1 to 128 printable ASCII characters without spaces"#
        ),
        (
            ["u1", "--id", "has space"],
            #"--id: "has space" is not an event id; use 1 to 128 printable ASCII characters without spaces"#
        ),
        (
            ["u1", "--streak", "Work"],
            #"--streak: "Work" is not a streak id; use 1 to 64 characters of a-z, 0-9 and '_'"#
        ),
    ]

    /// A value not of its option's form is a usage error (64); a check-in outside the allowed
    /// instants is the data's (65; docs/RULES.md, "Exit codes").
    @Test(arguments: rejected)
    func badInputIsRefused(_ args: [String], _ message: String) throws {
        let s = try Sandbox()
        s.addUser()
        let r = s.run(["checkin"] + args)
        let refusedByData = ["is in the future", "more than a year", "unknown user"].contains { message.contains($0) }
        #expect(r.code == (refusedByData ? 65 : 64))
        #expect(r.out == "")
        #expect(r.err == error(message))
        #expect(try s.statusObject()["total_checkins"] as? Int == 0)
    }

    @Test func zoneLinksAndBoundaryInstantsAreAccepted() throws {
        let s = try Sandbox()
        s.addUser()
        for zone in ["UTC", "US/Pacific", "Asia/Calcutta", "Etc/GMT+5"] {
            let r = s.run(["checkin", "u1", "--tz", zone, "--at", "2026-11-21T10:00:00Z"])
            #expect(r.code == 0, "\(zone): \(r)")
        }
        // Exactly 365 days back is still allowed.
        let old = s.run(["checkin", "u1", "--at", "2025-11-21T11:00:00Z"])
        #expect(old.code == 0, "\(old)")
    }
}

/// A check-in's stored metadata, read back with the sqlite3 tool or psql (no command
/// prints it). Without sqlite3 the test is skipped, saying so (a failure when strict).
func storedMeta(_ s: Sandbox, event: String) throws -> String {
    if TestStore.postgres {
        return try TestPostgres.psql(s.store, "SELECT meta FROM checkins WHERE event_id = '\(event)'") + "\n"
    }
    try Prerequisite.sqlite3.require()
    let p = Process()
    p.executableURL = URL(fileURLWithPath: "/usr/bin/sqlite3")
    p.arguments = [s.store, "SELECT meta FROM checkins WHERE event_id = '\(event)'"]
    return try Spawned(p, stdin: nil).wait().out
}
