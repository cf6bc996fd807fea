import Foundation
import StreakTestKit
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// `log` on a real terminal (a tmux pane): through less, as journalctl pages, or the pager the
/// environment names; never when the output is not a terminal or with --no-pager.
@Suite(.fastTier, .serialized) struct PagerTests {
    /// A detached tmux server of its own, one pane of `columns` × `rows`, running `command` (argv,
    /// quoted for the shell tmux starts) with `env`; the command's exit status goes to a file.
    final class Pane {
        let socket = "streakd-test-\(UUID().uuidString.prefix(8))"
        let dir: URL
        var statusFile: String { dir.appendingPathComponent("status-\(socket)").path }

        init(_ argv: [String], env: [String: String], in dir: URL, columns: Int = 100, rows: Int = 12) throws {
            self.dir = dir
            let assignments = env.map { "\($0.key)=\(Self.quoted($0.value))" }.sorted().joined(separator: " ")
            let command =
                "env -i \(assignments) \(argv.map(Self.quoted).joined(separator: " ")); echo $? > \(Self.quoted(statusFile)); sleep 60"
            let r = tmux(["new-session", "-d", "-x", "\(columns)", "-y", "\(rows)", command])
            guard r.code == 0 else { throw Failure(description: "tmux new-session: \(r)") }
        }

        deinit { _ = tmux(["kill-server"]) }

        struct Failure: Error, CustomStringConvertible {
            var description: String
        }

        func tmux(_ args: [String]) -> Outcome {
            run(
                ["/usr/bin/tmux", "-L", socket, "-f", "/dev/null"] + args,
                env: ["PATH": "/usr/bin:/bin", "TERM": "xterm"])
        }

        /// What the pane shows, its trailing blank lines dropped.
        var screen: String {
            let text = tmux(["capture-pane", "-p"]).out
            var lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
            while lines.last?.trimmingCharacters(in: .whitespaces).isEmpty == true { lines.removeLast() }
            return lines.joined(separator: "\n")
        }

        func send(_ keys: String) { _ = tmux(["send-keys", keys]) }

        /// The command's exit status, once it has ended.
        var status: Int? {
            (try? String(contentsOfFile: statusFile, encoding: .utf8)).flatMap {
                Int($0.trimmingCharacters(in: .whitespacesAndNewlines))
            }
        }

        /// Waits until `condition` holds (20 s at most).
        func wait(_ what: String, _ condition: () -> Bool) throws {
            let deadline = ContinuousClock.now + .seconds(20)
            while !condition() {
                guard ContinuousClock.now < deadline else {
                    throw Failure(description: "no \(what); screen:\n\(screen)")
                }
                usleep(50_000)
            }
        }

        static func quoted(_ s: String) -> String { "'" + s.replacingOccurrences(of: "'", with: "'\\''") + "'" }
    }

    /// A store with `count` entries of one user in the journal; the environment to read them with.
    static func entries(_ count: Int) throws -> (Sandbox, user: String, env: [String: String]) {
        try Journal.ensureRunning()
        let (s, store) = try LogTests.storeSandbox()
        let u = LogTests.user("pager")
        try LogTests.write(
            (0..<count).map { TestJournal.notification("at_risk", user: u, streak: "s\($0)", store: store) }, user: u,
            total: count, in: s)
        let env = [
            "PATH": "/usr/bin:/bin", "TERM": "xterm", "LANG": "C.UTF-8", "HOME": s.dir.path, "TZ": "UTC",
            "STREAKD_STORE": s.store,
        ]
        return (s, u, env)
    }

