import Foundation
import StreakTestKit
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// Issue 31's delivery cases in the fault campaign, each through the built binary: a hook's
/// stderr reaches no terminal raw (9), nothing a hook starts outlives it (10). The counts are
/// printed for the record.
extension FaultCampaignTests {
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
        print("fault campaign, hostile stderr: tick \(raw(tick.err)) control characters, status \(raw(status.out))")
        #expect(tick.code == 75 && tick.err.contains("curl: (22) 503"), "\(tick.err)")
        #expect(status.code == 0 && status.out.contains("curl: (22) 503"), "\(status.out)")
        #expect(raw(tick.err) == 0 && raw(status.out) == 0)
    }

    /// The five ways a hook leaves something behind, each a hook of its own writing its leftover's
    /// pid to `DIR/pid-NAME` and its own cgroup to `DIR/cgroup-NAME`.
    func leaversConfig(_ s: Sandbox) throws -> (config: String, names: [String]) {
        let d = s.dir.path
        let daemon = try s.file("daemon.sh", "#!/bin/sh\necho $$ > \"$1\"\nexec /bin/sleep 30\n")
        chmod(daemon, 0o755)
        try s.file(
            "daemon.py",
            """
            import os, sys, time
            if os.fork() == 0:
                os.setsid()
                if os.fork() == 0:
                    os.execve("/bin/sh", ["sh", "-c", 'echo $$ > "$0"; exec /bin/sleep 30', sys.argv[1]], {})
                os._exit(0)
            while not (os.path.exists(sys.argv[1]) and os.path.getsize(sys.argv[1]) > 0):
                time.sleep(0.01)
            """)
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
            config += "[[hooks]]\nname = \"\(name)\"\ncommand = [\"\(hook)\"]\ntimeout_seconds = \(name == "plain" ? 1 : 10)\n"
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
    @Test func nothingAHookStartsOutlivesIt() throws {
        try Journal.ensureRunning()
        for asNobody in [false, true] {
            if asNobody && getuid() != 0 { continue }
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
            print("fault campaign, leftovers \(how): \(left.count) of \(names.count) outlived their hook \(left)")
            #expect(left.isEmpty, "\(how): \(left)")
            #expect(kept.isEmpty, "hook cgroups left behind: \(kept)")
            if asNobody { #expect(cgroups.allSatisfy { !$0.contains("streakd-hook-") }, "\(cgroups)") }
        }
    }


}
}
