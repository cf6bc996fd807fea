import CProcess
import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// One run of a hook's program (SPEC §5: nothing a hook starts outlives it). It starts in a
/// process group of its own, with default signal handling, an empty signal mask and no descriptor
/// of streakd's but the three it is given. When it exits, times out or the run is stopped,
/// everything it started is ended: its process group (a `&` child), and what escaped the group
/// with `setsid` (a double-forked daemon). streakd is a child subreaper, so such an orphan becomes
/// streakd's child rather than init's; it is known as the hook's by a variable in its environment,
/// `STREAKD_HOOK_RUN`, unique per run. (Under systemd, the unit's cgroup ends anything else when
/// the run ends.)
struct HookProcess {
    let pid: pid_t
    /// `STREAKD_HOOK_RUN=…`, as it appears in the environment of everything the hook starts.
    let marker: String

    /// Seconds between SIGTERM and SIGKILL, for the hook and for what it leaves behind.
    static let killGrace: Double = 1

    static let runs = Atomic<Int>(0)

    /// Makes this process the subreaper of its descendants, once.
    static let subreaper: Bool = streakd_become_subreaper() == 0

    /// The variable that marks one run's processes.
    static func nextMarker() -> String {
        "STREAKD_HOOK_RUN=\(getpid()).\(runs.add(1, ordering: .relaxed).newValue)"
    }

    /// Starts `executable` with `argv` and exactly `environment` (`NAME=value`, the marker
    /// among them); standard input, output and error are the descriptors given. Nil when `limit`
    /// says no, or its instant (`BootClock`) has come when the child takes its last look.
    ///
    /// `limit` is asked right before the `vfork`; the child reads the clock once more right
    /// before `execve` (`streakd_spawn_before`). A run stopped (SIGSTOP) at any point before that
    /// and resumed past its lease starts nothing: with `posix_spawn`, asked before the call, a
    /// stop inside the call's own preparations (a stack mapped, signals blocked, the clone)
    /// started the program after the resume, past the lease (CI, twice). A `fork` that waited
    /// for a word from the run closed that gap too, but copied the run's page tables for every
    /// hook (a busy tick with a hook per notification: 34 s became 57-112 s).
    static func start(
        _ executable: String, argv: [String], environment: [String], marker: String, stdin: Int32, stdout: Int32,
        stderr: Int32, startingBefore limit: () -> Int64?
    ) throws -> HookProcess? {
        _ = subreaper
        let cArgs = argv.map { strdup($0) } + [nil]
        let cEnv = environment.map { strdup($0) } + [nil]
        defer {
            cArgs.forEach { free($0) }
            cEnv.forEach { free($0) }
        }
        // ETXTBSY: the program is open for writing somewhere, often only for a moment (being
        // replaced, or a descriptor another thread's child inherited while it was written).
        for attempt in 0...20 {
            if attempt > 0 { usleep(25_000) }
            // The caller's last word, right before the child is made.
            guard let until = BootClock.instant(before: limit) else { return nil }
            var failure: Int32 = 0
            let pid = streakd_spawn_before(executable, cArgs, cEnv, stdin, stdout, stderr, until, &failure)
            guard pid > 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
            let child = HookProcess(pid: pid, marker: marker)
            if failure == 0 { return child }
            child.reap()
            if failure < 0 { return nil }  // the instant came before the program could start
            if failure == ETXTBSY && attempt < 20 { continue }
            throw POSIXError(POSIXErrorCode(rawValue: failure) ?? .EIO)
        }
        throw POSIXError(.ETXTBSY)
    }

    enum Ending: Equatable {
        case exit(Int32)
        case signal(Int32)
    }

    /// How the hook ended, if it has, without reaping it: while it is a zombie its pid (its group's
    /// id) cannot be reused, so signalling the group stays safe until `reap`.
    func peek(wait: Bool = false) -> Ending? {
        var info = siginfo_t()
        while waitid(P_PID, id_t(pid), &info, WEXITED | WNOWAIT | (wait ? 0 : WNOHANG)) != 0 {
            if errno != EINTR { return nil }
        }
        let child = info._sifields._sigchld
        guard child.si_pid == pid else { return nil }  // still running
        return info.si_code == Int32(CLD_EXITED) ? .exit(child.si_status) : .signal(child.si_status)
    }

