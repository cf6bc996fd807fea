import Foundation
import StreakTestKit
import Testing

/// SPEC §14 over HTTP: pauses, resume and repair (scope admin, the token's name as the author),
/// each refusal a 422 with the command line's reason. Now is Saturday 2026-11-21, 12:00 in
/// Europe/Berlin.
@Suite("serve: pause, resume and repair", .fastTier, .requires(.program("/usr/bin/curl", package: "curl")))
struct ServeForgivenessTests {
    @Test func pausesAreRecordedRefusedAndResumed() throws {
        let s = try Sandbox()
        s.addUser()
        try s.importLines(sevenDays)
        let admin = try ServeTests.token(s, "ops", "admin")
        let read = try ServeTests.token(s, "dashboard", "read")
        let server = try Server(s, listen: "127.0.0.1:0")
        let path = "/v1/users/u1/pauses"

        let paused = try server.request(
            "POST", path, token: admin, json: #"{"from":"2026-11-21","until":"2026-11-27"}"#)
        #expect(paused.status == 201, "\(paused)")
        #expect(
            paused.body
                == #"[{"user":"u1","streak":"daily","from":"2026-11-21","until":"2026-11-27","at":"2026-11-21T11:00:00Z","author":"ops"}]"#
                + "\n")
        // GET …/streaks shows the pause and the repairs left, as status -o json does.
        let streaks = try server.request("GET", "/v1/users/u1/streaks", token: read)
        #expect(streaks.status == 200 && streaks.body == "[" + s.status().dropLast() + "]\n", "\(streaks)")
        let daily = try #require(try JSONSerialization.jsonObject(with: Data(streaks.body.utf8)) as? [[String: Any]])
            .first
        #expect(daily?["paused_until"] as? String == "2026-11-27" && daily?["repairs_left"] as? Int == 1)

        let past = try server.request("POST", path, token: admin, json: #"{"from":"2026-11-20","until":"2026-11-22"}"#)
        #expect(past.status == 422 && past.header("content-type") == "application/problem+json", "\(past)")
        #expect(
            past.body
                == #"{"type":"about:blank","title":"Unprocessable Content","status":422,"detail":"the pause is not allowed","errors":[{"pointer":"/from","detail":"u1 (daily): 2026-11-20 is in the past; a pause begins today (2026-11-21) or later"}]}"#
                + "\n")
        let overlap = try server.request(
            "POST", path, token: admin, json: #"{"streak":"daily","from":"2026-11-27","until":"2026-11-28"}"#)
        #expect(overlap.status == 422)
        #expect(try detail(overlap) == "u1 (daily): it overlaps the pause from 2026-11-21 through 2026-11-27")
        let long = try server.request("POST", path, token: admin, json: #"{"from":"2026-12-01","until":"2027-01-15"}"#)
        #expect(
            try long.status == 422
                && detail(long) == "u1 (daily): 46 days is too long a pause; at most 30 days (pause.max_days)")
        let backwards = try server.request(
            "POST", path, token: admin, json: #"{"from":"2026-12-05","until":"2026-12-01"}"#)
        #expect(
            try backwards.status == 422 && detail(backwards) == "u1 (daily): 2026-12-01 is before from (2026-12-05)")

        // A date that is no date, or a request that names a streak and all of them: 400.
        let date = try server.request("POST", path, token: admin, json: #"{"from":"2026-11-31","until":"2026-12-01"}"#)
        #expect(try date.status == 400 && detail(date) == #""2026-11-31" is not a date; use YYYY-MM-DD"#, "\(date)")
        #expect(try pointer(date) == "/from")
        let both = try server.request(
            "POST", path, token: admin, json: #"{"streak":"daily","all":true,"from":"2026-12-01","until":"2026-12-02"}"#
        )
        #expect(try both.status == 400 && pointer(both) == "/all")
        let missing = try server.request("POST", path, token: admin, json: #"{"from":"2026-12-01"}"#)
        #expect(
            try missing.status == 400 && pointer(missing) == "/until" && detail(missing) == "missing; it is required")
        #expect(try server.request("POST", path, token: read, json: "{}").status == 403)
        let nobody = try server.request(
            "POST", "/v1/users/nobody/pauses", token: admin, json: #"{"from":"2026-12-01","until":"2026-12-02"}"#)
        #expect(nobody.status == 404, "\(nobody)")
        let get = try server.request("GET", path, token: admin)
        #expect(get.status == 405 && get.header("allow") == "POST", "\(get)")

        // all: every streak or none: the workout streak's pause refuses the whole request.
        let workout = try server.request(
            "POST", path, token: admin, json: #"{"streak":"workout","from":"2026-12-20","until":"2026-12-25"}"#)
        #expect(workout.status == 201, "\(workout)")
        let all = try server.request(
            "POST", path, token: admin, json: #"{"all":true,"from":"2026-12-24","until":"2026-12-26"}"#)
        #expect(
            try all.status == 422
                && detail(all) == "u1 (workout): it overlaps the pause from 2026-12-20 through 2026-12-25")
        #expect(try s.statusObject()["paused_until"] as? String == "2026-11-27", "nothing of it was recorded")

        // Resume: the daily streak by default, ?streak=S, or ?all=true.
        let current = path + "/current"
        let resumed = try server.request("DELETE", current, token: admin)
        #expect(resumed.status == 200, "\(resumed)")
        #expect(
            resumed.body
                == #"[{"user":"u1","streak":"daily","from":"2026-11-21","until":null,"removed":true}]"# + "\n")
        #expect(try s.statusObject()["paused_until"] is NSNull)
        let again = try server.request("DELETE", current, token: admin)
        #expect(
            again.body
                == #"{"type":"about:blank","title":"Unprocessable Content","status":422,"detail":"there is no pause to resume","errors":[{"parameter":"streak","detail":"u1 has no pause to resume for daily (none in force or ahead)"}]}"#
                + "\n", "\(again)")
        let query = try server.request("DELETE", current + "?all=maybe", token: admin)
        #expect(try query.status == 400 && detail(query) == #""maybe" is not a boolean; use true or false"#)
        #expect(try server.request("DELETE", current + "?streak=Work", token: admin).status == 400)
        #expect(try server.request("DELETE", current + "?streak=daily&all=true", token: admin).status == 400)
        let every = try server.request("DELETE", current + "?all=true", token: admin)
        #expect(try every.status == 200 && (jsonArray(every.body).map { $0["streak"] as? String }) == ["workout"])
        let workoutNow = try server.request("GET", "/v1/users/u1/streaks/workout", token: read)
        #expect(try jsonObject(workoutNow.body)["paused_until"] is NSNull)
        server.stop()
    }

    @Test func aRepairIsRecordedOrRefusedWithTheReason() throws {
        let s = try Sandbox()
        try s.file("config/streakd/streakd.toml", "[freeze]\ninitial = 0\n")
        s.addUser()
        s.addUser("u2")
        s.addUser("u3")
        // u1: 2026-11-12 … 11-19, then 11-20 missed; u3 broke on 2026-11-06, long ago.
        try s.importLines(
            (12...19).map { checkinLine("2026-11-\($0)T18:00:00+01:00", id: "r\($0)") }
                + (1...5).map { checkinLine("2026-11-0\($0)T18:00:00+01:00", id: "o\($0)", user: "u3") })
        s.now = "2026-11-21T20:00:00Z"
        let admin = try ServeTests.token(s, "ops", "admin")
        var server = try Server(s, listen: "127.0.0.1:0")

        let nothing = try server.request("POST", "/v1/users/u2/streaks/daily/repair", token: admin)
        #expect(
            nothing.body
                == #"{"type":"about:blank","title":"Unprocessable Content","status":422,"detail":"the repair is not allowed","errors":[{"parameter":"streak","detail":"u2 (daily): nothing broken: the streak has no break to repair"}]}"#
                + "\n", "\(nothing)")
        let late = try server.request("POST", "/v1/users/u3/streaks/daily/repair", token: admin)
        #expect(
            try late.status == 422
                && (detail(late) ?? "").hasPrefix("u3 (daily): too late: the streak broke on 2026-11-06"))
        let fields = try server.request(
            "POST", "/v1/users/u1/streaks/daily/repair", token: admin, json: #"{"date":"x"}"#)
        #expect(try fields.status == 400 && detail(fields) == "unknown field; this body takes no fields", "\(fields)")
        let text = try server.request(
            "POST", "/v1/users/u1/streaks/daily/repair", token: admin, body: "x", headers: ["Content-Type: text/plain"])
        #expect(text.status == 415)
        #expect(try server.request("POST", "/v1/users/u1/streaks/Daily/repair", token: admin).status == 404)
        #expect(try server.request("POST", "/v1/users/nobody/streaks/daily/repair", token: admin).status == 404)

        let repaired = try server.request("POST", "/v1/users/u1/streaks/daily/repair", token: admin, json: "{}")
        #expect(repaired.status == 201, "\(repaired)")
        #expect(
            repaired.body
                == #"{"user":"u1","streak":"daily","date":"2026-11-20","through":"2026-11-20","current":8,"repairs_left":0,"at":"2026-11-21T20:00:00Z","author":"ops"}"#
                + "\n")
        let streak = try jsonObject(server.request("GET", "/v1/users/u1/streaks/daily", token: admin).body)
        #expect(streak["current"] as? Int == 8 && streak["repairs_left"] as? Int == 0)
        server.stop()

        // The next day, a second break: none left within 720 hours.
        s.now = "2026-11-22T12:00:00Z"
        server = try Server(s, listen: "127.0.0.1:0")
        let none = try server.request("POST", "/v1/users/u1/streaks/daily/repair", token: admin)
        #expect(
            try none.status == 422
                && detail(none)
                    == "u1 (daily): none left: 1 repair within 720 hours (repair.per_30_days = 1); the next from 2026-12-21T20:00:00Z",
            "\(none)")
        server.stop()
    }

    func detail(_ reply: Reply) throws -> String? {
        let o = try jsonObject(reply.body)
        return ((o["errors"] as? [[String: Any]])?.first?["detail"] as? String) ?? o["detail"] as? String
    }

    func pointer(_ reply: Reply) throws -> String? {
        ((try jsonObject(reply.body))["errors"] as? [[String: Any]])?.first?["pointer"] as? String
    }

    func jsonArray(_ text: String) throws -> [[String: Any]] {
        try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [[String: Any]])
    }
}
