import Foundation
import StreakCore
import StreakTestKit
import Testing

/// The API's resources beyond a single check-in (SPEC §11): users, batches, streaks, badges,
/// freezes, preview and the OpenAPI document, each answering what the command line prints.
@Suite(
    "serve: users, batches, streaks, badges, freezes, preview", .fastTier,
    .requires(.program("/usr/bin/curl", package: "curl")))
struct ServeResourceTests {
    @Test func usersArePutReadAndDeletedAsTheCommandLineShowsThem() throws {
        let s = try Sandbox()
        let admin = try ServeTests.token(s, "ops", "admin")
        let read = try ServeTests.token(s, "dash", "read")
        let server = try Server(s, listen: "127.0.0.1:0")
        let created = try server.request("PUT", "/v1/users/ana", token: admin, json: #"{"tz":"Asia/Tokyo"}"#)
        #expect(created.status == 201, "\(created)")
        #expect(created.body == s.run(["user", "list", "-o", "json"]).out, "user list -o json's object")
        let updated = try server.request("PUT", "/v1/users/ana", token: admin, json: #"{"remind_at":"21:00"}"#)
        #expect(updated.status == 200, "\(updated)")
        let user = try jsonObject(updated.body)
        #expect(user["timezone"] as? String == "Asia/Tokyo" && user["remind_at"] as? String == "21:00", "kept")
        let conflict = try server.request(
            "PUT", "/v1/users/ana", token: admin, json: #"{"tz":"Asia/Tokyo"}"#, headers: ["If-None-Match: *"])
        #expect(conflict.status == 409, "\(conflict)")
        let noZone = try server.request("PUT", "/v1/users/bo", token: admin, json: "{}")
        #expect(noZone.status == 422 && noZone.body.contains(#""pointer":"/tz""#), "\(noZone)")
        let badZone = try server.request("PUT", "/v1/users/bo", token: admin, json: #"{"tz":"Europe/Berln"}"#)
        #expect(badZone.status == 422 && badZone.body.contains(#""pointer":"/tz""#), "\(badZone)")
        // SPEC §11: a value that does not parse is 400, one that parses and is refused 422.
        for (body, status, pointer) in [
            (#"{"tz":"UTC","remind_at":"8:00"}"#, 400, "/remind_at"), (#"{"tz":"UTC","lang":"!!"}"#, 400, "/lang"),
            (#"{"tz":"UTC","remind_at":"20:07"}"#, 422, "/remind_at"), (#"{"tz":"UTC","lang":"fr"}"#, 422, "/lang"),
        ] {
            let r = try server.request("PUT", "/v1/users/bo", token: admin, json: body)
            #expect(r.status == status && r.body.contains(#""pointer":"\#(pointer)""#), "\(body): \(r)")
        }
        let unknownField = try server.request("PUT", "/v1/users/bo", token: admin, json: #"{"zone":"UTC"}"#)
        #expect(unknownField.status == 400 && unknownField.body.contains(#""pointer":"/zone""#), "\(unknownField)")
        let forbidden = try server.request("PUT", "/v1/users/bo", token: read, json: #"{"tz":"UTC"}"#)
        #expect(forbidden.status == 403)
        let got = try server.request("GET", "/v1/users/ana", token: read)
        #expect(got.status == 200 && got.body == updated.body)
        // A client that percent-encodes each path segment: `%40` is `@`, `%61` is `a`.
        let mail = try server.request("PUT", "/v1/users/eve%40example.com", token: admin, json: #"{"tz":"UTC"}"#)
        #expect(mail.status == 201 && mail.body.contains(#""user":"eve@example.com""#), "\(mail)")
        #expect(try server.request("GET", "/v1/users/eve@example.com", token: read).status == 200)
        #expect(try server.request("GET", "/v1/users/%61na", token: read).body == updated.body)
        // HEAD wherever GET is: the GET's status and headers, no body.
        let head = try server.request("HEAD", "/v1/users/ana", token: read)
        #expect(head.status == 200 && head.header("content-type") == "application/json", "\(head)")
        let deleted = try server.request("DELETE", "/v1/users/ana", token: admin)
        #expect(deleted.status == 204 && deleted.header("content-type") == nil, "no content, so no type: \(deleted)")
        #expect(try server.request("GET", "/v1/users/ana", token: read).status == 404)
        let gone = try server.request("DELETE", "/v1/users/ana", token: admin)
        #expect(
            gone.status == 404 && gone.body.contains(#""detail":"unknown user \"ana\""}"#), "no hint to add: \(gone)")
        let notAnID = try server.request("GET", "/v1/users/-bad", token: read)
        #expect(notAnID.status == 404 && notAnID.body.contains(#"\"-bad\" is not a user id; use"#), "\(notAnID)")
        #expect(try server.request("DELETE", "/v1/users/eve%40example.com", token: admin).status == 204)
        #expect(s.run(["user", "list", "-o", "json"]).out.isEmpty, "all the user's data gone")
    }

    @Test func aBatchIsAllOrNothingAsImportIs() throws {
        let s = try Sandbox()
        s.addUser("u1")
        s.addUser("u2")
        let ingest = try ServeTests.token(s, "app", "ingest")
        let server = try Server(s, listen: "127.0.0.1:0")
        let lines = [
            #"{"user":"u1","at":"2026-11-20T09:00:00Z","id":"a"}"#, "",
            #"{"user":"u2","at":"2026-11-21T09:00:00Z"}"#,
            #"{"user":"nobody","at":"2026-11-21T09:00:00Z"}"#,
        ].joined(separator: "\n")
        let ndjson = ["Content-Type: application/x-ndjson"]
        let refused = try server.request("POST", "/v1/checkins", token: ingest, body: lines, headers: ndjson)
        #expect(refused.status == 422 && refused.header("content-type") == "application/problem+json", "\(refused)")
        let body = try jsonObject(refused.body)
        #expect(body["stored"] as? Int == 0)
        let rejected = try #require(body["rejected"] as? [[String: Any]])
        #expect(rejected.count == 1 && rejected[0]["index"] as? Int == 2, "blank lines are no items: \(rejected)")
        // An app is told the request that adds a user, not a command.
        let errors = try #require(rejected[0]["errors"] as? [[String: Any]])
        #expect(errors.first?["detail"] as? String == ServeTests.unknownUser("nobody"), "\(errors)")
        #expect(try s.statusObject("u1")["total_checkins"] as? Int == 0, "nothing stored")

        let skipped = try server.request(
            "POST", "/v1/checkins?skip_invalid=true", token: ingest, body: lines, headers: ndjson)
        #expect(skipped.status == 200, "\(skipped)")
        #expect(
            skipped.body.hasPrefix(#"{"stored":2,"duplicates":0,"rejected":[{"index":2,"errors":[{"pointer":"/user""#))
        // The same items as a JSON array: the one with an id is a duplicate now.
        let array = #"[{"user":"u1","at":"2026-11-20T09:00:00Z","id":"a"},{"user":"u1","at":"2026-11-21T10:00:00Z"}]"#
        let again = try server.request("POST", "/v1/checkins", token: ingest, json: array)
        #expect(again.body == #"{"stored":1,"duplicates":1,"rejected":[]}"# + "\n", "\(again)")
        #expect(try s.statusObject("u1")["current"] as? Int == 2)

        let malformed = try server.request("POST", "/v1/checkins", token: ingest, json: #"[{"user":"u1"}, 7]"#)
        #expect(malformed.status == 400 && malformed.body.contains(#""pointer":"/1""#), "\(malformed)")
        let tooMany = (0...10_000).map {
            #"{"user":"u1","at":"2026-11-20T09:\#(String(format: "%02d", $0 % 60)):00Z"}"#
        }
        let over = try server.request(
            "POST", "/v1/checkins", token: ingest, body: tooMany.joined(separator: "\n"), headers: ndjson)
        #expect(over.status == 413, "\(over)")
        let plain = try server.request(
            "POST", "/v1/checkins", token: ingest, body: lines, headers: ["Content-Type: text/plain"])
        #expect(plain.status == 415)
        let badFlag = try server.request("POST", "/v1/checkins?skip_invalid=yes", token: ingest, json: "[]")
        #expect(badFlag.status == 400 && badFlag.body.contains(#""parameter":"skip_invalid""#), "\(badFlag)")
    }

    /// A batch stores what `import` stores of the same lines (it runs import's checks, sort and
    /// store): plain lines and one import reads in full, an event id given twice, CRLF endings.
    @Test func aBatchStoresWhatImportStoresOfTheSameLines() throws {
        let lines = [
            #"{"user":"u1","at":"2026-11-20T09:00:00Z","id":"a","meta":{"k":"v","n":2}}"#,
            #"{"user":"u\u0031","at":"2026-11-21T09:00:00Z","streak":"gym"}"#,
            #"{"user":"u1","at":"2026-11-21T10:00:00Z","id":"a"}"#,
            #"{"user":"u2","at":"2026-11-19T23:30:00Z","tz":"Asia/Tokyo"}"#,
            #"{"user":"u2","at":"2026-11-21T09:00:00"}"#, "  ",
            #"{"user":"u2","at":"2026-11-20T09:00:00Z"}"#,
        ]
        func sandbox() throws -> Sandbox {
            let s = try Sandbox()
            s.addUser("u1")
            s.addUser("u2")
            return s
        }
        let api = try sandbox()
        let server = try Server(api, listen: "127.0.0.1:0")
        let batch = try server.request(
            "POST", "/v1/checkins?skip_invalid=true", token: try ServeTests.token(api, "app", "ingest"),
            body: lines.joined(separator: "\r\n") + "\r\n", headers: ["Content-Type: application/x-ndjson"])
        #expect(
            batch.body.hasPrefix(#"{"stored":4,"duplicates":1,"rejected":[{"index":4,"errors":[{"pointer":"/at""#),
            "\(batch)")
        let cli = try sandbox()
        #expect(
            cli.run(["import", "--skip-invalid", try cli.file("b.jsonl", lines.joined(separator: "\n"))]).code == 0)
        for (user, streak) in [("u1", "daily"), ("u1", "gym"), ("u2", "daily")] {
            #expect(api.status(user, streak: streak) == cli.status(user, streak: streak), "\(user)/\(streak)")
        }
    }

    @Test func streaksBadgesAndFreezesAnswerStatusAndBadgesObjects() throws {
        let s = try Sandbox()
        s.addUser("u1")
        try s.importLines((15...21).map { #"{"user":"u1","at":"2026-11-\#($0)T09:00:00Z"}"# })
        let read = try ServeTests.token(s, "dash", "read")
        let admin = try ServeTests.token(s, "ops", "admin")
        let server = try Server(s, listen: "127.0.0.1:0")
        let streaks = try server.request("GET", "/v1/users/u1/streaks", token: read)
        let printed = s.run(["status", "u1", "-o", "json"]).out.split(separator: "\n").joined(separator: ",")
        #expect(streaks.status == 200 && streaks.body == "[" + printed + "]\n", "\(streaks)")
        let badges = try server.request("GET", "/v1/users/u1/badges", token: read)
        let listed = s.run(["badges", "u1", "-o", "json"]).out.split(separator: "\n").joined(separator: ",")
        #expect(badges.status == 200 && badges.body == "[" + listed + "]\n")
        #expect(try server.request("GET", "/v1/users/nobody/badges", token: read).status == 404)

        let freezes = "/v1/users/u1/streaks/daily/freezes"
        let denied = try server.request("POST", freezes, token: read, json: #"{"action":"add"}"#)
        #expect(denied.status == 403)
        // The one freeze (freeze.max is 1) used for tomorrow, then granted again.
        let used = try server.request("POST", freezes, token: admin, json: #"{"action":"use","date":"2026-11-22"}"#)
        #expect(used.status == 200 && used.body == s.status(), "\(used)")
        #expect(try jsonObject(used.body)["freezes"] as? Int == 0)
        let added = try server.request("POST", freezes, token: admin, json: #"{"action":"add"}"#)
        #expect(added.status == 200 && added.body == s.status(), "\(added)")
        #expect(try jsonObject(added.body)["freezes"] as? Int == 1)
        let again = try server.request("POST", freezes, token: admin, json: #"{"action":"use","date":"2026-11-22"}"#)
        #expect(
            again.status == 422
                && again.body.contains(#""errors":[{"pointer":"/date","detail":"2026-11-22 is frozen already"}]"#),
            "the date is what is refused: \(again)")
        let past = try server.request("POST", freezes, token: admin, json: #"{"action":"use","date":"2026-11-01"}"#)
        #expect(past.status == 422, "\(past)")
        #expect(
            past.body
                == #"{"type":"about:blank","title":"Unprocessable Content","status":422,"detail":"the freeze is not allowed","errors":[{"pointer":"/date","detail":"2026-11-01 has begun or ended already; freeze today (2026-11-21) or a coming date"}]}"#
                + "\n")
        let wrong = try server.request("POST", freezes, token: admin, json: #"{"action":"spend"}"#)
        #expect(wrong.status == 400 && wrong.body.contains(#""pointer":"/action""#))
    }

    @Test func previewStreamsWhatTheCommandPrintsAndTheDocumentIsServed() throws {
        let s = try Sandbox()
        for u in ["u1", "u2", "u3"] { s.addUser(u, tz: "America/New_York") }
        try s.importLines(["u1", "u2", "u3"].map { #"{"user":"\#($0)","at":"2026-11-20T15:00:00Z"}"# })
        let read = try ServeTests.token(s, "dash", "read")
        let server = try Server(s, listen: "127.0.0.1:0")
        let preview = try server.request("GET", "/v1/preview?until=3d", token: read)
        #expect(preview.status == 200 && preview.header("content-type") == "application/x-ndjson")
        let printed = s.run(["preview", "--until", "3d", "-o", "json"]).out
        #expect(!printed.isEmpty && preview.body == printed, "\(preview)")
        let one = try server.request("GET", "/v1/preview?until=3d&user=u2&kind=at_risk", token: read)
        #expect(one.body == s.run(["preview", "--until", "3d", "--user", "u2", "--kind", "at_risk", "-o", "json"]).out)
        let bad = try server.request("GET", "/v1/preview?until=soon", token: read)
        #expect(bad.status == 400 && bad.body.contains(#""parameter":"until""#), "\(bad)")
        #expect(try server.request("GET", "/v1/preview?user=nobody", token: read).status == 404)
        let badUser = try server.request("GET", "/v1/preview?user=-bad", token: read)
        #expect(badUser.status == 400 && badUser.body.contains(#""parameter":"user""#), "\(badUser)")

        #expect(try server.request("GET", "/v1/health").status == 200)
        // Answers made before any route (no such path, a wrong method) are counted too.
        #expect(try server.request("GET", "/v1/nothing").status == 404)
        #expect(try server.request("DELETE", "/metrics", token: read).status == 405)
        let metrics = try server.request("GET", "/metrics", token: read)
        #expect(metrics.status == 200 && metrics.header("content-type")?.hasPrefix("text/plain; version=0.0.4") == true)
        #expect(metrics.body.contains(#"streakd_api_requests_total{route="/v1/health",status="200"} 1"#), "\(metrics)")
        #expect(metrics.body.contains(#"streakd_api_requests_total{route="other",status="404"} 1"#), "\(metrics)")
        #expect(metrics.body.contains(#"streakd_api_requests_total{route="/metrics",status="405"} 1"#), "\(metrics)")
        #expect(metrics.body.contains("streakd_users 3"), "the store's metrics, as streakd metrics prints them")
        let open = try server.request("GET", "/metrics", token: read, headers: ["Accept: application/openmetrics-text"])
        #expect(
            open.header("content-type")?.hasPrefix("application/openmetrics-text") == true
                && open.body.hasSuffix("# EOF\n"))
        #expect(try server.request("GET", "/metrics").status == 401)

        let document = try server.request("GET", "/openapi.json")
        let file = try String(contentsOfFile: packageRoot + "/docs/openapi.json", encoding: .utf8)
        #expect(document.status == 200 && document.body == file, "docs/openapi.json, as it is")
        // The document names every member a streak object has, and every kind preview takes.
        let schemas = try #require((try jsonObject(file)["components"] as? [String: Any])?["schemas"] as? [String: Any])
        let streakSchema = try #require(schemas["Streak"] as? [String: Any])
        let streak = try jsonObject(server.request("GET", "/v1/users/u1/streaks/daily", token: read).body)
        let properties = try #require(streakSchema["properties"] as? [String: Any])
        #expect(
            Set(properties.keys) == Set(streak.keys)
                && Set(streakSchema["required"] as? [String] ?? []) == Set(streak.keys))
        for kind in NotificationKind.allCases {
            #expect(
                try server.request("GET", "/v1/preview?kind=\(kind.rawValue)", token: read).status == 200
                    && file.contains(#""\#(kind.rawValue)""#), "\(kind)")
        }
    }

    /// A history stored over HTTP notifies exactly as the same history from `streakd checkin`: the
    /// next tick's badges, then the evening's reminder, word for word at a real hook.
    @Test func checkinsOverHTTPNotifyAsTheCommandLineOnes() throws {
        try Journal.ensureRunning()
        let user = "h" + String(UUID().uuidString.prefix(8)).lowercased()
        let days = (15...21).map { "2026-11-\($0)T09:00:00Z" }
        func sandbox() throws -> (Sandbox, config: String, objects: String) {
            let s = try Sandbox()
            s.addUser(user, tz: "Europe/Berlin")
            let objects = s.dir.appendingPathComponent("objects").path
            let config = try s.file(
                "streakd.toml",
                """
                [[hooks]]
                name = "keep"
                command = ["/bin/sh", "-c", "cat >> '\(objects)'; echo >> '\(objects)'"]
                """)
            return (s, config, objects)
        }
        let (cli, cliConfig, cliObjects) = try sandbox()
        for (i, at) in days.enumerated() {
            let meta = i == days.count - 1 ? ["--meta", "kind=social"] : []
            #expect(cli.run(["checkin", user, "--at", at, "--id", "e\(i)"] + meta).code == 0)
        }
        let (http, httpConfig, httpObjects) = try sandbox()
        let ingest = try ServeTests.token(http, "app", "ingest")
        let server = try Server(http, listen: "127.0.0.1:0")
        for (i, at) in days.enumerated() {
            let meta = i == days.count - 1 ? #","meta":{"kind":"social"}"# : ""
            let r = try server.request(
                "POST", "/v1/users/\(user)/checkins", token: ingest, json: #"{"at":"\#(at)","id":"e\#(i)"\#(meta)}"#)
            #expect(r.status == 201, "\(r)")
        }
        server.stop()
        for now in ["2026-11-21T11:15:00Z", "2026-11-22T19:00:00Z"] {
            cli.now = now
            http.now = now
            let (a, b) = (cli.run(["tick", "--config", cliConfig]), http.run(["tick", "--config", httpConfig]))
            #expect(a.code == 0 && b.code == 0 && a.out == b.out, "\(a)\n\(b)")
        }
        let sent = try String(contentsOfFile: cliObjects, encoding: .utf8)
        #expect(sent.contains(#""badge":"social_1""#) && sent.contains(#""kind":"at_risk""#), "\(sent)")
        #expect(try String(contentsOfFile: httpObjects, encoding: .utf8) == sent)
        #expect(cli.run(["badges", user, "-o", "json"]).out == http.run(["badges", user, "-o", "json"]).out)
    }
}