    @Test func aLongLogWaitsInLessUntilQuit() throws {
        let (s, u, env) = try Self.entries(30)
        let pane = try Pane([streakdBinary, "log", "--user", u, "-o", "cat"], env: env, in: s.dir)
        // less shows the first screen and its long prompt (M), and waits.
        try pane.wait("less's prompt") { pane.screen.contains("lines 1-11") }
        let shown = pane.screen.split(separator: "\n")
        #expect(shown.first == "Your 7-day streak is at risk! Check in today to keep it going.")
        #expect(pane.status == nil)
        pane.send("q")
        try pane.wait("the end of streakd") { pane.status != nil }
        #expect(pane.status == 0)
    }

    @Test func aShortLogPassesThroughLessAndStays() throws {
        let (s, u, env) = try Self.entries(3)
        let pane = try Pane([streakdBinary, "log", "--user", u, "-o", "cat"], env: env, in: s.dir)
        // One screen: less quits at once (F) and leaves the text on the terminal (X).
        try pane.wait("the end of streakd") { pane.status != nil }
        #expect(pane.status == 0)
        #expect(
            pane.screen
                == Array(repeating: "Your 7-day streak is at risk! Check in today to keep it going.", count: 3)
                .joined(separator: "\n"))
    }

    @Test func quittingEarlyEndsStreakdQuietly() throws {
        let (s, u, env) = try Self.entries(400)
        let pane = try Pane([streakdBinary, "log", "--user", u], env: env, in: s.dir)
        try pane.wait("less's prompt") { pane.screen.contains("lines 1-") }
        pane.send("q")
        try pane.wait("the end of streakd") { pane.status != nil }
        #expect(pane.status == 0)
        #expect(!pane.screen.contains("error"), "\(pane.screen)")
    }

    /// SYSTEMD_PAGER, then PAGER, run by the shell, with LESS and LESSCHARSET as systemd sets them.
    @Test func theEnvironmentNamesThePager() throws {
        let (s, u, env) = try Self.entries(2)
        let seen = s.dir.appendingPathComponent("seen").path
        let pager = "sh -c 'echo \"LESS=$LESS LESSCHARSET=$LESSCHARSET\" > \(seen); wc -l >> \(seen)'"
        var pane = try Pane(
            [streakdBinary, "log", "--user", u], env: env.merging(["PAGER": "less", "SYSTEMD_PAGER": pager]) { $1 },
            in: s.dir)
        try pane.wait("the end of streakd") { pane.status != nil }
        #expect(FileManager.default.fileExists(atPath: seen), "\(pane.screen)")
        #expect(try String(contentsOfFile: seen, encoding: .utf8) == "LESS=FRXMK LESSCHARSET=utf-8\n2\n")
        try FileManager.default.removeItem(atPath: seen)
        pane = try Pane(
            [streakdBinary, "log", "--user", u],
            env: env.merging(["PAGER": pager, "SYSTEMD_LESS": "FRSXMK", "SYSTEMD_LESSCHARSET": "latin1"]) { $1 },
            in: s.dir)
        try pane.wait("the end of streakd") { pane.status != nil }
        #expect(try String(contentsOfFile: seen, encoding: .utf8) == "LESS=FRSXMK LESSCHARSET=latin1\n2\n")
        try FileManager.default.removeItem(atPath: seen)

        // No pager: --no-pager, a pager of cat or nothing, or an output that is not a terminal.
        for (args, extra) in [
            (["--no-pager"], ["PAGER": pager]), ([], ["SYSTEMD_PAGER": "cat", "PAGER": pager]), ([], ["PAGER": ""]),
        ] {
            pane = try Pane(
                [streakdBinary, "log", "--user", u, "-o", "cat"] + args, env: env.merging(extra) { $1 }, in: s.dir)
            try pane.wait("the end of streakd") { pane.status != nil }
            #expect(!FileManager.default.fileExists(atPath: seen), "\(args) \(extra)")
            #expect(pane.screen.split(separator: "\n").count == 2, "\(pane.screen)")
        }
        let piped = s.run(["log", "--user", u], env: ["PAGER": pager])
        #expect(piped.out.split(separator: "\n").count == 2 && !FileManager.default.fileExists(atPath: seen))
    }
}
