import Foundation
import StreakTestKit
import Testing

/// `--remind-at usual` (SPEC §14, issue 35) through the built binary: the flag and its refusals,
/// what `user list` and `status` show, the hour moving as check-ins arrive (whatever their order),
/// the bounds in the configuration, and the API's `PUT`.
@Suite("remind at the usual hour", .fastTier)
struct UsualHourCLITests {
    /// `daily` on 11-14 … 11-20 and `workout` on 11-16 … 11-20 (Berlin, +01:00): per date the
    /// earlier of the two, 17:50 … 19:30, median 18:40, so 18:10, rounded down: 18:00.
    static let history: [String] =
        zip(14...20, ["18:10", "19:20", "18:40", "20:05", "17:50", "18:30", "18:55"]).map { d, t in
            checkinLine("2026-11-\(d)T\(t):00+01:00", id: "d\(d)", user: "ana")
        }
        + (16...20).map { d in
            checkinLine("2026-11-\(d)T19:30:00+01:00", id: "w\(d)", user: "ana", extra: #","streak":"workout""#)
        }

    @Test func theFlagInEveryUserCommandAndItsRefusals() throws {
        let s = try Sandbox()
        let add = s.run(["user", "add", "ana", "--tz", "Europe/Berlin", "--remind-at", "usual"])
        #expect(add.code == 0 && add.out == "added user ana (Europe/Berlin, reminders usual (20:00))\n", "\(add)")
        s.addUser("bo", tz: "Asia/Tokyo", ["--remind-at", "07:30"])
        let set = s.run(["user", "set", "bo", "--remind-at", "usual"])
        #expect(set.code == 0 && set.out == "updated user bo (Asia/Tokyo, reminders usual (20:00))\n", "\(set)")
        let back = s.run(["user", "set", "ana", "--remind-at", "19:00"])
        #expect(back.code == 0 && back.out == "updated user ana (Europe/Berlin, reminders at 19:00)\n", "\(back)")
        #expect(s.run(["user", "set", "ana", "--remind-at", "usual", "--no-remind"]).code == 0)
        // Kept by a change of something else.
        #expect(s.run(["user", "set", "bo", "--tz", "Asia/Seoul"]).out.contains("reminders usual (20:00)"))

        let bad = s.run(["user", "add", "cy", "--tz", "UTC", "--remind-at", "Usual"])
        #expect(bad.code == 64, "\(bad)")
        #expect(bad.err == error(#"--remind-at: "Usual" is not a time of day; use HH:MM from 00:00 to 23:59, or usual"#))
        let file = try s.file(
            "users.jsonl",
            #"{"user":"cy","tz":"UTC","remind_at":"usual"}"# + "\n" + #"{"user":"di","tz":"UTC","remind_at":"often"}"#
                + "\n")
        let refused = s.run(["user", "import", file])
        #expect(refused.code == 65, "\(refused)")
        #expect(refused.err.contains(#"\#(file):2: field "remind_at": "often" is not a time of day; use HH:MM"#))
        #expect(s.run(["user", "import", "-"], stdin: #"{"user":"cy","tz":"UTC","remind_at":"usual"}"# + "\n").code == 0)

        let list = s.run(["user", "list"])
        #expect(
            list.out == """
                USER  ZONE                            REMINDERS      LANGUAGE
                ana   Europe/Berlin                   off            en (default)
                bo    Asia/Seoul                      usual (20:00)  en (default)
                cy    UTC                             usual (20:00)  en (default)

                """, "\(list)")
        let json = try jsonLines(s.run(["user", "list", "-o", "json"]).out)
        #expect(json.map { $0["remind_usual"] as? Bool } == [true, true, true])
        #expect(json.map { $0["remind_at"] as? String } == ["20:00", "20:00", "20:00"])
        let status = try s.statusObject("cy")
        #expect(status["remind_at"] as? String == "20:00" && status["remind_usual"] as? Bool == true)
    }