    func reap() {
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
    }

    func terminate(_ signal: Int32) { _ = killpg(pid, signal) }

    /// Ends what the hook left running: its group, and the orphans that carry its marker. SIGTERM,
    /// up to `killGrace` to go, then SIGKILL; the orphans (streakd's children now) are reaped.
    /// Answers how many processes were ended.
    @discardableResult
    func endLeftovers() -> Int {
        var seen = Set<pid_t>()
        var adopted = Set<pid_t>()
        let clock = ContinuousClock()
        let termEnd = clock.now + .seconds(Self.killGrace)
        var signal = SIGTERM
        while true {
            let found = Self.leftovers(group: pid, marker: marker)
            for zombie in found.zombies { adopted.insert(zombie) }
            if found.alive.isEmpty { break }
            for p in found.alive {
                if p.parent == getpid() { adopted.insert(p.pid) }
                // A newly found one gets this round's signal; SIGKILL goes to everyone.
                if seen.insert(p.pid).inserted || signal == SIGKILL {
                    kill(p.pid, signal)
                    if p.group == p.pid && p.group != pid { _ = killpg(p.group, signal) }
                }
            }
            _ = killpg(pid, signal)
            if signal == SIGTERM && clock.now >= termEnd {
                signal = SIGKILL
                continue
            }
            if signal == SIGKILL && clock.now >= termEnd + .seconds(Self.killGrace) { break }  // in D state: give up
            usleep(10_000)
        }
        for child in adopted {
            var status: Int32 = 0
            for _ in 0..<100 where waitpid(child, &status, WNOHANG) == 0 { usleep(10_000) }
        }
        return seen.count
    }

    struct Member {
        var pid: pid_t
        var parent: pid_t
        var group: pid_t
    }

    /// Processes of the hook's group, and this process's children that carry the marker (alive),
    /// and this process's dead children of the group (zombies to reap). The hook's own pid is left
    /// out: it is reaped by `reap`.
    static func leftovers(group: pid_t, marker: String) -> (alive: [Member], zombies: [pid_t]) {
        let me = getpid()
        var alive: [Member] = []
        var zombies: [pid_t] = []
        guard let entries = try? FileManager.default.contentsOfDirectory(atPath: "/proc") else { return ([], []) }
        for entry in entries {
            guard let pid = pid_t(entry), pid != group, let stat = Self.stat(pid) else { continue }
            let member = Member(pid: pid, parent: stat.parent, group: stat.group)
            let dead = stat.state == "Z" || stat.state == "X"
            if stat.group == group {
                if !dead {
                    alive.append(member)
                } else if stat.parent == me {
                    zombies.append(pid)
                }
            } else if stat.parent == me, !dead, Self.environment(of: pid, contains: marker) {
                alive.append(member)
            }
        }
        return (alive, zombies)
    }

    /// State, parent and group from /proc/PID/stat.
    static func stat(_ pid: pid_t) -> (state: Substring, parent: pid_t, group: pid_t)? {
        guard let text = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
            let close = text.lastIndex(of: ")")
        else { return nil }
        // After "(comm)": state, ppid, pgrp, …
        let fields = text[text.index(after: close)...].split(separator: " ")
        guard fields.count > 2, let parent = pid_t(fields[1]), let group = pid_t(fields[2]) else { return nil }
        return (fields[0], parent, group)
    }

    /// Whether `NAME=value` is one of the variables a process started with.
    static func environment(of pid: pid_t, contains variable: String) -> Bool {
        guard let data = FileManager.default.contents(atPath: "/proc/\(pid)/environ") else { return false }
        return data.split(separator: 0).contains { $0.elementsEqual(variable.utf8) }
    }
}
