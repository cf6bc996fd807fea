import Foundation
import StreakTestKit
import Testing

/// `streakd serve` under load (SPEC §11): 10,000 idle connections at once; kill -9 and SIGTERM
/// while several clients check in (every acknowledged check-in stored); two `serve` processes
/// on one store. Slow (tens of seconds each, a debug build accepts a few hundred connections a
/// second on two loaded cores): the system tier.
@Suite(
    "serve under load", .systemTier("load, kills and 10,000 connections: tens of seconds each"),
    .timeLimit(TestTier.systemLimit),
    .requires(.program("/usr/bin/curl", package: "curl"), .program("/usr/bin/python3", package: "python3")))
struct ServeLoadTests {
    static let users = (1...4).map { "u\($0)" }

    @Test func tenThousandIdleConnections() throws {
        let s = try Sandbox()
        s.addUser("u1")
        let (server, r) = try ServeHostileTests.attack(
            s, config: "[api]\nidle_timeout_seconds = 600\n", phases: "idle", idle: 10_000)
        // Fewer where the hard limit of open files is lower (the client says how many it opened).
        let opened = r["idle_open"] as? Int ?? 0
        #expect(opened >= min(10_000, 5_000), "\(r)")
        #expect(r["idle_accepted"] as? Int == opened, "serve holds every one: \(r)")
        #expect(r["idle_others"] as? Int == 200 && (r["idle_others_seconds"] as? Double ?? 99) < 5, "\(r)")
        #expect((r["rss_idle_mb"] as? Int ?? 999) < 400, "serve's memory with \(opened) connections: \(r)")
        #expect(r["final_health"] as? Int == 200, "\(r)")
        server.stop()
    }

    /// kill -9 while 8 clients check in: every check-in acknowledged (2xx) is stored: replayed
    /// after a restart, each is answered 200 (a replay), none 201 (lost).
    @Test func killNineUnderLoadLosesNothingAcknowledged() throws {
        let s = try Sandbox()
        let (server, token) = try Self.prepared(s)
        let load = try Self.load(s, [server], token: token, seconds: 30)
        Thread.sleep(forTimeInterval: 3)
        kill(server.child.process.processIdentifier, SIGKILL)
        server.stopped = true
        _ = server.child.wait(timeout: .seconds(10))
        let acked = try Self.finish(load)
        let lost = try Self.replay(s, acked: acked, token: token)
        print("serve, kill -9 under load: acked \(acked.count), stored \(acked.count - lost), lost \(lost)")
        #expect(acked.count > 50 && lost == 0, "acked \(acked.count), lost \(lost)")
    }

    /// SIGTERM while 8 clients check in: exit 0 within 11 s, nothing acknowledged lost.
    @Test func sigtermUnderLoadExitsCleanlyAndLosesNothing() throws {
        let s = try Sandbox()
        let (server, token) = try Self.prepared(s)
        let load = try Self.load(s, [server], token: token, seconds: 30)
        Thread.sleep(forTimeInterval: 3)
        let sent = ContinuousClock.now
        kill(server.child.process.processIdentifier, SIGTERM)
        server.stopped = true
        let outcome = server.child.wait(timeout: .seconds(20))
        let took = ContinuousClock.now - sent
        #expect(outcome.code == 0 && took < .seconds(11), "exit \(outcome.code) after \(took): \(outcome.err)")
        let acked = try Self.finish(load)
        let lost = try Self.replay(s, acked: acked, token: token)
        print("serve, SIGTERM under load: exit \(outcome.code) after \(took); acked \(acked.count), lost \(lost)")
        #expect(acked.count > 50 && lost == 0, "acked \(acked.count), lost \(lost)")
    }

    /// Two `serve` processes on one store, clients on both at once with the same ids (each id
    /// stored once: one 201, the other 200) and without (each 201 a check-in): the store holds
    /// exactly the distinct check-ins, and both servers answer what `status` shows.
    @Test func twoServesOnOneStoreStoreEachCheckinOnce() throws {
        let s = try Sandbox()
        let (first, token) = try Self.prepared(s)
        let second = try Server(s, listen: "127.0.0.1:0")
        let same = try Self.load(s, [first, second], token: token, seconds: 4, mode: "same")
        let plain = try Self.load(s, [first, second], token: token, seconds: 4, mode: "plain")
        let sameAcked = try Self.finish(same)
        let plainAcked = try Self.finish(plain)
        // "same": each id sent to both; "plain": each 201 is one check-in.
        let distinct = Set(sameAcked.map { $0.split(separator: " ")[1] })
        let created = plainAcked.filter { $0.hasPrefix("201 ") }.count
        var total = 0
        for user in Self.users {
            let status = s.status(user)
            total += try jsonObject(status)["total_checkins"] as? Int ?? 0
            for server in [first, second] {
                let answer = try server.request("GET", "/v1/users/\(user)/streaks/daily", token: token)
                #expect(answer.body == status, "\(user) on \(server.base)")
            }
        }
        print("two serves, one store: \(distinct.count) ids sent twice, \(created) without ids, \(total) stored")
        #expect(total == distinct.count + created, "nothing stored twice, nothing lost")
        #expect(sameAcked.filter { $0.hasPrefix("201 ") }.count == distinct.count, "one 201 per id")
        first.stop()
        second.stop()
    }

    // MARK: the clients

    static func prepared(_ s: Sandbox) throws -> (Server, String) {
        for user in users { s.addUser(user) }
        let token = try ServeTests.token(s, "load", "ingest")
        return (try Server(s, listen: "127.0.0.1:0"), token)
    }

    /// The load: 8 clients (2 per user), each on a keep-alive connection to one of `servers` in
    /// turn, for `seconds` or until its server is gone. mode "unique": a fresh id per check-in;
    /// "same": both clients of a user send the same ids, each to another server; "plain": no id.
    static func load(_ s: Sandbox, _ servers: [Server], token: String, seconds: Int, mode: String = "unique")
        throws -> Spawned
    {
        let script = try s.file("load.py", clients)
        let ports = servers.map { String($0.base.split(separator: ":").last!) }.joined(separator: ",")
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
        process.arguments = [script, "load", ports, token, users.joined(separator: ","), String(seconds), mode]
        return try Spawned(process, stdin: nil)
    }

    /// The acknowledged check-ins: "STATUS ID" lines.
    static func finish(_ load: Spawned) throws -> [String] {
        let outcome = load.wait(timeout: .seconds(120))
        try #require(outcome.code == 0, "\(outcome)")
        return outcome.out.split(separator: "\n").map(String.init)
    }

    /// Sends each acknowledged check-in again to a fresh serve: the number answered 201 (so not
    /// stored before: lost).
    static func replay(_ s: Sandbox, acked: [String], token: String) throws -> Int {
        let server = try Server(s, listen: "127.0.0.1:0")
        defer { server.stop() }
        let file = try s.file("acked.txt", acked.joined(separator: "\n") + "\n")
        let port = String(server.base.split(separator: ":").last!)
        let result = run(["/usr/bin/python3", try s.file("load.py", clients), "replay", port, token, file])
        try #require(result.code == 0, "\(result)")
        return Int(result.out.trimmingCharacters(in: .whitespacesAndNewlines)) ?? -1
    }

    static let clients = serveLoadClients
}