    /// The hour as history arrives: 20:00 before three dates, the median's after; a single
    /// check-in in one streak that moves it replans the reminders of every streak, and `status`,
    /// `user list`, `preview` and a tick follow at once.
    @Test func theHourMovesAsCheckinsArrive() throws {
        let s = try Sandbox()
        s.addUser("ana", tz: "Europe/Berlin", ["--remind-at", "usual"])
        s.addUser("bo")  // a fixed user beside, untouched
        #expect(try s.statusObject("ana")["remind_at"] as? String == "20:00")
        try s.importLines(Self.history)
        #expect(try s.statusObject("ana", streak: "workout")["remind_at"] as? String == "18:00")
        #expect(s.run(["user", "list"]).out.contains("ana   Europe/Berlin                   usual (18:00)"))
        let short = s.run(["status", "ana", "--streak", "daily"]).out
        #expect(short.contains("  reminder time    18:00, the usual hour (from the history)\n"), "\(short)")
        func reminders() throws -> [String] {
            let r = s.run(["preview", "--kind", "at_risk", "--until", "1d", "-o", "json"])
            #expect(r.code == 0, "\(r)")
            return try jsonLines(r.out).map { "\($0["streak"] ?? "") \($0["local_due"] ?? "")" }
        }
        // Both streaks' reminders today at 18:00: daily at 7 days, workout at 5.
        #expect(try reminders() == ["daily 2026-11-21T18:00:00+01:00", "workout 2026-11-21T18:00:00+01:00"])
        // Early mornings in a third streak, one check-in at a time: the third makes the lower
        // middle of ten dates 18:10, so 17:30.
        for (d, t) in [("11", "07:10"), ("12", "07:20")] {
            #expect(s.run(["checkin", "ana", "--streak", "reading", "--at", "2026-11-\(d)T\(t):00+01:00"]).code == 0)
        }
        #expect(try s.statusObject("ana")["remind_at"] as? String == "18:00")
        #expect(s.run(["checkin", "ana", "--streak", "reading", "--at", "2026-11-13T07:30:00+01:00"]).code == 0)
        #expect(try s.statusObject("ana", streak: "workout")["remind_at"] as? String == "17:30")
        #expect(try reminders() == ["daily 2026-11-21T17:30:00+01:00", "workout 2026-11-21T17:30:00+01:00"])
        let next = try #require(try s.statusObject("ana")["next_reminder"] as? [String: Any])
        #expect(next["due"] as? String == "2026-11-21T16:30:00Z")
        #expect(try s.statusObject("bo")["remind_at"] as? String == "20:00")
        s.now = "2026-11-21T16:30:00Z"
        let tick = s.run(["tick", "--dry-run"])
        #expect(tick.out.components(separatedBy: "would send 2026-11-21T16:30:00Z at_risk ana/").count == 3, "\(tick)")
    }

    /// The same history imported at once in a random order, in reverse, and one check-in at a
    /// time: the same hour, statuses and preview.
    @Test func theSameWhateverTheArrivalOrder() throws {
        var rng = SystemRandomNumberGenerator()
        let orders = [Self.history.shuffled(using: &rng), Self.history.reversed()]
        var results: [[String]] = []
        for order in orders + [[]] {
            let s = try Sandbox()
            s.addUser("ana", tz: "Europe/Berlin", ["--remind-at", "usual"])
            if order.isEmpty {
                for (i, line) in Self.history.enumerated() { try s.importLines([line], name: "one\(i).jsonl") }
            } else {
                try s.importLines(order)
            }
            results.append([
                s.status("ana", streak: "daily"), s.status("ana", streak: "workout"),
                s.run(["preview", "--until", "2d", "-o", "json"]).out, s.run(["user", "list"]).out,
            ])
        }
        #expect(results[0][0].contains(#""remind_at":"18:00","remind_usual":true"#), "\(results[0][0])")
        #expect(results[1] == results[0], "reversed: \(results[1])")
        #expect(results[2] == results[0], "one by one: \(results[2])")
    }

