import CProcess
import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// One run of a hook's program (SPEC §5: nothing a hook starts outlives it). It starts in a
/// process group of its own, with default signal handling, an empty signal mask and no descriptor
/// of streakd's but the three it is given, and in a cgroup of its own where streakd may make one
/// (`HookCgroup`). When it exits, times out or the run is stopped, everything it started is
/// ended: with a cgroup, everything in it, whatever it did; without one, its process group (a `&`
/// child) and what escaped the group (a double-forked daemon). streakd is a child subreaper, so
/// such an orphan becomes streakd's child rather than init's; it is the hook's when it carries
/// the run's `STREAKD_HOOK_RUN` variable, or, when a daemon cleared its environment (`env -i`),
/// when it left streakd's session after the hook started and no other hook running could have
/// started it (`isOrphan`). (Under systemd, the unit's cgroup ends anything else when the run ends.)
struct HookProcess {
    let pid: pid_t
    /// `STREAKD_HOOK_RUN=…`, as it appears in the environment of everything the hook starts.
    let marker: String
    /// The run's cgroup, when its process joined one.
    let cgroup: HookCgroup?
    /// When it started, in clock ticks since boot (/proc/PID/stat).
    let started: UInt64

    /// Seconds between SIGTERM and SIGKILL, for the hook and for what it leaves behind.
    static let killGrace: Double = 1

    static let runs = Atomic<Int>(0)

    /// Makes this process the subreaper of its descendants, once.
    static let subreaper: Bool = streakd_become_subreaper() == 0

    /// The hooks of this process that are running (not reaped yet), with when each started: an
    /// orphan found when one ends may be another's.
    static let running = Mutex<[pid_t: UInt64]>([:])

    /// When this process started, in clock ticks since boot: a marker names its process by pid
    /// and start, as a run's owner does (the pid alone may be another process's by now).
    static let processStarted: UInt64 = stat(getpid())?.started ?? 0

    /// The variable that marks one run's processes: `STREAKD_HOOK_RUN=PID.START.N`.
    static func nextMarker() -> String {
        "STREAKD_HOOK_RUN=\(getpid()).\(processStarted).\(runs.add(1, ordering: .relaxed).newValue)"
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
        stderr: Int32, cgroup wanted: Bool = true, startingBefore limit: () -> Int64?
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
            let cgroup = wanted ? HookCgroup.make() : nil
            // The caller's last word, right before the child is made.
            guard let until = BootClock.instant(before: limit) else {
                cgroup?.remove()
                return nil
            }
            var failure: Int32 = 0
            var joined: Int32 = 0
            let pid = streakd_spawn_into(
                executable, cArgs, cEnv, stdin, stdout, stderr, until, &failure, cgroup?.procs ?? -1, &joined)
            guard pid > 0 else {
                let error = errno
                cgroup?.remove()
                throw POSIXError(POSIXErrorCode(rawValue: error) ?? .EIO)
            }
            // A child that could not join runs without (its leftovers are looked for as before).
            if joined == 0 { cgroup?.remove() }
            let child = HookProcess(
                pid: pid, marker: marker, cgroup: joined != 0 ? cgroup : nil, started: stat(pid)?.started ?? 0)
            running.withLock { $0[pid] = child.started }
            if failure == 0 { return child }
            // It ended before its program started: nothing of its own to end.
            child.reap()
            child.cgroup?.remove()
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
        _ = Self.running.withLock { $0.removeValue(forKey: pid) }
    }

    func terminate(_ signal: Int32) { _ = killpg(pid, signal) }

    /// Ends what the hook left running: everything in its cgroup, or without one its group and its
    /// orphans. SIGTERM, up to `killGrace` to go, then SIGKILL; the orphans (streakd's children
    /// now) are reaped. Answers how many processes were ended.
    @discardableResult
    func endLeftovers() -> Int {
        if let cgroup { return cgroup.end(main: pid, grace: Self.killGrace) }
        let others = Self.running.withLock { $0.filter { $0.key != pid }.map(\.value) }
        var seen = Set<pid_t>()
        var adopted = Set<pid_t>()
        let clock = ContinuousClock()
        let termEnd = clock.now + .seconds(Self.killGrace)
        var signal = SIGTERM
        while true {
            let found = Self.leftovers(group: pid, marker: marker, started: started, others: others)
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

}
