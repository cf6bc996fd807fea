import Foundation
import StreakTestKit
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// Two hosts running `streakd serve` on one PostgreSQL database (SPEC §11: several servers
/// behind any load balancer): each a process in a UTS namespace of its own, clients on both at
/// once for the same users, with the same ids (each id stored once: one 201, the other 200) and
/// without (each 201 one check-in). Nothing is stored twice, and both answer what `status` shows.
@Suite(
    "serve on two hosts, one PostgreSQL database", .systemTier("two hosts on a PostgreSQL cluster, under load"),
    .timeLimit(TestTier.systemLimit),
    .requires(
        .postgres, .root, .unshare, .program("/usr/bin/curl", package: "curl"),
        .program("/usr/bin/python3", package: "python3")))
struct ServeHostsTests {
    @Test func twoHostsStoreEachCheckinOnceAndAgreeWithStatus() throws {
        let hosts = try Hosts()
        let users = (1...4).map { "u\($0)" }
        for user in users { #expect(try hosts.run("alpha", ["user", "add", user, "--tz", "UTC"]).code == 0) }
        let added = try hosts.run("alpha", ["token", "add", "load", "--scope", "ingest"])
        try #require(added.code == 0, "\(added)")
        let token = added.out.trimmingCharacters(in: .whitespacesAndNewlines)

        let servers = try ["alpha", "beta"].map { try hosts.start($0, ["serve", "--listen", "127.0.0.1:0"]) }
        defer {
            for server in servers {
                kill(server.process.processIdentifier, SIGTERM)
                #expect(server.wait(timeout: .seconds(15)).code == 0, "serve exits 0 after SIGTERM")
            }
        }
        let ports = try servers.map { try Self.port(of: $0) }
        let script = try hosts.file("load.py", serveLoadClients)
        func load(_ mode: String) throws -> [String] {
            let r = run(
                [
                    "/usr/bin/python3", script, "load", ports.joined(separator: ","), token,
                    users.joined(separator: ","),
                    "4", mode,
                ], timeout: .seconds(120))
            try #require(r.code == 0, "\(r)")
            return r.out.split(separator: "\n").map(String.init)
        }
        let same = try load("same")
        let plain = try load("plain")
        let distinct = Set(same.map { $0.split(separator: " ")[1] })
        let created = plain.filter { $0.hasPrefix("201 ") }.count
        #expect(same.filter { $0.hasPrefix("201 ") }.count == distinct.count, "one 201 per id")
        var total = 0
        for user in users {
            let status = try hosts.run("gamma", ["status", user, "--streak", "daily", "-o", "json"])
            total +=
                ((try? JSONSerialization.jsonObject(with: Data(status.out.utf8))) as? [String: Any])?[
                    "total_checkins"] as? Int ?? 0
            for port in ports {
                let answer = run([
                    "/usr/bin/curl", "-sS", "--max-time", "30", "-H", "Authorization: Bearer " + token,
                    "http://127.0.0.1:\(port)/v1/users/\(user)/streaks/daily",
                ])
                #expect(answer.out == status.out, "\(user) on port \(port)")
            }
        }
        print("serve on two hosts: \(distinct.count) ids sent to both, \(created) without ids, \(total) stored")
        #expect(distinct.count > 20 && total == distinct.count + created, "nothing stored twice, nothing lost")
    }

    /// The port a `serve` listens on, once it says so ("streakd: listening on 127.0.0.1:PORT").
    static func port(of server: Spawned) throws -> String {
        let deadline = ContinuousClock.now + .seconds(60)
        while ContinuousClock.now < deadline {
            let err = (try? String(contentsOf: server.errURL, encoding: .utf8)) ?? ""
            if let line = err.split(separator: "\n").first(where: { $0.hasPrefix("streakd: listening on ") }) {
                return String(line.split(separator: ":").last!)
            }
            try #require(server.process.isRunning, "serve ended: \(err)")
            Thread.sleep(forTimeInterval: 0.05)
        }
        throw HooksNeverRan()
    }
}
