import Foundation
import StreakTestKit
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// Issue 31's delivery cases in the fault campaign, each through the built binary: retries ask
/// SPEC §4 again (3), a hook's stderr reaches no terminal raw (9), nothing a hook starts outlives
/// it (10), a stopped run's deliveries are taken over by its lease (11), a notification server
/// that does not answer costs one time-out a run (12). The counts are in the expectations'
/// messages.
extension FaultCampaignTests {
    /// A hook that appends `KEY` to `DIR/oracle` and fails while `DIR/fail-USER` or `DIR/fail` exists.
    func oracleHook(_ s: Sandbox, _ extra: String = "") throws -> String {
        let d = s.dir.path
        let hook = try s.file(
            "oracle.sh",
            """
            #!/bin/sh
            echo "$STREAKD_KEY" >> '\(d)/oracle'
            \(extra)
            [ -e '\(d)/fail' ] || [ -e "\(d)/fail-$STREAKD_USER" ] && exit 1
            exit 0
            """)
        chmod(hook, 0o755)
        return hook
    }

    /// How many times the oracle hook ran for each key.
    func oracleRuns(_ s: Sandbox) -> [String: Int] {
        let text = (try? String(contentsOfFile: s.dir.path + "/oracle", encoding: .utf8)) ?? ""
        return text.split(separator: "\n").reduce(into: [:]) { $0[String($1), default: 0] += 1 }
    }

    func touch(_ s: Sandbox, _ name: String) {
        _ = FileManager.default.createFile(atPath: s.dir.path + "/" + name, contents: nil)
    }
    func remove(_ s: Sandbox, _ name: String) { try? FileManager.default.removeItem(atPath: s.dir.path + "/" + name) }

    /// Item 3: a retry after a check-in, or after its date ended, is recorded expired and not run.
    @Test(.requires(.sqlite3)) func retriesAskAgainBeforeTheyGo() throws {
        try Journal.ensureRunning()
        let s = try Sandbox()
        let streak = "retry_" + String(UUID().uuidString.prefix(8)).lowercased()
        try dueUsers(s, 10, streak: streak)
        let config = try s.file("streakd.toml", "[[hooks]]\nname = \"oracle\"\ncommand = [\"\(try oracleHook(s))\"]\n")
        // u0-u3's hook fails at 20:00; u0 and u1 check in at 20:30, u2 and u3's goes on failing.
        for u in 0..<4 { touch(s, "fail-u\(u)") }
        s.now = "2026-11-21T20:00:00Z"
        let first = s.run(["tick", "--config", config])
        #expect(first.code == 75 && first.err.contains("4 failed"), "\(first.err.suffix(400))")
        s.now = "2026-11-21T20:30:00Z"
        for u in 0..<2 { #expect(s.run(["checkin", "u\(u)", "--streak", streak]).code == 0) }
        s.now = "2026-11-21T20:31:00Z"
        let retry = s.run(["tick", "--config", config])
        let expired = retry.err.split(separator: "\n").filter { $0.contains("without another try: checked in since") }
        #expect(expired.count == 2, "\(retry.err.suffix(1500))")
        // Three hours after their date ended (the last try was due long before).
        s.now = "2026-11-22T03:00:00Z"
        let late = s.run(["tick", "--config", config])
        let ended = late.err.split(separator: "\n").filter {
            $0.contains("at_risk") && $0.contains("without another try: no longer fresh: 2026-11-21 has ended")
        }
        #expect(ended.count == 2, "\(late.err.suffix(1500))")
        let runs = oracleRuns(s).filter { $0.key.hasPrefix("at_risk/") }
        let ran = (0..<10).map { runs["at_risk/u\($0)/\(streak)/2026-11-21"] ?? 0 }
        #expect(
            ran == [1, 1, 2, 2, 1, 1, 1, 1, 1, 1],
            "hook runs per at_risk: checked in \(ran[0..<2]), failing \(ran[2..<4]), delivered \(ran[4..<10])")
        let states = run([
            "/usr/bin/sqlite3", s.store,
            "SELECT sink, d.state, count(*) FROM deliveries d JOIN notifications n ON n.id = d.notification "
                + "WHERE n.kind = 'at_risk' AND n.streak = '\(streak)' GROUP BY 1, 2 ORDER BY 1, 2",
        ])
        #expect(states.out == "hook:oracle|delivered|6\nhook:oracle|expired|4\njournal|delivered|10\n", "\(states)")
    }

