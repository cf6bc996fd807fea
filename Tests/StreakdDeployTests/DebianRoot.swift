import Foundation
import StreakTestKit
import Testing

#if canImport(Glibc)
    import Glibc
#endif

extension Prerequisite {
    /// The fresh Debian 12 system scripts/debian-root keeps in the machine's cache, current.
    static let debianRoot: Prerequisite = {
        let check = run(
            [packageRoot + "/scripts/debian-root", "--check"],
            env: ["PATH": searchPath, "STREAKD_TEST_CACHE": DebianRoot.cache], timeout: .seconds(30))
        return Prerequisite(missing: check.code == 0 ? nil : check.err.trimmingCharacters(in: .whitespacesAndNewlines))
    }()
    /// What entering that system takes: namespaces of its own and the tarball's tools.
    static let debianRootTools = all([
        unshare, program("/usr/bin/nsenter", package: "util-linux"), program("/usr/bin/zstd", package: "zstd"),
    ])
}

/// A fresh Debian 12 system for one test, run as a machine of its own: a copy of the tarball
/// scripts/debian-root caches, unpacked into a scratch folder, then made the root of new mount and
/// PID namespaces (unshare; pivot_root, not chroot: the kernel refuses a user namespace, so
/// PrivateUsers=, inside a chroot). In there: its own /proc, the machine's /sys and /dev, an empty
/// /run. Commands enter it with nsenter. The namespace's PID 1 is a `sleep` of `lifetime`: when it
/// ends (tearDown kills it, or its time runs out after a test that was killed), the kernel ends
/// every process inside, and the mounts go with the namespace: none is ever seen outside it.
///
/// The swift-build binary the tests package links the toolchain's Swift runtime (the release
/// build of `make deb` has it inside): the runtime's folder is bound into the root, read-only, at
/// the same path.
final class DebianRoot {
    static let cache = ProcessInfo.processInfo.environment["STREAKD_TEST_CACHE"] ?? "/var/cache/streakd-tests"
    static var tarball: String { cache + "/debian-root.tar.zst" }
    /// Seconds the namespace lives at most.
    static let lifetime = 900
    static let prefix = "streakd-deb."

    /// The scratch folder (also the name of the manager's cgroups); the system is `path`.
    let base: String
    var path: String { base + "/root" }
    var name: String { (base as NSString).lastPathComponent }
    /// unshare, and the namespace's PID 1 as this machine sees it.
    private var holder: pid_t?
    private var initPID: pid_t?
    /// nsenter processes whose child runs inside (journald, the user manager).
    private var daemons: [pid_t] = []
    /// Whose `systemd --user` runs inside, once started.
    private var managerUser: String?

