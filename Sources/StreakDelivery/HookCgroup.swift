import CProcess
import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// A cgroup (v2) for one hook run (SPEC §5: nothing a hook starts outlives it). The hook's process
/// joins it before its program starts, so everything the hook starts is in it, whatever it does
/// with its process group, its session or its environment (`setsid`, `env -i`, a double fork);
/// when the hook ends, everything in it gets SIGTERM, then SIGKILL `grace` later, and the cgroup
/// is removed. Made beside this process, under its own cgroup, only where streakd may: a subtree
/// delegated to it (`Delegate=yes` in a unit: systemd marks the cgroup `user.delegate` or
/// `trusted.delegate`, and hands a service's user the directory), or any cgroup it may write where
/// no systemd manages the tree. Elsewhere there is none (`HookCgroup.make` answers nil) and
/// `HookProcess` ends what it can find without one.
final class HookCgroup: Sendable {
    /// Its directory, and its path as /proc/PID/cgroup shows it (`0::PATH`).
    let directory: String
    let path: String
    /// `cgroup.procs`, open for writing: the hook's child writes "0" into it to join.
    let procs: Int32

    private init(directory: String, path: String, procs: Int32) {
        self.directory = directory
        self.path = path
        self.procs = procs
    }

    deinit { close(procs) }

    /// Where hook cgroups go: this process's cgroup, when streakd may make cgroups under it.
    static let parent: (directory: String, path: String)? = findParent()

    static let made = Atomic<Int>(0)

    /// A new cgroup for a hook run, or nil where there can be none (or making it failed).
    static func make() -> HookCgroup? {
        guard let parent else { return nil }
        let name = "streakd-hook-\(getpid())-\(made.add(1, ordering: .relaxed).newValue)"
        let directory = parent.directory + "/" + name
        guard mkdir(directory, 0o755) == 0 else { return nil }
        let procs = open(directory + "/cgroup.procs", O_WRONLY | O_CLOEXEC)
        guard procs >= 0 else {
            rmdir(directory)
            return nil
        }
        return HookCgroup(
            directory: directory, path: (parent.path == "/" ? "" : parent.path) + "/" + name, procs: procs)
    }

    /// Ends everything in the cgroup: SIGTERM, SIGKILL `grace` later (`cgroup.kill`, one write
    /// for all, forks included), then reaps what became this process's children (streakd is their
    /// subreaper) but `main` (the hook, kept for `HookProcess.reap`: a zombie is in no cgroup's
    /// list) and removes the cgroup. Answers how many processes it signalled.
    @discardableResult
    func end(main: pid_t, grace: Double) -> Int {
        let clock = ContinuousClock()
        let killAt = clock.now + .seconds(grace)
        var signalled = Set<pid_t>()
        var killed = false
        while true {
            let alive = members()
            if alive.isEmpty { break }
            if killed {
                if clock.now >= killAt + .seconds(grace) { break }  // in D state: give up
            } else if clock.now >= killAt {
                killAll()
                killed = true
            } else {
                for p in alive where signalled.insert(p).inserted { kill(p, SIGTERM) }
            }
            usleep(10_000)
        }
        reapChildren(except: main, within: grace)
        // A zombie does not keep a cgroup: it goes once nothing in it runs.
        for _ in 0..<100 {
            if rmdir(directory) == 0 || errno != EBUSY { break }
            usleep(10_000)
        }
        return signalled.count
    }

    /// Removes the cgroup when nothing ever ran in it (or nothing runs in it any more).
    func remove() { rmdir(directory) }

    /// The processes in the cgroup now (zombies are not).
    func members() -> [pid_t] {
        guard let text = try? String(contentsOfFile: directory + "/cgroup.procs", encoding: .utf8) else { return [] }
        return text.split(separator: "\n").compactMap { pid_t($0) }
    }

