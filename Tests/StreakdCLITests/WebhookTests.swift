import Foundation
import StreakTestKit
import Testing

/// `[[webhooks]]` (SPEC §12) as the built binary delivers them, to scripts/webhook-receiver on
/// loopback, which checks every request's signature.
@Suite("webhooks", .fastTier)
struct WebhookTests {
    /// Users with 7 days of check-ins ending yesterday in Berlin: each has an `at_risk` due at
    /// 2026-11-21T19:00:00Z. Ids unique to this run, since the journal outlives it.
    func setUp(_ s: Sandbox, users n: Int) throws -> [String] {
        let tag = String(UUID().uuidString.prefix(8)).lowercased()
        let ids = (0..<n).map { "w\(tag)-\($0)" }
        var lines: [String] = []
        for id in ids {
            s.addUser(id)
            lines += (14...20).map { checkinLine("2026-11-\($0)T18:00:00+01:00", user: id) }
        }
        try s.importLines(lines)
        return ids
    }

    func keys(_ ids: [String]) -> [String] { ids.map { "at_risk/\($0)/daily/2026-11-21" }.sorted() }

    func signed(_ receiver: WebhookReceiver, _ extra: String = "") -> String {
        "url = \"\(receiver.url())\"\nsecret = \"\(WebhookReceiver.secret)\"\n" + extra
    }