    init() throws {
        Self.sweepLeftovers()
        base = (NSTemporaryDirectory() as NSString).appendingPathComponent(
            Self.prefix + UUID().uuidString.prefix(8).lowercased())
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        let unpack = run(
            ["/bin/sh", "-c", #"zstd -dcq -- "$1" | tar --numeric-owner -xf - -C "$2""#, "sh", Self.tarball, path],
            env: ["PATH": "/usr/bin:/bin"], timeout: .seconds(180))
        guard unpack.code == 0 else {
            Self.remove(base)
            Issue.record("unpacking \(Self.tarball): \(unpack)")
            throw Missing(name: "the Debian root")
        }
    }

    /// The namespaces, their mounts, the pivot into the root.
    func boot() throws {
        let script = """
            set -eu
            r=$1
            exec 3>"$2"
            mount --bind "$r" "$r"
            mount -t proc proc "$r/proc"
            mount --rbind /sys "$r/sys"
            mount --rbind /dev "$r/dev"
            mount -t tmpfs -o mode=0755,nosuid,nodev tmpfs "$r/run"
            if [ -n "$3" ]; then
                mkdir -p "$r$3" && mount --bind "$3" "$r$3" && mount -o remount,bind,ro "$r$3"
            fi
            mkdir "$r/.host"
            cd "$r"
            pivot_root . .host
            cd /
            umount -l /.host
            rmdir /.host
            echo ready >&3
            exec 3>&- sleep "$4"
            """
        let ready = base + "/ready"
        let pid = try spawn(
            [
                "/usr/bin/unshare", "--mount", "--pid", "--fork", "--kill-child", "--propagation", "private", "--",
                "/bin/sh", "-c", script, "sh", path, ready, Self.swiftRuntime ?? "", String(Self.lifetime),
            ], env: ["PATH": "/usr/sbin:/usr/bin:/sbin:/bin"], cwd: base, stdin: "/dev/null",
            stdout: base + "/holder.log", stderr: base + "/holder.log")
        holder = pid
        let deadline = ContinuousClock.now + .seconds(30)
        while ContinuousClock.now < deadline {
            let children = (try? read("/proc/\(pid)/task/\(pid)/children")) ?? ""
            if initPID == nil, let child = children.split(separator: " ").first.flatMap({ pid_t($0) }) {
                initPID = child
            }
            if initPID != nil, (try? read(ready)) == "ready\n" { return }
            if !EndToEnd.alive(pid) { break }
            usleep(50_000)
        }
        throw Missing(name: "the Debian root's namespaces: \(diagnostics())")
    }

    /// The toolchain's Swift runtime folder (the built streakd's RUNPATH names it), if it is there.
    static var swiftRuntime: String? {
        let folder = ((which("swift") as NSString?)?.resolvingSymlinksInPath as NSString?)?
            .deletingLastPathComponent
        guard let folder else { return nil }
        let runtime = ((folder + "/../lib/swift/linux") as NSString).standardizingPath
        return FileManager.default.fileExists(atPath: runtime + "/libswiftCore.so") ? runtime : nil
    }

    /// `argv` inside the root, as root with a plain environment, or as `user` in their home.
    func inside(_ argv: [String], as user: String? = nil, timeout: Duration = .seconds(60)) -> Outcome {
        run(enter(argv, as: user), env: ["PATH": "/usr/bin:/bin"], timeout: timeout)
    }

    private func enter(_ argv: [String], as user: String?) -> [String] {
        let path = "PATH=/usr/sbin:/usr/bin:/sbin:/bin"
        var command = [
            "/usr/bin/nsenter", "--target", String(initPID ?? 0), "--mount", "--pid", "--root", "--wd", "--",
        ]
        guard let user else { return command + ["/usr/bin/env", "-i", path, "LANG=C.UTF-8"] + argv }
        command += ["/usr/bin/setpriv", "--reuid=\(user)", "--regid=\(user)", "--init-groups", "--"]
        return command + ["/usr/bin/env", "-i", "-C", "/home/\(user)"] + userEnvironment(user) + argv
    }

    /// What a desktop session of `user` has (pam_systemd's XDG_RUNTIME_DIR), nothing more.
    private func userEnvironment(_ user: String) -> [String] {
        [
            "HOME=/home/\(user)", "USER=\(user)", "LOGNAME=\(user)", "PATH=/usr/bin:/bin", "LANG=C.UTF-8",
            "XDG_RUNTIME_DIR=/run/user/\(uid(of: user))",
        ]
    }

    func uid(of user: String) -> String {
        inside(["/usr/bin/id", "-u", user]).out.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    func systemctl(_ args: [String], as user: String, timeout: Duration = .seconds(60)) -> Outcome {
        inside(["/usr/bin/systemctl", "--user"] + args, as: user, timeout: timeout)
    }

    /// Starts `argv` inside, as a daemon whose output goes to `log` in the scratch folder.
    private func daemon(_ argv: [String], log: String) throws {
        let pid = try spawn(
            enter(argv, as: nil), env: ["PATH": "/usr/bin:/bin"], cwd: base, stdin: "/dev/null",
            stdout: base + "/" + log, stderr: base + "/" + log)
        daemons.append(pid)
    }

    /// systemd-journald, as on any Debian system (no PID 1 here starts it).
    func startJournal() throws {
        _ = inside(["/bin/mkdir", "-p", "/run/systemd/journal"])
        try daemon(["/lib/systemd/systemd-journald"], log: "journald.log")
        let deadline = ContinuousClock.now + .seconds(30)
        while ContinuousClock.now < deadline {
            if inside(["/usr/bin/test", "-S", "/run/systemd/journal/socket"]).code == 0 { return }
            usleep(100_000)
        }
        throw Missing(name: "journald in the Debian root: \(diagnostics())")
    }

    /// `systemd --user` for `user`, as user@.service starts it on a booted system: the runtime
    /// directory pam_systemd makes, the /run/systemd/system of a booted system, the folder PID 1
    /// stages units' mount namespaces in, cgroups of its own (named after the scratch folder).
    func startUserManager(for user: String) throws {
        let uid = uid(of: user)
        let prepare = inside([
            "/bin/sh", "-c",
            #"mkdir -p /run/systemd/system && mkdir -m 0700 -p /run/systemd/unit-root "$1" && chown "$2:$2" "$1""#,
            "sh", "/run/user/\(uid)", user,
        ])
        try #require(prepare.code == 0, "\(prepare)")
        let script = """
            for root in $1; do
                mkdir -p "$root/$2" && echo $$ >"$root/$2/cgroup.procs" && chown -R "$3:$3" "$root/$2" || exit 1
            done
            exec setpriv --reuid="$3" --regid="$3" --init-groups -- env -i HOME="/home/$3" USER="$3" LOGNAME="$3" \
                XDG_RUNTIME_DIR="/run/user/$4" PATH=/usr/bin:/bin LANG=C.UTF-8 /lib/systemd/systemd --user
            """
        try daemon(
            ["/bin/sh", "-c", script, "sh", EndToEnd.cgroupRoots.joined(separator: " "), name, user, uid],
            log: "manager.log")
        managerUser = user
        let deadline = ContinuousClock.now + .seconds(60)
        while ContinuousClock.now < deadline {
            let state = systemctl(["is-system-running"], as: user, timeout: .seconds(10)).out
            if state.hasPrefix("running") || state.hasPrefix("degraded") { return }
            if let manager = daemons.last, !EndToEnd.alive(manager) { break }
            usleep(200_000)
        }
        throw Missing(name: "a systemd --user for \(user) in the Debian root: \(diagnostics())")
    }

    func diagnostics() -> String {
        var lines = ["--- scratch \(base)"]
        for log in ["holder.log", "journald.log", "manager.log"] {
            lines.append("--- \(log)\n" + ((try? read(base + "/" + log)) ?? "(none)"))
        }
        if initPID != nil {
            let journal = inside([
                "/usr/bin/journalctl", "--no-pager", "-n", "40", "_TRANSPORT=stdout", "+", "_TRANSPORT=journal",
            ])
            lines.append("--- journal in the root\n" + journal.out)
        }
        if let user = managerUser {
            let status = systemctl(["status", "--no-pager", "--full"], as: user, timeout: .seconds(20))
            lines.append("--- systemctl --user status (\(user))\n" + status.out + status.err)
        }
        return lines.joined(separator: "\n")
    }

    /// Ends every process inside (the namespace's PID 1 first: the kernel ends the rest), the
    /// manager's cgroups, then the scratch folder, unless a mount is seen under it.
    func tearDown() {
        if let initPID { kill(initPID, SIGKILL) }
        for pid in [holder].compactMap({ $0 }) + daemons where waitForExit(pid, timeout: .seconds(10)) == nil {
            kill(pid, SIGKILL)
            _ = waitForExit(pid, timeout: .seconds(10))
        }
        holder = nil
        initPID = nil
        daemons = []
        Self.remove(base)
    }

    /// The cgroups and the folder of a run; never a folder something is mounted under.
    static func remove(_ base: String) {
        EndToEnd.removeCgroups(named: (base as NSString).lastPathComponent)
        let mounts = (try? read("/proc/self/mountinfo")) ?? ""
        guard !mounts.contains(" \(base)/") else {
            Issue.record("\(base) has mounts under it: left in place")
            return
        }
        try? FileManager.default.removeItem(atPath: base)
    }

    /// What a run killed mid-way left: its namespace ended by itself (`lifetime`); its cgroups and
    /// scratch folder remain, removed here once they are older than that.
    static func sweepLeftovers() {
        let cutoff = Date().addingTimeInterval(-Double(lifetime) - 60)
        let tmp = NSTemporaryDirectory() as NSString
        for entry in (try? FileManager.default.contentsOfDirectory(atPath: tmp as String)) ?? []
        where entry.hasPrefix(prefix) {
            let base = tmp.appendingPathComponent(entry)
            let modified = (try? FileManager.default.attributesOfItem(atPath: base)[.modificationDate]) as? Date
            if (modified ?? Date()) < cutoff { remove(base) }
        }
    }
}