    /// Item 9: ESC and BEL in a failing hook's stderr reach neither `tick`'s standard error nor
    /// the `status` overview raw.
    @Test func aHooksStderrReachesNoTerminalRaw() throws {
        try Journal.ensureRunning()
        let s = try Sandbox()
        let streak = "esc_" + String(UUID().uuidString.prefix(8)).lowercased()
        try dueUsers(s, 3, streak: streak)
        let hook = try s.file(
            "hostile.sh", "#!/bin/sh\nprintf '\\033[2J\\033]0;owned\\007curl: (22) 503\\233m\\n' >&2\nexit 22\n")
        chmod(hook, 0o755)
        let config = try s.file("streakd.toml", "[[hooks]]\nname = \"hostile\"\ncommand = [\"\(hook)\"]\n")
        s.now = "2026-11-21T20:00:00Z"
        let tick = s.run(["tick", "--config", config])
        let status = s.run(["status", "--config", config])
        func raw(_ text: String) -> Int {
            text.unicodeScalars.count { ($0.value < 0x20 && $0 != "\n") || (0x7f...0x9f).contains($0.value) }
        }
        #expect(tick.code == 75 && tick.err.contains("curl: (22) 503"), "\(tick.err)")
        #expect(status.code == 0 && status.out.contains("curl: (22) 503"), "\(status.out)")
        #expect(
            raw(tick.err) == 0 && raw(status.out) == 0,
            "control characters: tick \(raw(tick.err)), status \(raw(status.out))")
    }

    /// The five ways a hook leaves something behind, each a hook of its own writing its leftover's
    /// pid to `DIR/pid-NAME` and its own cgroup to `DIR/cgroup-NAME`.
    func leaversConfig(_ s: Sandbox) throws -> (config: String, names: [String]) {
        let d = s.dir.path
        let daemon = try s.file("daemon.sh", "#!/bin/sh\necho $$ > \"$1\"\nexec /bin/sleep 30\n")
        chmod(daemon, 0o755)
        try s.file("daemon.py", pythonDoubleForkDaemon)
        let styles: [(String, String)] = [
            ("plain", #""$d/daemon.sh" "$d/pid-plain""#),
            ("background", #""$d/daemon.sh" "$d/pid-background" & w background"#),
            ("setsid", #"setsid env -i "$d/daemon.sh" "$d/pid-setsid" & w setsid"#),
            (
                "doublefork",
                #"env -i /bin/sh -c '( /usr/bin/setsid "$0" "$1" </dev/null >/dev/null 2>&1 & ) &' "$d/daemon.sh" "$d/pid-doublefork"; w doublefork"#
            ),
            ("python", #"/usr/bin/python3 "$d/daemon.py" "$d/pid-python""#),
        ]
        var config = ""
        for (name, body) in styles {
            let hook = try s.file(
                "leave-\(name).sh",
                "#!/bin/sh\nd='\(d)'\nw() { while [ ! -s \"$d/pid-$1\" ]; do sleep 0.01; done; }\n"
                    + "cat /proc/self/cgroup > \"$d/cgroup-\(name)\"\n" + body + "\nexit 0\n")
            chmod(hook, 0o755)
            config +=
                "[[hooks]]\nname = \"\(name)\"\ncommand = [\"\(hook)\"]\ntimeout_seconds = \(name == "plain" ? 1 : 10)\n"
        }
        return (try s.file("streakd.toml", config), styles.map(\.0))
    }

    /// What is left of the five styles' leftovers after a run: running, or not reaped.
    func leftovers(_ s: Sandbox, _ names: [String]) -> [String] {
        names.compactMap { name in
            guard let text = try? String(contentsOfFile: s.dir.path + "/pid-" + name, encoding: .utf8),
                let pid = pid_t(text.trimmingCharacters(in: .whitespacesAndNewlines))
            else { return "\(name): never started" }
            defer { kill(pid, SIGKILL) }
            guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8) else { return nil }
            return "\(name): \(stat.prefix(80))"
        }
    }

    /// Item 10: a hook's `&` child, a setsid daemon without its environment, a double fork with
    /// `env -i` and a Python double fork all end with their hook, under a cgroup of the hook's
    /// (root, no systemd here) and as a user who may make none (the subreaper's orphans).
    @Test(.requires(.program("/usr/bin/python3", package: "python3")), arguments: [false, true])
    func nothingAHookStartsOutlivesIt(asNobody: Bool) throws {
        try Journal.ensureRunning()
        if asNobody { try Prerequisite.root.require() }
        let s = try Sandbox()
        let streak = "leave_" + String(UUID().uuidString.prefix(8)).lowercased()
        try dueUsers(s, 1, streak: streak)
        let (config, names) = try leaversConfig(s)
        s.now = "2026-11-21T20:00:00Z"
        var argv = [streakdBinary, "tick", "--config", config, "--store", s.store]
        if asNobody {
            _ = run(["/bin/chown", "-R", "65534:65534", s.dir.path])
            argv = ["/usr/bin/setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "--"] + argv
        }
        let tick = run(argv, env: ["PATH": "/usr/bin:/bin", "LANG": "C.UTF-8"].merging(s.environment) { $1 })
        #expect(tick.code == 75 && tick.err.contains("5 delivered, 1 failed"), "\(tick)")
        let left = leftovers(s, names)
        let cgroups = names.compactMap {
            try? String(contentsOfFile: s.dir.path + "/cgroup-" + $0, encoding: .utf8)
        }.compactMap { $0.split(separator: "\n").first { $0.hasPrefix("0::") }?.dropFirst(3) }
        let kept = cgroups.filter { $0.contains("streakd-hook-") }.filter { path in
            ["/sys/fs/cgroup", "/sys/fs/cgroup/unified"].contains {
                FileManager.default.fileExists(atPath: $0 + path)
            }
        }
        let how = asNobody ? "as nobody (no cgroup)" : "as root (\(cgroups.first ?? "no cgroup"))"
        #expect(left.isEmpty, "\(how): \(left.count) of \(names.count) outlived their hook: \(left)")
        #expect(kept.isEmpty, "hook cgroups left behind: \(kept)")
        if asNobody { #expect(cgroups.allSatisfy { !$0.contains("streakd-hook-") }, "\(cgroups)") }
    }

    /// Item 11: a tick stopped with SIGSTOP holds its deliveries until its lease runs out; the
    /// next run says so ("held by another run", not "0 pending"), and the run after the lease
    /// takes them over, on this host as on another. The stopped run, resumed, delivers nothing more.
    @Test(.requires(.sqlite3)) func aStoppedRunsDeliveriesAreTakenOverAfterItsLease() throws {
        try Journal.ensureRunning()
        let s = try Sandbox()
        let streak = "stop_" + String(UUID().uuidString.prefix(8)).lowercased()
        try dueUsers(s, 200, streak: streak)
        let hook = try oracleHook(s, "sleep 0.05")
        let config = try s.file(
            "streakd.toml",
            "[runs]\nlease_seconds = 5\n\n[journal]\nburst = 0\n\n[[hooks]]\nname = \"oracle\"\ncommand = [\"\(hook)\"]\n"
                + "timeout_seconds = 1\n")
        s.now = "2026-11-21T20:00:00Z"
        let stopped = try s.spawn(["tick", "--config", config])
        let pid = stopped.process.processIdentifier
        let began = ContinuousClock.now
        // Stopped right after a hook wrote its line: the run waits for the hook, outside any
        // transaction (a run stopped holding SQLite's write lock would hold up everyone).
        var seen = 0
        while ContinuousClock.now - began < .seconds(60) {
            let now = oracleRuns(s).count
            if now >= 20 && now > seen { break }
            seen = now
            usleep(5_000)
        }
        kill(pid, SIGSTOP)
        let stoppedAt = ContinuousClock.now
        usleep(300_000)  // the hook in flight finishes
        let before = oracleRuns(s).count
        let during = s.run(["tick", "--config", config])
        // Its lease: 5 s and the longest a delivery may take (the hook's: 1 s, 2 s to end it and
        // 0.25 s to read what it left; an unpaced journal's is 1 s), 9 s from its last heartbeat
        // (every 0.5 s), on the store's clock (whole seconds).
        let left = Duration.seconds(11) - (ContinuousClock.now - stoppedAt)
        if left > .zero { Thread.sleep(forTimeInterval: Double(left.components.seconds) + 0.5) }
        let after = s.run(["tick", "--config", config])
        kill(pid, SIGCONT)
        let resumed = stopped.wait()
        let runs = oracleRuns(s)
        let expected = Set((0..<200).map { "at_risk/u\($0)/\(streak)/2026-11-21" })
        let repeats = runs.values.reduce(0) { $0 + $1 - 1 }
        let record =
            "\(before) delivered before the stop; meanwhile: \(during.err.split(separator: "\n").last ?? ""); "
            + "after its lease: \(after.err.split(separator: "\n").last ?? ""); resumed: exit \(resumed.code); "
            + "\(runs.count) of 200 keys, \(repeats) repeated"
        #expect(during.code == 0 && during.err.contains("pending, all of them held by another run"), "\(during.err)")
        #expect(Set(runs.keys) == expected, "lost: \(expected.subtracting(runs.keys).count); \(record)")
        #expect(repeats <= 1, "only a delivery in flight at the stop may be repeated: \(record)")
        #expect(!after.err.contains(" 0 retried"), "\(record)\n\(after.err.suffix(800))")
        let pending = run(["/usr/bin/sqlite3", s.store, "SELECT count(*) FROM deliveries WHERE state = 'pending'"]).out
        #expect(pending == "0\n", "\(pending)")
    }

    /// Item 12: a session bus that never answers costs one time-out (5 s) a run, not one per
    /// desktop user: the bus is connected to once (each connection waits out the time-out), one
    /// warning, the desktop's deliveries expired, the run a success.
    @Test func aBusThatNeverAnswersCostsOneTimeOutARun() throws {
        try Journal.ensureRunning()
        let s = try Sandbox()
        let streak = "bus_" + String(UUID().uuidString.prefix(8)).lowercased()
        try dueUsers(s, 20, streak: streak)
        let socket = s.dir.path + "/bus"
        let fd = try #require(listeningSocket(socket))
        defer { close(fd) }
        let users = (0..<20).map { "\"u\($0)\"" }.joined(separator: ", ")
        let config = try s.file("streakd.toml", "[desktop]\nusers = [\(users)]\n")
        s.now = "2026-11-21T20:00:00Z"
        var r = s.run(["tick", "--config", config], env: ["DBUS_SESSION_BUS_ADDRESS": "unix:path=" + socket])
        let connections = queuedConnections(fd)
        let warnings = r.err.split(separator: "\n").filter { $0.contains("warning: desktop") }
        #expect(connections == 1, "20 desktop users waited for the bus \(connections) times")
        #expect(r.code == 0 && warnings.count == 1, "\(r.err)")
        r = s.run(["status"])
        #expect(r.out.contains("Deliveries: 0 pending, 0 dead"), "\(r.out)")
    }
}

/// How many connections wait on a listening socket (those closed since included): each is
/// accepted and closed.
func queuedConnections(_ fd: Int32) -> Int {
    _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
    var count = 0
    while true {
        let connection = accept(fd, nil, nil)
        guard connection >= 0 else { return count }
        close(connection)
        count += 1
    }
}
