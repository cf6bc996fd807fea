import Foundation
import StreakTestKit
import Testing

/// `serve` on a PostgreSQL server that stops answering (SIGSTOP: a wedged server, or one on a host
/// that froze): requests are answered 503 with `Retry-After` within seconds (SPEC §11: "503 when
/// the store is busy or unreachable", never a hang), not after the minute a tick's statements
/// may take; once the server resumes, serve serves again without a restart.
@Suite(
    "serve: a stopped PostgreSQL",
    .systemTier("a PostgreSQL cluster of its own, stopped for about 15 s"), .requires(.postgresPrograms))
struct ServeStoppedStoreTests {
    @Test func requestsAnswer503WithinSecondsAndServeRecovers() throws {
        let cluster = try PostgresCluster.start()
        defer { cluster.discard() }
        let s = try Sandbox()
        let url = cluster.url
        #expect(s.runBare(["user", "add", "u1", "--tz", "Europe/Berlin", "--store", url]).code == 0)
        let added = s.runBare(["token", "add", "app", "--scope", "ingest", "--store", url])
        try #require(added.code == 0, "\(added)")
        let token = added.out.trimmingCharacters(in: .whitespacesAndNewlines)

        let process = Process()
        process.executableURL = URL(fileURLWithPath: streakdBinary)
        process.arguments = ["serve", "--listen", "127.0.0.1:0", "--store", url]
        process.environment = ["PATH": "/usr/bin:/bin", "LANG": "C.UTF-8"].merging(s.environment) { $1 }
        let server = try Server(s, child: try Spawned(process, stdin: nil))
        let path = "/v1/users/u1/checkins"
        let first = try server.request("POST", path, token: token, json: #"{"id":"e1"}"#)
        #expect(first.status == 201, "\(first)")

        cluster.signalAll(SIGSTOP)
        defer { cluster.signalAll(SIGCONT) }
        let started = ContinuousClock.now
        let checkin = try server.start("POST", path, token: token, json: #"{"id":"e2"}"#)
        let health = try server.start("GET", "/v1/health")
        let (stored, healthy) = (try server.reply(checkin), try server.reply(health))
        let waited = ContinuousClock.now - started
        #expect(stored.status == 503 && stored.header("retry-after") == "1", "\(stored)")
        #expect(stored.header("content-type") == "application/problem+json", "\(stored)")
        #expect(healthy.status == 503 && healthy.body.contains("unavailable"), "\(healthy)")
        // PGSettings.serving: a 10 s statement timeout, 2 s more on the client's side, and at most
        // a second for the cancel; a tick's connection would have waited 66 s.
        #expect(waited < .seconds(17), "answered after \(waited)")

        cluster.signalAll(SIGCONT)
        let again = try server.request("POST", path, token: token, json: #"{"id":"e2"}"#)
        #expect(again.status == 201, "the check-in refused with 503 was not stored: \(again)")
        let status = s.runBare(["status", "u1", "-o", "json", "--store", url])
        #expect(status.out.contains(#""total_checkins":2"#), "\(status)")
        #expect(try server.request("GET", "/v1/health").status == 200)
        server.stop()
    }
}
