import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// Finding what a hook left behind without a cgroup, from /proc: its process group, and the
/// orphans that became streakd's children (it is their subreaper). An orphan is the hook's when
/// it carries the run's `STREAKD_HOOK_RUN`, or, when it cleared its environment, by `isOrphan`.
extension HookProcess {
    /// A process as /proc/PID/stat shows it.
    struct Member: Equatable {
        var pid: pid_t
        var parent: pid_t
        var group: pid_t
        var session: pid_t = 0
        /// R, S, D, Z (a zombie), …
        var state: Substring = "S"
        /// When it started, in clock ticks since boot.
        var started: UInt64 = 0

        var dead: Bool { state == "Z" || state == "X" }
    }

    /// Whether a child of streakd, neither in the hook's group nor carrying a run's marker, is an
    /// orphan of the hook that started at `hookStarted`: it left streakd's session (`setsid`, as a
    /// daemon does), it started after the hook did, and every other hook still running (`others`,
    /// when each started) started after it, so none of them could have started it. One that
    /// another running hook might have started is left for that hook's end, which ends it then.
    static func isOrphan(_ m: Member, session: pid_t, hookStarted: UInt64, others: [UInt64]) -> Bool {
        m.session != session && m.started >= hookStarted && others.allSatisfy { $0 > m.started }
    }

    /// Processes of the hook's group, and this process's children that carry the marker or are
    /// the hook's orphans by `isOrphan` (alive), and this process's dead children of the group
    /// (zombies to reap). The hook's own pid is left out: it is reaped by `reap`. `started`: when
    /// the hook started; `others`: when the other hooks still running started.
    static func leftovers(group: pid_t, marker: String, started: UInt64, others: [UInt64])
        -> (alive: [Member], zombies: [pid_t])
    {
        let me = getpid()
        let session = getsid(0)
        let hooks = running.withLock { Set($0.keys) }
        var alive: [Member] = []
        var zombies: [pid_t] = []
        guard let entries = try? FileManager.default.contentsOfDirectory(atPath: "/proc") else { return ([], []) }
        for entry in entries {
            guard let pid = pid_t(entry), pid != group, let m = stat(pid) else { continue }
            if m.group == group {
                if !m.dead {
                    alive.append(m)
                } else if m.parent == me {
                    zombies.append(pid)
                }
            } else if m.parent == me, !m.dead, !hooks.contains(pid) {
                switch runMarker(of: pid) {
                case marker?: alive.append(m)
                case nil where isOrphan(m, session: session, hookStarted: started, others: others): alive.append(m)
                default: continue  // another run's, or not the hook's
                }
            }
        }
        return (alive, zombies)
    }

    /// The children of `parent`, from /proc.
    static func children(of parent: pid_t) -> [Member] {
        guard let entries = try? FileManager.default.contentsOfDirectory(atPath: "/proc") else { return [] }
        return entries.compactMap { pid_t($0).flatMap(stat) }.filter { $0.parent == parent }
    }

    /// A process from /proc/PID/stat.
    static func stat(_ pid: pid_t) -> Member? {
        guard let text = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
            let close = text.lastIndex(of: ")")
        else { return nil }
        // After "(comm)": state, ppid, pgrp, session, …, starttime (the 20th).
        let fields = text[text.index(after: close)...].split(separator: " ")
        guard fields.count > 19, let parent = pid_t(fields[1]), let group = pid_t(fields[2]),
            let session = pid_t(fields[3]), let started = UInt64(fields[19])
        else { return nil }
        return Member(pid: pid, parent: parent, group: group, session: session, state: fields[0], started: started)
    }

    /// The `STREAKD_HOOK_RUN=…` a process started with, if any (nil too where it cannot be read).
    static func runMarker(of pid: pid_t) -> String? {
        guard let data = FileManager.default.contents(atPath: "/proc/\(pid)/environ") else { return nil }
        let prefix = Array("STREAKD_HOOK_RUN=".utf8)
        return data.split(separator: 0).first { $0.starts(with: prefix) }.map { String(decoding: $0, as: UTF8.self) }
    }
}

/// The hooks a streakd process left running when it was killed (SIGKILL: it could not end them,
/// and outside a unit's cgroup nothing else does).
public enum HooksLeftBehind {
    /// Ends (SIGKILL) every process whose `STREAKD_HOOK_RUN` names the process `pid` that
    /// started at `started` (clock ticks since boot), with the process group each leads (a hook
    /// and its `&` children): a run taking over that process's deliveries does not deliver them
    /// beside a hook still running. Answers how many hooks (process groups) it ended; a
    /// process that left its hook's group is ended alone.
    public static func end(byProcess pid: pid_t, started: String) -> Int {
        let prefix = "STREAKD_HOOK_RUN=\(pid).\(started)."
        guard let entries = try? FileManager.default.contentsOfDirectory(atPath: "/proc") else { return 0 }
        var groups = Set<pid_t>()
        for entry in entries {
            guard let p = pid_t(entry), p != getpid(), HookProcess.runMarker(of: p)?.hasPrefix(prefix) == true,
                let m = HookProcess.stat(p), !m.dead
            else { continue }
            if m.group > 1, m.group != getpgrp(), groups.insert(m.group).inserted { kill(-m.group, SIGKILL) }
            kill(p, SIGKILL)
        }
        return groups.count
    }
}