    /// Check-ins of one usual user in eight streaks at once, from eight processes: the hour stored
    /// is the one of all eight dates (each writer works it out after the one before it committed),
    /// whatever order they ran in.
    @Test func checkinsAtOnceLeaveTheHourOfThemAll() throws {
        let s = try Sandbox()
        s.addUser("ana", tz: "Europe/Berlin", ["--remind-at", "usual"])
        let times = ["07:00", "19:00", "07:30", "19:30", "08:00", "20:00", "08:30", "20:30"]
        let children = try times.enumerated().map { i, t in
            try s.spawn(["checkin", "ana", "--streak", "s\(i)", "--at", "2026-11-\(13 + i)T\(t):00+01:00"])
        }
        for r in children.map({ $0.wait() }) { #expect(r.code == 0, "\(r)") }
        // Lower middle of eight: 08:30, so 08:00.
        #expect(try s.statusObject("ana")["remind_at"] as? String == "08:00")
    }

    /// `reminders.usual_earliest|usual_latest`: `config check` names the file and line of a bad
    /// one; a change applies from the next tick.
    @Test func theBoundsInTheConfiguration() throws {
        let s = try Sandbox()
        let path = try s.file("config/streakd/streakd.toml", "badges = []\n[reminders]\nusual_latest = \"17:30\"\n")
        let check = s.run(["config", "check"])
        #expect(check.code == 0 && check.out.contains("usual_earliest = \"08:00\"\nusual_latest = \"17:30\"\n"))
        s.addUser("ana", tz: "Europe/Berlin", ["--remind-at", "usual"])
        try s.importLines(Self.history)
        #expect(try s.statusObject("ana")["remind_at"] as? String == "17:30", "clamped")

        try s.file("config/streakd/streakd.toml", "badges = []\n[reminders]\ndays = [5, 7]\nusual_latest = \"17:40\"\n")
        let bad = s.run(["config", "check"])
        #expect(bad.code == 78, "\(bad)")
        #expect(bad.err.contains("\(path):4: reminders.usual_latest: \"17:40\" is not a time of day on the quarter hour"))
        try s.file("config/streakd/streakd.toml", "badges = []\n[reminders]\nusual_earliest = \"21:30\"\n")
        let order = s.run(["config", "check"])
        #expect(order.code == 78, "\(order)")
        #expect(order.err.contains("\(path):3: reminders.usual_earliest: usual_earliest (21:30) is after usual_latest (21:00)"))

        try s.file("config/streakd/streakd.toml", "badges = []\n")
        #expect(try s.statusObject("ana")["remind_at"] as? String == "17:30", "until a tick")
        try Journal.ensureRunning()
        let tick = s.run(["tick"])
        #expect(tick.code == 0, "\(tick)")
        #expect(try s.statusObject("ana")["remind_at"] as? String == "18:00")
        #expect(s.run(["preview", "--kind", "at_risk"]).out.hasPrefix("2026-11-21T17:00:00Z at_risk ana/daily"))
    }

    /// An import works out again the hour of the usual users it stored check-ins for, and of no
    /// other: ana's streaks, changed by an earlier import and not yet handled by a tick, keep the
    /// hour of the bounds before until the tick, though an import for bo ran under new ones.
    @Test func anImportLeavesOtherUsualUsersAlone() throws {
        let s = try Sandbox()
        try s.file("config/streakd/streakd.toml", "badges = []\n[reminders]\nusual_latest = \"17:30\"\n")
        s.addUser("ana", tz: "Europe/Berlin", ["--remind-at", "usual"])
        s.addUser("bo", tz: "Europe/Berlin", ["--remind-at", "usual"])
        try s.importLines(Self.history)
        #expect(try s.statusObject("ana")["remind_at"] as? String == "17:30", "clamped")

        try s.file("config/streakd/streakd.toml", "badges = []\n")
        // Median 19:20, so 18:50, rounded down: 18:45 (17:30 under the bounds before).
        try s.importLines(
            zip(18...20, ["19:10", "19:20", "19:30"]).map { d, t in
                checkinLine("2026-11-\(d)T\(t):00+01:00", id: "b\(d)", user: "bo")
            }, name: "bo.jsonl")
        #expect(try s.statusObject("bo")["remind_at"] as? String == "18:45")
        #expect(try s.statusObject("ana")["remind_at"] as? String == "17:30", "not imported for: until a tick")
    }

    /// `PUT /v1/users/{user}` takes `"remind_at":"usual"` and answers the time in force; the API's
    /// batch and single check-in move it as `import` and `checkin` do.
    @Test(.requires(.program("/usr/bin/curl", package: "curl")))
    func theAPIsPutTakesUsual() throws {
        let s = try Sandbox()
        let admin = try ServeTests.token(s, "ops", "admin")
        let ingest = try ServeTests.token(s, "app", "ingest")
        let server = try Server(s, listen: "127.0.0.1:0")
        let created = try server.request(
            "PUT", "/v1/users/ana", token: admin, json: #"{"tz":"Europe/Berlin","remind_at":"usual"}"#)
        #expect(created.status == 201, "\(created)")
        #expect(created.body == s.run(["user", "list", "-o", "json"]).out)
        var user = try jsonObject(created.body)
        #expect(user["remind_at"] as? String == "20:00" && user["remind_usual"] as? Bool == true, "\(user)")
        let bad = try server.request("PUT", "/v1/users/ana", token: admin, json: #"{"remind_at":"sometimes"}"#)
        #expect(bad.status == 400 && bad.body.contains(#""pointer":"/remind_at""#), "does not parse: \(bad)")
        #expect(bad.body.contains("or usual"), "\(bad)")

        let batch = try server.request(
            "POST", "/v1/checkins", token: ingest, body: Self.history.joined(separator: "\n"),
            headers: ["Content-Type: application/x-ndjson"])
        #expect(batch.status == 200, "\(batch)")
        user = try jsonObject(try server.request("GET", "/v1/users/ana", token: admin).body)
        #expect(user["remind_at"] as? String == "18:00", "\(user)")
        for (i, at) in ["2026-11-11T07:10:00+01:00", "2026-11-12T07:20:00+01:00", "2026-11-13T07:30:00+01:00"]
            .enumerated()
        {
            let r = try server.request(
                "POST", "/v1/users/ana/checkins", token: ingest, json: #"{"at":"\#(at)","id":"r\#(i)","streak":"reading"}"#)
            #expect(r.status == 201, "\(r)")
            if i == 2 { #expect(try jsonObject(r.body)["remind_at"] as? String == "17:30", "\(r)") }
        }
        let fixed = try server.request("PUT", "/v1/users/ana", token: admin, json: #"{"remind_at":"19:00"}"#)
        user = try jsonObject(fixed.body)
        #expect(user["remind_at"] as? String == "19:00" && user["remind_usual"] as? Bool == false, "\(fixed)")
        let usual = try server.request("PUT", "/v1/users/ana", token: admin, json: #"{"remind_at":"usual"}"#)
        user = try jsonObject(usual.body)
        #expect(user["remind_at"] as? String == "17:30" && user["remind_usual"] as? Bool == true, "\(usual)")
        #expect(try s.statusObject("ana")["remind_at"] as? String == "17:30")
    }
}
