import Foundation
import StreakTestKit
import Testing

/// `log` closer to journalctl (issue 34): `-p`, `-g`, `--host` on a fleet's journal read with
/// `-D`, failed and dead lines in colour on a terminal only, `-o json-pretty`.
@Suite(.fastTier) struct LogFilterTests {
    static let fleet = "0123456789abcdef0123456789abcdef"

    /// A fleet's journal: an at_risk from web-1 and web-2 each, a failed delivery from web-1 and
    /// a dead one from web-2 (priorities 5, 5, 4, 3).
    static func fleetJournal(_ s: Sandbox) throws -> String {
        let base: UInt64 = 1_795_287_600_000_000  // 2026-11-21T19:00:00Z
        let dir = s.dir.appendingPathComponent("fleet").path
        _ = try TestJournal.remoteJournal(
            [
                (base + 1_000_000, "web-1", TestJournal.notification("at_risk", user: "ana", store: fleet)),
                (base + 2_000_000, "web-2", TestJournal.notification("at_risk", user: "bo", store: fleet)),
                (
                    base + 3_000_000, "web-1",
                    TestJournal.failed(
                        "at_risk", user: "ana", sink: "hook:chat", attempts: 1, error: "exit 7: Timeout",
                        retry: "2026-11-21T19:01:03Z", store: fleet)
                ),
                (
                    base + 4_000_000, "web-2",
                    TestJournal.dead(
                        "at_risk", user: "bo", sink: "hook:chat", attempts: 5, error: "exit 22: 503", store: fleet)
                ),
            ], in: dir)
        return dir
    }

    func users(_ r: RunResult) throws -> [String] {
        try jsonLines(r.out).map { ($0["host"] as? String ?? "?") + "/" + ($0["user"] as? String ?? "?") }
    }

    @Test func hostPriorityAndGrepNarrowAFleetsJournal() throws {
        let s = try Sandbox()
        let dir = try Self.fleetJournal(s)
        func log(_ extra: [String]) throws -> [String] {
            let r = s.runBare(["log", "-D", dir, "--store-id", Self.fleet, "-o", "json"] + extra, env: ["TZ": "UTC"])
            #expect(r.code == 0 && r.err.isEmpty, "\(extra): \(r)")
            return try users(r)
        }
        #expect(try log(["--host", "web-2"]) == ["web-2/bo", "web-2/bo"])
        #expect(try log(["--host", "web-3"]) == [])
        #expect(try log(["-p", "err"]) == ["web-2/bo"])
        #expect(try log(["--priority", "3"]) == ["web-2/bo"])
        #expect(try log(["-p", "warning"]) == ["web-1/ana", "web-2/bo"])
        #expect(try log(["-p", "warning..notice"]) == ["web-1/ana", "web-2/bo", "web-1/ana"])
        #expect(try log(["-p", "notice..warning", "--host", "web-1"]) == ["web-1/ana", "web-1/ana"])
        // -g: the message, case-insensitive unless the pattern has a capital letter.
        #expect(try log(["-g", "Timeout"]) == ["web-1/ana"])
        #expect(try log(["-g", "TIMEOUT"]) == [])
        #expect(try log(["--grep", "gave up|timeout"]) == ["web-1/ana", "web-2/bo"])
        #expect(try log(["-g", "at risk", "--host", "web-1"]) == ["web-1/ana"])
        for (args, word) in [
            (["-p", "loud"], "-p"), (["-p", "8"], "-p"), (["-g", "("], "-g"), (["--host", ""], "--host"),
            (["--host", "a=b"], "--host"),
        ] {
            let r = s.runBare(["log", "-D", dir, "--store-id", Self.fleet] + args)
            #expect(r.code == 64 && r.err.contains(word), "\(args): \(r)")
        }
    }

    /// `-o json-pretty`: each entry an object over several lines, as journalctl's.
    @Test func jsonPrettyIsOneObjectOverSeveralLines() throws {
        let s = try Sandbox()
        let dir = try Self.fleetJournal(s)
        let r = s.runBare(["log", "-D", dir, "--store-id", Self.fleet, "-o", "json-pretty", "--host", "web-1"])
        #expect(r.code == 0 && r.err.isEmpty, "\(r)")
        #expect(r.out.hasPrefix("{\n\t\"kind\" : \"at_risk\",\n\t\"user\" : \"ana\",\n"), "\(r.out)")
        let objects = r.out.components(separatedBy: "\n}\n").filter { !$0.isEmpty }.map { $0 + "\n}" }
        #expect(objects.count == 2)
        let compact = try jsonLines(
            s.runBare(["log", "-D", dir, "--store-id", Self.fleet, "-o", "json", "--host", "web-1"]).out)
        for (pretty, line) in zip(objects, compact) {
            let parsed = try JSONSerialization.jsonObject(with: Data(pretty.utf8)) as? NSDictionary
            #expect(parsed == line as NSDictionary)
        }
        // Only log takes it.
        #expect(s.run(["status", "-o", "json-pretty"]).code == 64)
    }

    /// Failed lines yellow and dead ones red on a terminal (through `script`), none through a
    /// pipe; NO_COLOR and SYSTEMD_COLORS as systemd reads them.
    @Test func failedAndDeadLinesInColourOnATerminalOnly() throws {
        let s = try Sandbox()
        let dir = try Self.fleetJournal(s)
        let red = "\u{1B}[0;1;31m"
        let yellow = "\u{1B}[0;1;33m"
        func onTerminal(_ env: [String: String]) -> RunResult {
            StreakTestKit.run(
                [
                    "/usr/bin/script", "-qec",
                    "'\(streakdBinary)' log --no-pager -D '\(dir)' --store-id \(Self.fleet)", "/dev/null",
                ],
                env: s.environment.merging(["PATH": "/usr/bin:/bin", "TERM": "xterm", "TZ": "UTC"]) { $1 }
                    .merging(env) { $1 })
        }
        let shown = onTerminal([:])
        #expect(shown.code == 0, "\(shown)")
        // A terminal ends its lines with \r\n.
        let lines = shown.out.replacingOccurrences(of: "\r\n", with: "\n").split(separator: "\n").map(String.init)
        #expect(lines.count == 4, "\(shown.out)")
        #expect(lines.count == 4 && lines[2].hasPrefix(yellow) && lines[2].contains("FAILED hook:chat"))
        #expect(lines.count == 4 && lines[3].hasPrefix(red) && lines[3].contains("DEAD hook:chat"))
        #expect(lines.count == 4 && !lines[0].contains("\u{1B}") && !lines[1].contains("\u{1B}"))
        for env in [["NO_COLOR": "1"], ["SYSTEMD_COLORS": "0"], ["SYSTEMD_COLORS": "false"], ["TERM": "dumb"]] {
            let plain = onTerminal(env)
            #expect(plain.code == 0 && !plain.out.contains("\u{1B}["), "\(env): \(plain.out)")
        }
        #expect(onTerminal(["NO_COLOR": "1", "SYSTEMD_COLORS": "1"]).out.contains(red))
        // Through a pipe: none, unless SYSTEMD_COLORS says so.
        let piped = s.runBare(["log", "-D", dir, "--store-id", Self.fleet])
        #expect(piped.code == 0 && piped.out.split(separator: "\n").count == 4 && !piped.out.contains("\u{1B}"))
        #expect(
            s.runBare(["log", "-D", dir, "--store-id", Self.fleet], env: ["SYSTEMD_COLORS": "1"]).out.contains(red))
    }
}