    /// SIGKILL to everything in it: `cgroup.kill` (Linux 5.14), else to each member.
    private func killAll() {
        let fd = open(directory + "/cgroup.kill", O_WRONLY | O_CLOEXEC)
        if fd >= 0 {
            defer { close(fd) }
            if write(fd, "1", 1) == 1 { return }
        }
        for p in members() { kill(p, SIGKILL) }
    }

    /// Reaps this process's children that were in the cgroup (all of them end up here once their
    /// parents are gone), until none is left or `within` seconds have passed.
    private func reapChildren(except main: pid_t, within: Double) {
        let me = getpid()
        let end = ContinuousClock.now + .seconds(within)
        while true {
            var left = false
            for child in HookProcess.children(of: me) where child.pid != main && cgroup(of: child.pid) == path {
                var status: Int32 = 0
                if child.state != "Z" || waitpid(child.pid, &status, WNOHANG) == 0 { left = true }
            }
            if !left || ContinuousClock.now >= end { return }
            usleep(10_000)
        }
    }

    /// A process's cgroup (v2) as /proc/PID/cgroup shows it: a zombie keeps the one it died in.
    func cgroup(of pid: pid_t) -> String? {
        guard let text = try? String(contentsOfFile: "/proc/\(pid)/cgroup", encoding: .utf8) else { return nil }
        return text.split(separator: "\n").first { $0.hasPrefix("0::") }.map { String($0.dropFirst(3)) }
    }

    // MARK: - Where

    /// This process's cgroup v2 directory, when hook cgroups may go under it.
    static func findParent() -> (directory: String, path: String)? {
        guard let own = try? String(contentsOfFile: "/proc/self/cgroup", encoding: .utf8),
            let line = own.split(separator: "\n").first(where: { $0.hasPrefix("0::") }),
            let mount = cgroup2Mount()
        else { return nil }
        let path = String(line.dropFirst(3))
        let directory = path == "/" ? mount : mount + path
        guard access(directory, W_OK) == 0 else { return nil }
        // A tree systemd manages is its own but where it delegated it: then a service runs as
        // the directory's owner (systemd hands it over), or it is marked so (root).
        let systemd = access("/run/systemd/system", F_OK) == 0
        guard !systemd || geteuid() != 0 || isDelegated(directory) else { return nil }
        sweep(directory)
        return (directory, path)
    }

    /// Where the cgroup v2 hierarchy is mounted (/sys/fs/cgroup, or /sys/fs/cgroup/unified beside
    /// v1's), from /proc/self/mountinfo.
    static func cgroup2Mount() -> String? {
        guard let text = try? String(contentsOfFile: "/proc/self/mountinfo", encoding: .utf8) else { return nil }
        for line in text.split(separator: "\n") {
            // ID PARENT MAJ:MIN ROOT MOUNT OPTIONS [OPTIONAL...] - TYPE SOURCE SUPER
            let halves = line.components(separatedBy: " - ")
            guard halves.count == 2, halves[1].hasPrefix("cgroup2 ") else { continue }
            let fields = halves[0].split(separator: " ")
            if fields.count > 4, fields[3] == "/" { return String(fields[4]) }
        }
        return nil
    }

    static func isDelegated(_ directory: String) -> Bool {
        ["trusted.delegate", "user.delegate"].contains { name in
            var value = [UInt8](repeating: 0, count: 8)
            let n = getxattr(directory, name, &value, value.count)
            return n == 1 && value[0] == UInt8(ascii: "1")
        }
    }

    /// Removes the empty hook cgroups of runs that are gone (killed while a hook ran). A run's
    /// cgroup with a process in it stays (rmdir refuses it), and so does a live run's.
    static func sweep(_ directory: String) {
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: directory) else { return }
        for name in names where name.hasPrefix("streakd-hook-") {
            let parts = name.split(separator: "-")
            guard parts.count == 4, let pid = pid_t(parts[2]), pid != getpid(), access("/proc/\(pid)", F_OK) != 0
            else { continue }
            rmdir(directory + "/" + name)
        }
    }
}
