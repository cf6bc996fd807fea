import Foundation
import StreakTestKit
import Testing

/// `streakd serve` over real HTTP on loopback (a Unix socket, and TCP on a port the system
/// picks), against the sandbox's store, with curl as the client.
@Suite("serve: the HTTP API", .fastTier, .requires(.program("/usr/bin/curl", package: "curl")))
struct ServeTests {
    @Test func checkinsOverAUnixSocketAnswerTheStreakAndReplay() throws {
        let s = try Sandbox()
        s.addUser("u1")
        let ingest = try Self.token(s, "app", "ingest")
        let server = try Server(s, listen: "unix:" + s.dir.path + "/api.sock")

        let mode = try FileManager.default.attributesOfItem(atPath: s.dir.path + "/api.sock")[.posixPermissions]
        #expect(mode as? Int == 0o660, "owner and group may connect")
        let health = try server.request("GET", "/v1/health")
        #expect(health.status == 200, "\(health)")
        let object = try jsonObject(health.body)
        #expect(object["status"] as? String == "ok" && object["last_tick"] is NSNull)

        let first = try server.request(
            "POST", "/v1/users/u1/checkins", token: ingest, json: #"{"at":"2026-11-21T09:00:00Z","id":"e1"}"#)
        #expect(first.status == 201, "\(first)")
        #expect(first.header("content-type") == "application/json")
        #expect(first.body == s.status(), "the answer is status -o json's object, after the commit")
        let replay = try server.request(
            "POST", "/v1/users/u1/checkins", token: ingest, json: #"{"at":"2026-11-21T09:00:00Z","id":"e1"}"#)
        #expect(replay.status == 200 && replay.body == first.body, "\(replay)")
        // The id is the user's: a replay naming another streak answers the one it was stored for.
        let elsewhere = try server.request(
            "POST", "/v1/users/u1/checkins", token: ingest, json: #"{"streak":"reading","id":"e1"}"#)
        #expect(elsewhere.status == 200 && elsewhere.body == first.body, "\(elsewhere)")

        // An Idempotency-Key stands for a missing id; no body at all is a check-in now.
        let keyed = try server.request(
            "POST", "/v1/users/u1/checkins", token: ingest, headers: ["Idempotency-Key: k-1"])
        #expect(keyed.status == 201, "\(keyed)")
        let again = try server.request(
            "POST", "/v1/users/u1/checkins", token: ingest, headers: ["Idempotency-Key: k-1"])
        #expect(again.status == 200 && again.body == keyed.body)
        #expect(try s.statusObject()["total_checkins"] as? Int == 2)
        #expect(try s.statusObject()["today_count"] as? Int == 2)

        let streak = try server.request("GET", "/v1/users/u1/streaks/daily", token: ingest)
        #expect(streak.status == 200 && streak.body == s.status(), "\(streak)")
        let other = try server.request("GET", "/v1/users/u1/streaks/reading", token: ingest)
        #expect(try other.status == 200 && jsonObject(other.body)["current"] as? Int == 0)
        server.stop()
        #expect(!FileManager.default.fileExists(atPath: s.dir.path + "/api.sock"), "the socket is removed")
    }

    @Test func tokensAreCheckedOnEveryRequest() throws {
        let s = try Sandbox()
        s.addUser("u1")
        let read = try Self.token(s, "dashboard", "read")
        let ingest = try Self.token(s, "app", "ingest")
        let server = try Server(s, listen: "127.0.0.1:0")
        let path = "/v1/users/u1/checkins"
        let none = try server.request("POST", path, json: "{}")
        #expect(none.status == 401 && none.header("www-authenticate") == "Bearer", "\(none)")
        #expect(none.header("content-type") == "application/problem+json")
        #expect(
            none.body
                == #"{"type":"about:blank","title":"Unauthorized","status":401,"detail":"this request needs a token: Authorization: Bearer TOKEN"}"#
                + "\n")
        let wrong = try server.request("POST", path, token: ingest + "0", json: "{}")
        #expect(wrong.status == 401 && wrong.header("www-authenticate")?.hasPrefix("Bearer") == true)
        let scope = try server.request("POST", path, token: read, json: "{}")
        #expect(scope.status == 403, "\(scope)")
        #expect(
            (try jsonObject(scope.body))["detail"] as? String
                == #"the token "dashboard" has the scope read; this request needs ingest or more"#)
        #expect(try server.request("GET", "/v1/users/u1/streaks/daily", token: read).status == 200)
        #expect(try server.request("GET", "/v1/users/u1/streaks/daily").status == 401)

        // A use is noted beside the request (it never waits for another process's write).
        var (list, used) = (s.run(["token", "list", "-o", "json"]), [String]())
        for _ in 0..<20 {
            list = s.run(["token", "list", "-o", "json"])
            used = try jsonLines(list.out).map { "\($0["name"]!) \($0["last_used"]!)" }
            if used.last != "dashboard <null>" { break }
            usleep(100_000)
        }
        #expect(used == ["app <null>", "dashboard \(fixedNow)"], "a use is noted once the token passed: \(list)")
        // A removed token fails from the next request on.
        #expect(s.run(["token", "remove", "dashboard"]).code == 0)
        #expect(try server.request("GET", "/v1/users/u1/streaks/daily", token: read).status == 401)
        // The server keeps the tokens it has seen; each request still checks its own in its
        // transaction: a check-in with a token removed meanwhile is refused and not stored.
        #expect(try server.request("POST", path, token: ingest, json: "{}").status == 201)
        #expect(s.run(["token", "remove", "app"]).code == 0)
        let removed = try server.request("POST", path, token: ingest, json: "{}")
        #expect(removed.status == 401 && removed.header("www-authenticate")?.contains("invalid_token") == true)
        #expect(try server.request("POST", path, token: ingest, json: #"{"at":7}"#).status == 401, "before a 400")
        #expect(try s.statusObject()["total_checkins"] as? Int == 1)
        server.stop()
    }

    /// On PostgreSQL, serve opens a connection for each request thread before it listens (at most
    /// half the server's spare ones: parallel tests share one cluster), and says how many.
    /// A GET whose token's use is to be noted does not wait for another process's write (the
    /// note waited out the 30 s busy time-out behind a tick or an import).
    @Test(.enabled(if: !TestStore.postgres)) func aReadDoesNotWaitForAnotherProcesssWrite() throws {
        let s = try Sandbox()
        s.addUser("u1")
        let read = try Self.token(s, "dashboard", "read")
        let server = try Server(s, listen: "127.0.0.1:0")
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
        process.arguments = [
            "-c",
            "import sqlite3, sys, time; c = sqlite3.connect(sys.argv[1], isolation_level=None); "
                + "c.execute('BEGIN IMMEDIATE'); time.sleep(6)", s.store,
        ]
        let holder = try Spawned(process, stdin: nil)
        usleep(700_000)
        let started = ContinuousClock.now
        let answer = try server.request("GET", "/v1/users/u1/streaks/daily", token: read)
        let took = ContinuousClock.now - started
        #expect(answer.status == 200 && took < .seconds(3), "\(answer) after \(took)")
        _ = holder.wait()
        server.stop()
    }

    @Test(.enabled(if: TestStore.postgres)) func postgresConnectionsAreOpenBeforeTheFirstRequest() throws {
        let s = try Sandbox()
        let server = try Server(s, listen: "127.0.0.1:0")
        let err = try String(contentsOf: server.child.errURL, encoding: .utf8)
        let said = err.split(separator: "\n").first { $0.contains(" of 64 connections to the store open") }
        let open = said.flatMap { Int($0.dropFirst("streakd: ".count).prefix { $0.isNumber }) }
        #expect(open.map { $0 > 1 } == true, "\(err)")
        let connected = try TestPostgres.psql(
            s.store,
            "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()")
        #expect(Int(connected.trimmingCharacters(in: .whitespacesAndNewlines)) == open, "no request made yet: \(err)")
        server.stop()
    }

    @Test func badRequestsAreProblemDetailsNamingTheField() throws {
        let s = try Sandbox()
        s.addUser("u1")
        let token = try Self.token(s, "app", "admin")
        let server = try Server(s, listen: "127.0.0.1:0")
        let path = "/v1/users/u1/checkins"

        func problem(_ reply: Reply) throws -> (status: Int, pointer: String?, detail: String?) {
            #expect(reply.header("content-type") == "application/problem+json", "\(reply)")
            let o = try jsonObject(reply.body)
            let first = (o["errors"] as? [[String: Any]])?.first
            return (reply.status, first?["pointer"] as? String, first?["detail"] as? String)
        }
        let at = try problem(server.request("POST", path, token: token, json: #"{"at":"yesterday"}"#))
        #expect(at.status == 400 && at.pointer == "/at")
        // The command line takes more forms ("yesterday", as log --since: issue 34); one it does not
        // take is a usage error naming the option.
        let cli = s.run(["checkin", "u1", "--at", "soonish"])
        #expect(cli.code == 64 && cli.err.hasPrefix("streakd: error: --at: \"soonish\" is not a time"), "\(cli)")
        let future = try problem(server.request("POST", path, token: token, json: #"{"at":"2026-11-22T11:00:00Z"}"#))
        #expect(future.status == 422 && future.pointer == "/at")
        #expect(
            future.detail
                == "2026-11-22T11:00:00Z is in the future (now is 2026-11-21T11:00:00Z); a check-in may be at most 5 minutes ahead"
        )
        let zone = try problem(server.request("POST", path, token: token, json: #"{"tz":"Mars/Olympus"}"#))
        #expect(zone.status == 422 && zone.pointer == "/tz")
        let field = try problem(server.request("POST", path, token: token, json: #"{"when":"now"}"#))
        #expect(field.status == 400 && field.pointer == "/when")
        #expect(field.detail == "unknown field; valid fields: streak, at, tz, id, meta")
        let type = try problem(server.request("POST", path, token: token, json: #"{"at":7}"#))
        #expect(type.status == 400 && type.pointer == "/at" && type.detail == "must be a string, not an integer")
        #expect(try problem(server.request("POST", path, token: token, json: #"{"at":"#)).status == 400)
        let array = try server.request("POST", path, token: token, json: "[]")
        #expect(array.status == 400, "\(array)")
        #expect(try jsonObject(array.body)["detail"] as? String == "malformed JSON: the body must be one object {...}")
        let unknown = try problem(server.request("POST", "/v1/users/nobody/checkins", token: token, json: "{}"))
        #expect(unknown.status == 422 && unknown.detail == Self.unknownUser("nobody"), "\(unknown)")
        let text = try server.request(
            "POST", path, token: token, body: "{}", headers: ["Content-Type: text/plain"])
        #expect(text.status == 415, "\(text)")
        let large = try server.request(
            "POST", path, token: token, json: #"{"id":""# + String(repeating: "x", count: 70_000) + #""}"#)
        #expect(large.status == 413 && large.header("content-type") == "application/problem+json", "\(large)")
        #expect(try jsonObject(large.body)["detail"] as? String == "the body is larger than 64 KiB")
        let lost = try server.request("GET", "/v2/nothing", token: token)
        #expect(lost.status == 404 && lost.header("content-type") == "application/problem+json", "\(lost)")
        let method = try server.request("DELETE", path, token: token)
        #expect(method.status == 405 && method.header("allow") == "POST", "\(method)")
        #expect(try jsonObject(method.body)["detail"] as? String == "/v1/users/u1/checkins takes POST, not DELETE")
        #expect(try server.request("POST", "/v1/health").header("allow") == "GET, HEAD")
        let nobody = try server.request("GET", "/v1/users/nobody/streaks/daily", token: token)
        #expect(try nobody.status == 404 && problem(nobody).detail == Self.unknownUser("nobody"), "\(nobody)")
        #expect(try s.statusObject()["total_checkins"] as? Int == 0, "nothing refused was stored")
        server.stop()
    }

    @Test func listenAddressesAreCheckedAndATakenPortIsUnavailable() throws {
        let s = try Sandbox()
        let valid = "use unix:PATH, HOST:PORT or [V6]:PORT, such as 127.0.0.1:8080"
        let host = try s.run(["serve", "--listen", "localhost"], within: .seconds(60))
        #expect(host.code == 64 && host.err == error(#"--listen: "localhost" has no port; "# + valid), "\(host)")
        let v6 = try s.run(["serve", "--listen", "::1:8080"], within: .seconds(60))
        #expect(v6.code == 64 && v6.err == error("--listen: an IPv6 address goes in brackets, as [::1]:8080; " + valid))
        // No runtime folder in the sandbox's environment: no default socket.
        let none = try s.run(["serve"], within: .seconds(60))
        #expect(none.code == 64 && none.err.contains("neither RUNTIME_DIRECTORY nor XDG_RUNTIME_DIR is set"), "\(none)")
        // A file that is not a socket is never replaced, and no process is blamed for it.
        let notes = try s.file("notes.txt", "keep me\n")
        let file = try s.run(["serve", "--listen", "unix:" + notes], within: .seconds(60))
        #expect(file.code == 64 && file.err.contains("\(notes) exists and is not a socket"), "\(file)")
        #expect(try String(contentsOfFile: notes, encoding: .utf8) == "keep me\n")
        let server = try Server(s, listen: "127.0.0.1:0")
        let taken = try s.run(
            ["serve", "--listen", String(server.base.dropFirst("http://".count))], within: .seconds(60))
        #expect(
            taken.code == 69 && taken.err.contains("serve: cannot listen on 127.0.0.1:")
                && taken.err.hasSuffix(": the address is in use by another process (ss -ltnp shows which)\n"),
            "\(taken)")
        #expect(try server.request("GET", "/v1/health").status == 200, "the first server goes on")
        server.stop()
    }

    /// Clients retrying at once, with one id and without: one 201 per check-in, the others 200
    /// replays, each answer the object `status` shows for the count it stored, nothing stored twice.
    @Test func concurrentCheckinsAreStoredOnce() throws {
        let s = try Sandbox()
        s.addUser("u1")
        let token = try Self.token(s, "app", "ingest")
        let server = try Server(s, listen: "127.0.0.1:0")
        let path = "/v1/users/u1/checkins"
        let same = try (0..<6).map { _ in
            try server.start("POST", path, token: token, json: #"{"at":"2026-11-21T09:00:00Z","id":"same"}"#)
        }
        let keyed = try (0..<6).map { _ in try server.start("POST", path, token: token, headers: ["Idempotency-Key: k"])
        }
        let plain = try (0..<4).map { _ in try server.start("POST", path, token: token, json: "{}") }
        let sameReplies = try same.map(server.reply)
        let keyedReplies = try keyed.map(server.reply)
        let plainReplies = try plain.map(server.reply)
        #expect(sameReplies.map(\.status).sorted() == [200, 200, 200, 200, 200, 201], "\(sameReplies)")
        #expect(keyedReplies.map(\.status).sorted() == [200, 200, 200, 200, 200, 201], "\(keyedReplies)")
        #expect(plainReplies.allSatisfy { $0.status == 201 }, "check-ins without ids are never merged")
        #expect(try s.statusObject()["total_checkins"] as? Int == 6)
        let counts = try (sameReplies + keyedReplies + plainReplies).map {
            try jsonObject($0.body)["today_count"] as? Int
        }
        #expect(counts.allSatisfy { ($0 ?? 0) >= 1 && ($0 ?? 0) <= 6 } && counts.contains(6), "\(counts)")
        server.stop()
    }

    /// The API's word for an unknown user: the request that adds one.
    static func unknownUser(_ id: String) -> String {
        #"unknown user "\#(id)"; add it first with PUT /v1/users/\#(id) and a body such as {"tz":"Europe/Berlin"} (a token of scope admin)"#
    }

    static func token(_ s: Sandbox, _ name: String, _ scope: String) throws -> String {
        let r = s.run(["token", "add", name, "--scope", scope])
        try #require(r.code == 0, "\(r)")
        return String(r.out.dropLast())
    }
}

/// One answer, as curl received it.
struct Reply: CustomStringConvertible {
    var status: Int
    var headers: [(String, String)]
    var body: String

    func header(_ name: String) -> String? { headers.first { $0.0 == name }?.1 }
    var description: String { "\(status) \(headers) \(body)" }
}

/// A `streakd serve` child of a sandbox, stopped with SIGTERM (it must exit 0 within 15 s).
final class Server {
    let child: Spawned
    let sandbox: Sandbox
    /// curl's arguments to reach it, and the URL's start.
    var reach: [String]
    var base: String
    var stopped = false

    /// Every address it listens on, in its order ("streakd: listening on …" lines).
    let addresses: [String]

    convenience init(_ s: Sandbox, listen: String, sourceLocation: SourceLocation = #_sourceLocation) throws {
        try self.init(s, child: s.spawn(["serve", "--listen", listen]))
    }

    /// A `serve` started (by the test, or by something that runs it), once it listens on
    /// `sockets` sockets; requests go to the first until `use` says otherwise.
    init(_ s: Sandbox, child: Spawned, sockets: Int = 1) throws {
        sandbox = s
        self.child = child
        let deadline = ContinuousClock.now + .seconds(60)
        var found: [String] = []
        while found.count < sockets {
            let err = (try? String(contentsOf: child.errURL, encoding: .utf8)) ?? ""
            found = err.split(separator: "\n").filter { $0.hasPrefix("streakd: listening on ") }.map {
                String($0.dropFirst("streakd: listening on ".count))
            }
            if found.count >= sockets { break }
            if !child.process.isRunning || ContinuousClock.now > deadline {
                kill(child.process.processIdentifier, SIGKILL)
                throw ServerFailed(what: "serve did not listen within 60 s: \(child.wait(timeout: .seconds(10)))")
            }
            Thread.sleep(forTimeInterval: 0.02)
        }
        addresses = found
        (reach, base) = Self.reaching(found[0])
    }

    /// Sends the next requests to `address`, one of `addresses`.
    func use(_ address: String) { (reach, base) = Self.reaching(address) }

    static func reaching(_ address: String) -> ([String], String) {
        address.hasPrefix("unix:")
            ? (["--unix-socket", String(address.dropFirst(5))], "http://localhost") : ([], "http://" + address)
    }

    deinit { if !stopped { stop() } }

    /// SIGTERM; the server exits 0 within 15 s.
    func stop(sourceLocation: SourceLocation = #_sourceLocation) {
        stopped = true
        kill(child.process.processIdentifier, SIGTERM)
        let outcome = child.wait(timeout: .seconds(15), sourceLocation: sourceLocation)
        #expect(
            outcome.code == 0 && !outcome.timedOut, "serve after SIGTERM: \(outcome)", sourceLocation: sourceLocation)
    }

    func request(
        _ method: String, _ path: String, token: String? = nil, json: String? = nil, body: String? = nil,
        headers: [String] = []
    ) throws -> Reply {
        try reply(start(method, path, token: token, json: json, body: body, headers: headers))
    }

    /// A request under way: curl started, not waited for (requests at once).
    func start(
        _ method: String, _ path: String, token: String? = nil, json: String? = nil, body: String? = nil,
        headers: [String] = []
    ) throws -> (String, Spawned) {
        // curl's -I, not -X HEAD, which would wait for the body the length announces.
        var args = reach + ["-sS", "--max-time", "20"] + (method == "HEAD" ? ["-I"] : ["-X", method])
        args += ["-D", "/dev/stderr", "-o", "/dev/stdout"]
        if let token { args += ["-H", "Authorization: Bearer " + token] }
        for h in headers { args += ["-H", h] }
        if let payload = json ?? body {
            if json != nil { args += ["-H", "Content-Type: application/json"] }
            args += ["--data-binary", "@" + (try sandbox.file("body-\(UUID().uuidString)", payload))]
        }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/curl")
        process.arguments = args + [base + path]
        return ("\(method) \(path)", try Spawned(process, stdin: nil))
    }

    /// The answer of a request started, once curl is done (killed past 30 s: a failure).
    func reply(_ started: (String, Spawned)) throws -> Reply {
        let outcome = started.1.wait(timeout: .seconds(30))
        guard outcome.code == 0 else { throw ServerFailed(what: "curl \(started.0): \(outcome)") }
        var lines = outcome.err.components(separatedBy: "\r\n")
        let statusLine = lines.removeFirst().split(separator: " ")
        let fields = lines.compactMap { line -> (String, String)? in
            guard let colon = line.firstIndex(of: ":") else { return nil }
            return (line[..<colon].lowercased(), line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces))
        }
        return Reply(status: statusLine.count > 1 ? Int(statusLine[1]) ?? 0 : 0, headers: fields, body: outcome.out)
    }
}

struct ServerFailed: Error, CustomStringConvertible {
    var what: String
    var description: String { what }
}
