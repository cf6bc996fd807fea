import Foundation
import StreakCore
import StreakTestKit
import Testing

@testable import StreakDelivery

#if canImport(Glibc)
    import Glibc
#endif

/// Issue 31 (10): nothing a hook starts outlives it, however it leaves (`HookCgroup` where
/// streakd may make a cgroup, the subreaper's orphans elsewhere, `HookOrphans`).
@Suite(.fastTier) struct HookLeftoversTests {
    let sample = StreakCore.Notification.sample

    func sink(_ argv: [String], timeout: Double) -> HookSink {
        HookSink(command: HookCommand(name: "test", argv: argv, timeout: timeout))
    }

    /// Five ways a hook leaves something running (issue 31, 10): none outlives the hook, and none is
    /// left a zombie. `env -i` clears STREAKD_HOOK_RUN, which found a setsid daemon before: a
    /// cgroup per run catches them where streakd may make one, the subreaper's orphans elsewhere.
    enum LeftBehind: String, CaseIterable, Sendable {
        /// A child in the foreground, the hook ended at its time-out.
        case plainChild
        /// `&`, the hook exits at once.
        case background
        /// `setsid env -i PROGRAM &`: another session, no environment.
        case setsid
        /// A double fork with `env -i`: a subshell's background child leaves the session.
        case doubleForkWithoutEnvironment
        /// Python's daemon recipe: fork, setsid, fork, the grandchild with an empty environment.
        case pythonDoubleFork

        /// The hook's argv, in `dir`, whose leftover writes its pid to `dir/pid`.
        func argv(_ dir: HookDir) throws -> [String] {
            let d = dir.path
            let daemon = try dir.script("daemon.sh", #"echo $$ > "$1"; exec /bin/sleep 30"#)
            let waitForIt = #"while [ ! -s "$d/pid" ]; do sleep 0.01; done; exit 0"#
            func hook(_ body: String) throws -> [String] {
                [try dir.script("hook", "d=\"\(d)\"\n" + body)]
            }
            switch self {
            case .plainChild: return try hook(#""$d/daemon.sh" "$d/pid""#)
            case .background: return try hook(#""$d/daemon.sh" "$d/pid" & "# + waitForIt)
            case .setsid: return try hook(#"setsid env -i "$d/daemon.sh" "$d/pid" & "# + waitForIt)
            case .doubleForkWithoutEnvironment:
                return try hook(
                    #"env -i /bin/sh -c '( /usr/bin/setsid "$0" "$1" </dev/null >/dev/null 2>&1 & ) &' "$d/daemon.sh" "$d/pid"; "#
                        + waitForIt)
            case .pythonDoubleFork:
                let script = dir.url.appendingPathComponent("daemon.py").path
                try pythonDoubleForkDaemon.write(toFile: script, atomically: true, encoding: .utf8)
                _ = daemon
                return ["/usr/bin/python3", script, d + "/pid"]
            }
        }
    }

    @Test(arguments: LeftBehind.allCases)
    func nothingAHookStartsOutlivesIt(_ style: LeftBehind) throws {
        if style == .pythonDoubleFork { try Prerequisite.program("/usr/bin/python3", package: "python3").require() }
        let dir = try HookDir()
        let argv = try style.argv(dir)
        let outcome = sink(argv, timeout: style == .plainChild ? 1 : 10).deliver(sample)
        if style == .plainChild {
            #expect(outcome == .failed("timed out after 1s"), "\(outcome)")
        } else {
            #expect(outcome == .delivered, "\(outcome)")
        }
        let left = try #require(dir.pid("pid"))
        defer { kill(left, SIGKILL) }
        #expect(!isRunning(left), "\(style.rawValue): it outlived its hook")
        let parent = HookProcess.stat(left)?.parent
        #expect(parent != getpid(), "\(style.rawValue): left a zombie of streakd's")
    }

    /// Where there is no cgroup: an orphan of streakd's that cleared its environment is a hook's
    /// when it left streakd's session after the hook started, and no other hook running could
    /// have started it; else it waits for that other hook's end.
    @Test func anOrphanIsTheHooksThatCouldHaveStartedIt() {
        let me = getsid(0)
        func orphan(session: pid_t = me + 1, started: UInt64) -> HookProcess.Member {
            HookProcess.Member(pid: 99, parent: getpid(), group: 99, session: session, started: started)
        }
        #expect(HookProcess.isOrphan(orphan(started: 120), session: me, hookStarted: 100, others: []))
        #expect(HookProcess.isOrphan(orphan(started: 100), session: me, hookStarted: 100, others: [121]))
        #expect(!HookProcess.isOrphan(orphan(session: me, started: 120), session: me, hookStarted: 100, others: []))
        #expect(!HookProcess.isOrphan(orphan(started: 99), session: me, hookStarted: 100, others: []), "older")
        #expect(!HookProcess.isOrphan(orphan(started: 120), session: me, hookStarted: 100, others: [110]))
        #expect(HookProcess.isOrphan(orphan(started: 120), session: me, hookStarted: 110, others: []), "that one's")
    }
}
