import Foundation
import StreakTestKit
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// Issue 17, items 7, 9 and 10: SIGTERM during a run with a real hook, hooks named by relative
/// paths, and preview's horizon.
@Suite("stopping runs, hook paths, preview's horizon", .fastTier)
struct StopTests {
    /// `n` users in Berlin with the 7 days before 2026-11-21 checked in; ids unique to this run.
    func users(_ s: Sandbox, _ n: Int) throws -> [String] {
        try Journal.ensureRunning()
        let tag = String(UUID().uuidString.prefix(8)).lowercased()
        let ids = (0..<n).map { "s\(tag)-\($0)" }
        var users = ""
        var lines: [String] = []
        for id in ids {
            users += #"{"user":"\#(id)","tz":"Europe/Berlin"}"# + "\n"
            lines += (14...20).map { checkinLine("2026-11-\($0)T18:00:00+01:00", user: id) }
        }
        #expect(s.run(["user", "import", try s.file("users.jsonl", users)]).code == 0)
        try s.importLines(lines)
        return ids
    }

    /// A hook that takes `seconds` (0 once `DIR/fast` exists), then appends its key to `DIR/oracle`.
    func slowHook(_ s: Sandbox, seconds: Int, kinds: String = "") throws -> String {
        let dir = s.dir.path
        let hook = try s.file(
            "hook.sh",
            """
            #!/bin/sh
            [ -e '\(dir)/fast' ] || sleep \(seconds)
            echo "$STREAKD_KEY $$" >> '\(dir)/oracle'
            """)
        chmod(hook, 0o755)
        return try s.file(
            "streakd.toml", "[[hooks]]\nname = \"slow\"\ncommand = [\"\(hook)\"]\ntimeout_seconds = 60\n\(kinds)")
    }

    /// The oracle's keys, each with how many times the hook ran for it.
    func oracle(_ s: Sandbox) -> [String: Int] {
        let text = (try? String(contentsOfFile: s.dir.path + "/oracle", encoding: .utf8)) ?? ""
        var counts: [String: Int] = [:]
        for line in text.split(separator: "\n") { counts[String(line.split(separator: " ")[0]), default: 0] += 1 }
        return counts
    }

    /// Sends SIGTERM `after` into the run, answers its outcome and the seconds from signal to exit.
    func stop(_ child: Spawned, after: Double) -> (Outcome, Double) {
        usleep(UInt32(after * 1_000_000))
        let signalled = ContinuousClock.now
        kill(child.process.processIdentifier, SIGTERM)
        let r = child.wait()
        return (r, (ContinuousClock.now - signalled).seconds)
    }

    @Test func sigtermFinishesTheHookInFlightAndExits75WithNothingTwice() throws {
        let s = try Sandbox()
        let ids = try users(s, 5)
        let config = try slowHook(s, seconds: 1)
        s.now = "2026-11-21T19:00:00Z"
        let (r, took) = stop(try s.spawn(["tick", "--config", config]), after: 1.5)
        #expect(r.code == 75, "\(r)")
        #expect(r.err.contains("stopped by a signal"), "\(r.err)")
        #expect(took < 5, "exit \(took)s after SIGTERM")
        let before = oracle(s)
        #expect(before.count >= 1 && before.count < 5, "the stop came mid-run: \(before)")
        s.now = "2026-11-21T19:01:00Z"
        let again = s.run(["tick", "--config", config])
        #expect(again.code == 0, "\(again)")
        let after = oracle(s)
        #expect(after == Dictionary(uniqueKeysWithValues: ids.map { ("at_risk/\($0)/daily/2026-11-21", 1) }))
    }

    /// A run killed (SIGKILL) mid-hook leaves its hook running, outside a unit's cgroup; the next
    /// run on this host ends it before taking its delivery over: never two at once (SPEC §5).
    @Test func aKilledRunsHookEndsBeforeItsDeliveryIsTakenOver() throws {
        let s = try Sandbox()
        let ids = try users(s, 1)
        let config = try slowHook(s, seconds: 3)
        s.now = "2026-11-21T19:00:00Z"
        let child = try s.spawn(["tick", "--config", config])
        usleep(1_500_000)
        kill(child.process.processIdentifier, SIGKILL)
        _ = child.wait()
        try s.file("fast", "")
        let again = s.run(["tick", "--config", config])
        #expect(again.code == 0, "\(again)")
        #expect(again.err.contains("ended 1 hook left running by a run that was killed"), "\(again.err)")
        usleep(2_500_000)
        #expect(oracle(s) == ["at_risk/\(ids[0])/daily/2026-11-21": 1], "the killed run's hook went on")
    }

