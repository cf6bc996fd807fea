import Foundation
import StreakTestKit
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// serve under the journal, as its unit runs it (standard error a journal stream, named by
/// `JOURNAL_STREAM`): each request an entry at debug priority with method, path, status,
/// duration and token name, never the token (SPEC §11); the server's workings no lower than info.
@Suite(
    "serve: requests in the journal", .fastTier,
    .requires(.program("/usr/bin/curl", package: "curl"), .program("/usr/bin/systemd-cat", package: "systemd")))
struct ServeJournalTests {
    @Test func eachRequestIsADebugEntryNamingItsToken() throws {
        try Journal.ensureRunning()
        let s = try Sandbox()
        s.addUser("u1")
        let token = try ServeTests.token(s, "dashboard", "read")
        let tag = "streakd-test-" + String(UUID().uuidString.prefix(8)).lowercased()
        let socket = s.dir.appendingPathComponent("api.sock").path
        // As systemd does: standard error a stream to journald, JOURNAL_STREAM its device:inode.
        let serve = try Spawned(
            {
                let p = Process()
                p.executableURL = URL(fileURLWithPath: "/usr/bin/systemd-cat")
                p.arguments = [
                    "-t", tag, "/bin/sh", "-c",
                    "JOURNAL_STREAM=$(stat -L -c %d:%i /proc/self/fd/2) exec \"$0\" serve --store \"$1\" --listen \"unix:$2\"",
                    streakdBinary, s.store, socket,
                ]
                p.environment = s.environment.merging(["PATH": "/usr/bin:/bin"]) { $1 }
                return p
            }(), stdin: nil)
        for _ in 0..<100 where !FileManager.default.fileExists(atPath: socket) { usleep(50_000) }
        let curl = { (auth: [String]) in
            run(
                ["/usr/bin/curl", "-s", "-o", "/dev/null", "-w", "%{http_code}", "--unix-socket", socket]
                    + auth + ["http://localhost/v1/users/u1"])
        }
        #expect(curl(["-H", "Authorization: Bearer \(token)"]).out == "200")
        #expect(curl([]).out == "401")
        kill(serve.process.processIdentifier, SIGTERM)
        _ = serve.wait()
        let entries = try Journal.entries(["SYSLOG_IDENTIFIER=\(tag)"], count: 3)
        let requests = entries.filter { ($0["MESSAGE"] as? String)?.hasPrefix("request ") == true }
        let lines = requests.map { "\($0["PRIORITY"] ?? "") \($0["MESSAGE"] ?? "")" }
        #expect(requests.count == 2, "\(lines)")
        #expect(
            lines.first?.hasPrefix("7 request duration=") == true
                && lines.first?.hasSuffix("method=GET path=/v1/users/u1 status=200 token=dashboard") == true,
            "\(lines)")
        #expect(lines.last?.hasSuffix("status=401 token=-") == true, "\(lines)")
        #expect(!entries.contains { "\($0)".contains(token) }, "the token itself is never logged")
        let debug = entries.filter { $0["PRIORITY"] as? String == "7" }
        #expect(debug.count == requests.count, "only the requests at debug: \(entries.map { $0["MESSAGE"] ?? "" })")
    }
}