    /// Each key POSTed once with a valid signature and the hook's JSON object; the requests
    /// share a few kept-alive connections.
    @Test func eachKeyOnceSignedOverKeptConnections() throws {
        try Journal.ensureRunning()
        let s = try Sandbox()
        let ids = try setUp(s, users: 40)
        let receiver = try WebhookReceiver(in: s)
        let config = try s.webhookConfig(signed(receiver, "concurrency = 4"))
        s.now = "2026-11-21T19:00:00Z"
        let r = s.run(["tick", "--config", config])
        #expect(r.code == 0, "\(r)")
        let requests = try receiver.requests()
        #expect(requests.compactMap { $0["id"] as? String }.sorted() == keys(ids))
        #expect(requests.allSatisfy { $0["valid"] as? Bool == true })
        let first = try #require(requests.first)
        let headers = try #require(first["headers"] as? [String: String])
        #expect(headers["content-type"] == "application/json")
        let body = try jsonObject(try #require(first["body"] as? String))
        #expect(body["key"] as? String == first["id"] as? String && body["kind"] as? String == "at_risk")
        let connections = Set(requests.compactMap { $0["connection"] as? Int })
        #expect(connections.count <= 4, "\(connections.count) connections for \(requests.count) requests")
        #expect(s.run(["tick", "--config", config]).code == 0)
        #expect(try receiver.requests().count == 40)
    }

    /// 500s are failures tried again on the back-off; once the receiver recovers, each is
    /// delivered, with the same webhook-id and a valid signature every time.
    @Test func failuresAreTriedAgainUntilTheReceiverRecovers() throws {
        try Journal.ensureRunning()
        let s = try Sandbox()
        let ids = try setUp(s, users: 3)
        let receiver = try WebhookReceiver(in: s)
        let config = try s.webhookConfig(signed(receiver))
        try receiver.plan(#"{"status": 500}"#)
        s.now = "2026-11-21T19:00:00Z"
        var r = s.run(["tick", "--config", config])
        #expect(r.code == 75, "\(r)")
        #expect(r.err.contains("failed webhook:phone (HTTP 500 Internal Server Error)"), "\(r.err)")
        #expect(try receiver.requests().count == 3)
        try receiver.plan(#"{"status": 200}"#)
        s.now = "2026-11-21T19:00:30Z"
        r = s.run(["tick", "--config", config])
        #expect(try receiver.requests().count == 3, "a retry before its back-off ran out")
        s.now = "2026-11-21T19:01:00Z"
        r = s.run(["tick", "--config", config])
        #expect(r.code == 0, "\(r)")
        let requests = try receiver.requests()
        #expect(requests.count == 6)
        #expect(requests.allSatisfy { $0["valid"] as? Bool == true })
        #expect(
            requests.filter { $0["status"] as? Int == 200 }.compactMap { $0["id"] as? String }.sorted() == keys(ids))
    }

    /// A 429 with Retry-After: that delivery is not tried before the time it names, and the
    /// lane leaves the rest for the next run.
    @Test func retryAfterIsTheEarliestNextTry() throws {
        try Journal.ensureRunning()
        let s = try Sandbox()
        let ids = try setUp(s, users: 3)
        let receiver = try WebhookReceiver(in: s)
        let config = try s.webhookConfig(signed(receiver, "concurrency = 1"))
        try receiver.plan(#"{"status": 429, "retry_after": "3600"}"#)
        s.now = "2026-11-21T19:00:00Z"
        var r = s.run(["tick", "--config", config])
        #expect(r.code == 75, "\(r)")
        #expect(r.err.contains("Retry-After"), "\(r.err)")
        let throttled = try #require(try receiver.requests().first?["id"] as? String)
        #expect(try receiver.requests().count == 1)
        try receiver.plan(#"{"status": 200}"#)
        s.now = "2026-11-21T19:05:00Z"
        r = s.run(["tick", "--config", config])
        #expect(r.code == 75, "\(r)")
        var requests = try receiver.requests()
        #expect(requests.count == 3)
        #expect(!requests.dropFirst().contains { $0["id"] as? String == throttled })
        s.now = "2026-11-21T20:00:00Z"
        r = s.run(["tick", "--config", config])
        #expect(r.code == 0, "\(r)")
        requests = try receiver.requests()
        #expect(requests.count == 4 && requests.last?["id"] as? String == throttled)
        #expect(Set(requests.compactMap { $0["id"] as? String }) == Set(keys(ids)))
    }

    /// A Retry-After past the end of an `at_risk`'s date: the first run after the date ended
    /// records it expired without waiting for that time, and leaves nothing pending.
    @Test func aWaitPastItsDateEndsWithTheDate() throws {
        try Journal.ensureRunning()
        let s = try Sandbox()
        _ = try setUp(s, users: 1)
        let receiver = try WebhookReceiver(in: s)
        let config = try s.webhookConfig(signed(receiver, "kinds = [\"at_risk\"]"))
        try receiver.plan(#"{"status": 503, "retry_after": "86400"}"#)
        s.now = "2026-11-21T19:00:00Z"
        var r = s.run(["tick", "--config", config])
        #expect(r.code == 75, "\(r)")
        s.now = "2026-11-21T22:45:00Z"
        r = s.run(["tick", "--config", config])
        #expect(r.code == 75 && r.err.contains("1 pending"), "its date is not over: \(r)")
        s.now = "2026-11-21T23:15:00Z"
        r = s.run(["tick", "--config", config])
        #expect(r.code == 0 && r.err.contains("no longer fresh: 2026-11-21 has ended"), "\(r)")
        #expect(try receiver.requests().count == 1)
    }

    /// A user and password in the URL are sent as HTTP Basic authentication, as curl sends them,
    /// and never shown by `config check`.
    @Test func aUserAndPasswordInTheURLAreBasicAuthentication() throws {
        try Journal.ensureRunning()
        let s = try Sandbox()
        _ = try setUp(s, users: 1)
        let receiver = try WebhookReceiver(in: s)
        let url = receiver.url().replacingOccurrences(of: "http://", with: "http://ana:hunter%402@")
        let config = try s.webhookConfig("url = \"\(url)\"\nsecret = \"\(WebhookReceiver.secret)\"\n")
        let check = s.run(["config", "check", "--config", config])
        #expect(check.code == 0 && !check.out.contains("hunter") && !check.out.contains("ana:"), "\(check)")
        s.now = "2026-11-21T19:00:00Z"
        #expect(s.run(["tick", "--config", config]).code == 0)
        let headers = try #require(try receiver.requests().first?["headers"] as? [String: String])
        #expect(headers["authorization"] == "Basic " + Data("ana:hunter@2".utf8).base64EncodedString(), "\(headers)")
    }

    /// 410 Gone is dead at once: never tried again.
    @Test func goneIsDeadAtOnce() throws {
        try Journal.ensureRunning()
        let s = try Sandbox()
        _ = try setUp(s, users: 2)
        let receiver = try WebhookReceiver(in: s)
        let config = try s.webhookConfig(signed(receiver))
        try receiver.plan(#"{"status": 410}"#)
        s.now = "2026-11-21T19:00:00Z"
        var r = s.run(["tick", "--config", config])
        #expect(r.err.contains("2 delivered, 0 failed, 2 dead"), "\(r)")
        try receiver.plan(#"{"status": 200}"#)
        s.now = "2026-11-21T21:00:00Z"
        r = s.run(["tick", "--config", config])
        #expect(r.code == 0, "\(r)")
        #expect(try receiver.requests().count == 2)
    }

    /// After a dead webhook is fixed, `deliveries retry` sends each dead key once; a second
    /// retry sends nothing already delivered.
    @Test func deliveriesRetrySendsTheDeadOnceAfterAFix() throws {
        try Journal.ensureRunning()
        let s = try Sandbox()
        let ids = try setUp(s, users: 2)
        let receiver = try WebhookReceiver(in: s)
        let config = try s.webhookConfig(signed(receiver))
        try receiver.plan(#"{"status": 410}"#)
        s.now = "2026-11-21T19:00:00Z"
        let dead = s.run(["tick", "--config", config])
        #expect(
            dead.err.contains("webhook:phone gave up on at_risk/") && dead.err.contains(" after 1 attempt: "), "\(dead)"
        )
        var r = s.run(["deliveries", "list", "--state", "dead", "--config", config])
        #expect(r.code == 0 && r.out.split(separator: "\n").count == 2, "\(r)")
        #expect(r.out.contains("dead webhook:phone at_risk/") && r.out.contains("HTTP 410 Gone"), "\(r.out)")
        try receiver.plan(#"{"status": 200}"#)
        s.now = "2026-11-21T19:30:00Z"
        r = s.run(["deliveries", "retry", "--sink", "webhook:phone", "--config", config])
        #expect(r.code == 0 && r.out == "2 dead deliveries are pending again; the next tick sends them\n", "\(r)")
        #expect(s.run(["deliveries", "list", "--state", "dead", "--config", config]).out.isEmpty)
        let put = s.run(["deliveries", "list", "--config", config]).out
        #expect(put.contains("put back, not tried since, last 2026-11-21T19:00:00Z: HTTP 410 Gone"), "\(put)")
        // A sink the configuration does not have is named, as an unknown user is, not "0 … again".
        r = s.run(["deliveries", "retry", "--sink", "webhook:phon", "--config", config])
        #expect(
            r.code == 65
                && r.err
                    == error(
                        #"--sink: the configuration (\#(config)) has no "webhook:phon"; use one of journal, desktop, webhook:phone"#
                    ),
            "\(r)")
        r = s.run(["tick", "--config", config])
        #expect(r.code == 0, "\(r)")
        r = s.run(["deliveries", "retry", "--config", config, "-o", "json"])
        #expect(r.out == #"{"retried":0}"# + "\n", "\(r)")
        r = s.run(["deliveries", "retry", "--user", "zed", "--config", config])
        #expect(r.code == 65 && r.err == error(#"--user: unknown user "zed""#), "\(r)")
        s.now = "2026-11-21T19:45:00Z"
        #expect(s.run(["tick", "--config", config]).code == 0)
        let delivered = try receiver.requests().filter { $0["status"] as? Int == 200 }
        #expect(delivered.compactMap { $0["id"] as? String }.sorted() == keys(ids))
        #expect(try receiver.requests().count == 4)
        #expect(s.run(["deliveries", "list", "--config", config]).out.isEmpty)
    }

    /// A receiver that never answers holds up its own lane only: the journal has every entry,
    /// the run ends 75 within seconds, and the webhook's deliveries wait for the next run.
    @Test func aReceiverThatNeverAnswersHoldsUpOnlyItself() throws {
        try Journal.ensureRunning()
        let s = try Sandbox()
        let ids = try setUp(s, users: 12)
        let receiver = try WebhookReceiver(in: s)
        let config = try s.webhookConfig(signed(receiver, "timeout_seconds = 1\nconcurrency = 2"))
        try receiver.plan(#"{"hang": true}"#)
        s.now = "2026-11-21T19:00:00Z"
        let start = ContinuousClock.now
        let r = try s.run(["tick", "--config", config], within: .seconds(30))
        #expect(r.code == 75, "\(r)")
        #expect(ContinuousClock.now - start < .seconds(15))
        #expect(r.err.contains("timed out after 1s"), "\(r.err)")
        let entries = try Journal.entries(ids.map { "STREAKD_USER=\($0)" }, count: 12)
        #expect(Set(entries.compactMap { $0["STREAKD_KEY"] as? String }).count == 12)
        #expect(r.err.contains("12 pending"), "\(r.err)")
    }

    /// ntfy and Gotify get the rendered title and text as those servers take them.
    @Test func ntfyAndGotifyBodiesAndHeaders() throws {
        try Journal.ensureRunning()
        let s = try Sandbox()
        let id = try setUp(s, users: 1)[0]
        let receiver = try WebhookReceiver(in: s)
        let config = try s.file(
            "streakd.toml",
            """
            badges = []

            [[webhooks]]
            name = "ntfy"
            format = "ntfy"
            url = "\(receiver.url("/streaks"))"

            [[webhooks]]
            name = "gotify"
            format = "gotify"
            url = "\(receiver.url("/message"))?token=abc"
            headers = { X-Gotify-Key = "secret-token" }

            """)
        s.now = "2026-11-21T19:00:00Z"
        let r = s.run(["tick", "--config", config])
        #expect(r.code == 0, "\(r)")
        let requests = try receiver.requests()
        #expect(requests.count == 2)
        let ntfy = try #require(requests.first { $0["path"] as? String == "/streaks" })
        let nh = try #require(ntfy["headers"] as? [String: String])
        #expect(
            ntfy["body"] as? String == "Your 7-day streak is at risk! Check in today to keep it going. 1 freeze left.")
        #expect(nh["title"] == "Streak at risk" && nh["priority"] == "3" && nh["tags"] == "streakd,at_risk")
        #expect(nh["webhook-id"] == "at_risk/\(id)/daily/2026-11-21")
        let gotify = try #require(requests.first { ($0["path"] as? String)?.hasPrefix("/message") == true })
        #expect(gotify["path"] as? String == "/message?token=abc")
        let gh = try #require(gotify["headers"] as? [String: String])
        #expect(gh["x-gotify-key"] == "secret-token" && gh["content-type"] == "application/json")
        let body = try jsonObject(try #require(gotify["body"] as? String))
        #expect(body["title"] as? String == "Streak at risk" && body["priority"] as? Int == 5)
        #expect((body["message"] as? String)?.hasPrefix("Your 7-day streak is at risk!") == true)
        // The effective configuration shows no token.
        let check = s.run(["config", "check", "--config", config])
        #expect(check.code == 0 && !check.out.contains("secret-token") && !check.out.contains("abc"), "\(check)")
    }

    /// https against a test CA: trusted through `ca_file`, refused without it.
    @Test func httpsWithAPrivateCA() throws {
        try Journal.ensureRunning()
        let s = try Sandbox()
        _ = try setUp(s, users: 1)
        let d = s.dir.path
        for argv in [
            [
                "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", d + "/ca.key", "-out", d + "/ca.pem",
                "-days",
                "2", "-subj", "/CN=streakd test CA",
            ],
            [
                "req", "-newkey", "rsa:2048", "-nodes", "-keyout", d + "/server.key", "-out", d + "/server.csr",
                "-subj",
                "/CN=127.0.0.1",
            ],
            [
                "x509", "-req", "-in", d + "/server.csr", "-CA", d + "/ca.pem", "-CAkey", d + "/ca.key",
                "-CAcreateserial",
                "-out", d + "/server.pem", "-days", "2", "-extfile",
                try s.file("san.ext", "subjectAltName=IP:127.0.0.1\n"),
            ],
        ] {
            let r = StreakTestKit.run(["/usr/bin/openssl"] + argv)
            try #require(r.code == 0, "openssl \(argv): \(r)")
        }
        let receiver = try WebhookReceiver(in: s, tls: (d + "/server.pem", d + "/server.key"))
        let url = receiver.url(scheme: "https")
        let untrusted = try s.webhookConfig(
            "url = \"\(url)\"\nsecret = \"\(WebhookReceiver.secret)\"\ntimeout_seconds = 2", name: "untrusted.toml")
        s.now = "2026-11-21T19:00:00Z"
        var r = s.run(["tick", "--config", untrusted])
        #expect(
            r.code == 75
                && r.err.contains(
                    "(TLS): the server's certificate is not trusted; give the authority that signed it as ca_file"),
            "\(r)")
        #expect(try receiver.requests().isEmpty)
        let trusted = try s.webhookConfig(
            "url = \"\(url)\"\nsecret = \"\(WebhookReceiver.secret)\"\nca_file = \"\(d)/ca.pem\"")
        #expect(s.run(["config", "check", "--config", trusted]).code == 0)
        // A key, not a certificate: config check says so, not each delivery after it.
        let key = try s.webhookConfig(
            "url = \"\(url)\"\nsecret = \"\(WebhookReceiver.secret)\"\nca_file = \"\(d)/ca.key\"", name: "key.toml")
        let check = s.run(["config", "check", "--config", key])
        #expect(check.code == 78 && check.err.contains("ca.key\" is not a PEM file of certificates"), "\(check)")
        s.now = "2026-11-21T19:01:00Z"
        r = s.run(["tick", "--config", trusted])
        #expect(r.code == 0, "\(r)")
        let requests = try receiver.requests()
        #expect(requests.count == 1 && requests.first?["valid"] as? Bool == true)
    }

    /// `config check` names the file, line and field of a webhook's problem.
    @Test func configCheckValidatesWebhooks() throws {
        let s = try Sandbox()
        let cases: [(String, String)] = [
            (
                "url = \"ftp://example.com/x\"\nsecret = \"0123456789abcdef\"",
                "streakd.toml:5: webhooks[1].url: \"ftp://example.com/x\" is not an http or https URL"
            ),
            (
                "url = \"https://example.com/x\"",
                "streakd.toml:3: webhooks[1]: webhook \"phone\" of format \"json\" needs a secret"
            ),
            (
                "url = \"https://example.com/x\"\nsecret = \"short\"",
                "streakd.toml:6: webhooks[1].secret: is 5 bytes, shorter than 16"
            ),
            (
                "url = \"https://example.com/x\"\nformat = \"xml\"",
                "streakd.toml:6: webhooks[1].format: \"xml\" is not a format"
            ),
        ]
        for (settings, message) in cases {
            let config = try s.webhookConfig(settings)
            let r = s.run(["config", "check", "--config", config])
            #expect(r.code == 78, "\(r)")
            #expect(r.err.contains(message), "\(r.err)")
        }
    }
}