    /// A webhook that never answers does not hold a stopped tick for its time-out: its request
    /// is cancelled after the grace, pending again with the attempt not counted (SPEC §5).
    @Test func sigtermCancelsAWebhookThatNeverAnswers() throws {
        let s = try Sandbox()
        _ = try users(s, 1)
        let (fd, port) = try #require(loopbackSocket(listening: true))
        defer { close(fd) }
        let config = try s.file(
            "streakd.toml",
            """
            [[webhooks]]
            name = "phone"
            url = "http://127.0.0.1:\(port)/hook"
            secret = "0123456789abcdef0123"
            timeout_seconds = 60
            kinds = ["at_risk"]
            """)
        s.now = "2026-11-21T19:00:00Z"
        let (r, took) = stop(try s.spawn(["tick", "--config", config]), after: 1.5)
        #expect(r.code == 75 && r.err.contains("stopped by a signal"), "\(r)")
        #expect(took < 5, "exit \(took)s after SIGTERM")
        let list = s.run(["deliveries", "list", "-o", "json"])
        #expect(list.out.contains(#""state":"pending""#) && list.out.contains(#""attempts":0"#), "\(list)")
        #expect(list.out.contains("stopped by a signal to streakd after 2s more"), "\(list)")
    }

    @Test func sigtermEndsAHookPastTheGraceAndRefillExits75() throws {
        let s = try Sandbox()
        let ids = try users(s, 3)
        let config = try slowHook(s, seconds: 30, kinds: "kinds = [\"freeze_refilled\"]\n")
        s.now = "2026-12-21T12:00:00Z"
        let (r, took) = stop(try s.spawn(["refill", "--config", config]), after: 1)
        #expect(r.code == 75, "\(r)")
        #expect(took < 6, "exit \(took)s after SIGTERM")
        #expect(oracle(s).isEmpty, "the hook in flight was ended before it finished")
        // Every streak refilled once; the deliveries wait for the next tick.
        for id in ids { #expect(try s.statusObject(id)["freezes"] as? Int == 1) }
        try s.file("fast", "")
        let again = s.run(["tick", "--config", config])
        #expect(again.code == 0, "\(again)")
        #expect(
            oracle(s) == Dictionary(uniqueKeysWithValues: ids.map { ("freeze_refilled/\($0)/daily/2026-12-21", 1) }))
        for id in ids { #expect(try s.statusObject(id)["freezes"] as? Int == 1) }
    }

    @Test func aHookNamedByARelativePathOrABareNameIsRefusedEverywhere() throws {
        let s = try Sandbox()
        s.addUser()
        for program in ["./hook.sh", "notify-send"] {
            let config = try s.file(
                "streakd.toml", "[journal]\nburst = 0\n\n[[hooks]]\nname = \"h\"\ncommand = [\"\(program)\"]\n")
            for args in [["config", "check"], ["status", "u1"], ["tick"], ["checkin", "u1"]] {
                let r = s.run(args + ["--config", config])
                #expect(r.code == 78, "\(args): \(r)")
                #expect(
                    r.err.hasPrefix(
                        "streakd: error: \(config):6: hooks[1].command: \"\(program)\" is not an absolute path"))
            }
        }
    }

    @Test func previewLooksAtMostAYearAhead() throws {
        let s = try Sandbox()
        _ = try users(s, 20)
        let start = ContinuousClock.now
        let year = s.run(["preview", "--until", "52w"])
        #expect(year.code == 0 && !year.out.isEmpty, "\(year)")
        #expect(ContinuousClock.now - start < .seconds(10))
        for until in ["53w", "366d", "2027-11-22T11:00:01Z", "99999999999w"] {
            let r = s.run(["preview", "--until", until])
            #expect(r.code == 64 && r.err.contains("more than a year ahead"), "\(until): \(r)")
        }
        #expect(s.run(["preview", "--until", "2027-11-21T11:00:00Z"]).code == 0)
    }
}
