import Foundation
import StreakCore
import StreakDelivery
import StreakTestKit
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// The scratch world of one end-to-end run, and its tear-down.
final class EndToEnd {
    let uid: UInt32 = 65_534
    let gid: UInt32 = 65_534
    let name: String
    /// In /run: the units' PrivateTmp= hides /tmp and /var/tmp, and ProtectHome= /home and /root.
    let base: String
    var home: String { base + "/home" }
    /// The user's runtime directory where systemd expects it, as pam_systemd makes it: the
    /// user manager's sandboxing takes its inaccessible nodes from /run/user/UID/systemd, so
    /// ProtectKernelTunables= and ProtectKernelLogs= fail (226/NAMESPACE) with another one.
    var runtime: String { "/run/user/\(uid)" }
    private var madeRuntime = false
    private var madeMarker = false
    private var madeUnitRoot = false
    /// The manager and the daemons started (Xvfb, dunst), by process id.
    private var manager: pid_t?
    private var daemons: [pid_t] = []
    private var display: String?
    static let marker = "/run/systemd/system"
    /// Where systemd stages a unit's mount namespace. PID 1 makes it (for its own sandboxed
    /// services) on a systemd machine; a user manager cannot, in root's /run/systemd, so its
    /// sandboxed units fail with 226/NAMESPACE without it. Made for the test when missing.
    static let unitRoot = "/run/systemd/unit-root"

    init() throws {
        Self.sweepLeftovers()
        name = "streakd-e2e.\(UUID().uuidString.prefix(8).lowercased())"
        base = "/run/" + name
        try FileManager.default.createDirectory(atPath: home, withIntermediateDirectories: true)
        if FileManager.default.fileExists(atPath: runtime + "/systemd/private"),
            !systemctl(["is-system-running"], timeout: .seconds(10)).out.isEmpty
        {
            Issue.record("\(runtime) is in use: a user manager for nobody is running already")
            throw Missing(name: "a free \(runtime)")
        }
        if !FileManager.default.fileExists(atPath: runtime) {
            try FileManager.default.createDirectory(atPath: runtime, withIntermediateDirectories: true)
            madeRuntime = true
        }
        chmod(runtime, 0o700)
        chown(runtime, uid, gid)
        for (program, package) in [
            ("setpriv", "util-linux"), ("systemctl", "systemd"), ("busctl", "systemd"), ("Xvfb", "xvfb"),
            ("dunst", "dunst"), ("dbus-daemon", "dbus"), ("make", "make"),
        ] {
            _ = try tool(program, package: package)
        }
        guard FileManager.default.fileExists(atPath: "/usr/lib/systemd/user/dbus.socket") else {
            Issue.record("no dbus.socket user unit: install the Debian package dbus-user-session")
            throw Missing(name: "dbus-user-session")
        }
    }

    func write(_ relative: String, _ text: String) throws {
        let path = home + "/" + relative
        try FileManager.default.createDirectory(
            atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        try text.write(toFile: path, atomically: true, encoding: .utf8)
    }

    func handHomeToUser() throws {
        let result = run(["/bin/chown", "-R", "\(uid):\(gid)", home])
        try #require(result.code == 0, "chown: \(result)")
    }

    /// The user's environment: what a desktop session has, no XDG_*_HOME, no STREAKD_*.
    var userEnvironment: [String: String] {
        [
            "HOME": home, "USER": "nobody", "LOGNAME": "nobody", "XDG_RUNTIME_DIR": runtime,
            "PATH": home + "/.local/bin:/usr/bin:/bin", "LANG": "C.UTF-8", "TZ": "UTC",
        ]
    }

    func asUser(_ argv: [String], timeout: Duration = .seconds(120)) -> Outcome {
        let setpriv = which("setpriv") ?? "/usr/bin/setpriv"
        let program =
            argv[0].hasPrefix("/")
            ? argv[0]
            : (userEnvironment["PATH"]!.split(separator: ":")
                .map { "\($0)/\(argv[0])" }.first { FileManager.default.isExecutableFile(atPath: $0) } ?? argv[0])
        return run(
            [setpriv, "--reuid=\(uid)", "--regid=\(gid)", "--clear-groups", "--", program] + argv.dropFirst(),
            env: userEnvironment, cwd: home, timeout: timeout)
    }

    func systemctl(_ args: [String], timeout: Duration = .seconds(60)) -> Outcome {
        asUser(["/usr/bin/systemctl", "--user"] + args, timeout: timeout)
    }

    /// Where the manager's cgroups go: the named cgroup v1 hierarchy and the unified one (hybrid),
    /// or the one unified hierarchy.
    static var cgroupRoots: [String] {
        if FileManager.default.fileExists(atPath: "/sys/fs/cgroup/cgroup.controllers") { return ["/sys/fs/cgroup"] }
        return ["/sys/fs/cgroup/systemd", "/sys/fs/cgroup/unified"].filter {
            FileManager.default.fileExists(atPath: $0 + "/cgroup.procs")
        }
    }

    /// Starts `systemd --user` for nobody in cgroups of its own (as user@.service would delegate
    /// them): started in the root cgroup it would move every process there into its init.scope.
    func startManager() throws {
        if !FileManager.default.fileExists(atPath: Self.unitRoot) {
            try FileManager.default.createDirectory(
                atPath: Self.unitRoot, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
            madeUnitRoot = true
        }
        if !FileManager.default.fileExists(atPath: Self.marker) {
            try FileManager.default.createDirectory(atPath: Self.marker, withIntermediateDirectories: true)
            madeMarker = true
        }
        defer { removeMarker() }
        let script = """
            for root in $5; do
                mkdir -p "$root/$1" && echo $$ >"$root/$1/cgroup.procs" && chown -R "$2:$3" "$root/$1" || exit 1
            done
            exec setpriv --reuid="$2" --regid="$3" --clear-groups -- env -i HOME="$4/home" XDG_RUNTIME_DIR="$6" \
                USER=nobody LOGNAME=nobody PATH=/usr/bin:/bin LANG=C.UTF-8 /lib/systemd/systemd --user
            """
        let pid = try spawn(
            [
                "/bin/sh", "-c", script, "sh", name, String(uid), String(gid), base,
                Self.cgroupRoots.joined(separator: " "), runtime,
            ], env: ["PATH": "/usr/bin:/bin"], cwd: base, stdin: "/dev/null", stdout: base + "/manager.log",
            stderr: base + "/manager.log")
        manager = pid
        let deadline = ContinuousClock.now + .seconds(60)
        while ContinuousClock.now < deadline {
            let state = systemctl(["is-system-running"], timeout: .seconds(10)).out
            if state.hasPrefix("running") || state.hasPrefix("degraded") { return }
            if !Self.alive(pid) { break }
            usleep(200_000)
        }
        throw Missing(name: "a running systemd --user: \(diagnostics())")
    }

    /// Xvfb on a free display, dunst on it as nobody, connected to the manager's session bus.
    func startNotificationServer() throws {
        let displayFile = base + "/display"
        let xvfb = try daemon(
            ["/bin/sh", "-c", #"exec Xvfb -displayfd 3 -nolisten tcp -screen 0 640x480x24 3>"$1""#, "sh", displayFile],
            log: "xvfb.log")
        daemons.append(xvfb)
        let deadline = ContinuousClock.now + .seconds(30)
        while display == nil && ContinuousClock.now < deadline {
            if let text = try? read(displayFile), let n = Int(text.trimmingCharacters(in: .whitespacesAndNewlines)) {
                display = ":\(n)"
            }
            usleep(100_000)
        }
        guard let display else { throw Missing(name: "an Xvfb display: \(diagnostics())") }
        while !FileManager.default.fileExists(atPath: runtime + "/bus") && ContinuousClock.now < deadline {
            usleep(100_000)
        }
        let setpriv = which("setpriv") ?? "/usr/bin/setpriv"
        let dunst = try daemon(
            [setpriv, "--reuid=\(uid)", "--regid=\(gid)", "--clear-groups", "--", which("dunst")!, "-print"],
            env: userEnvironment.merging([
                "DISPLAY": display, "DBUS_SESSION_BUS_ADDRESS": "unix:path=\(runtime)/bus",
            ]) { $1 },
            log: "dunst.log")
        daemons.append(dunst)
        while ContinuousClock.now < deadline {
            let owner = asUser(
                ["/usr/bin/busctl", "--user", "status", "org.freedesktop.Notifications"], timeout: .seconds(10))
            if owner.code == 0 && owner.out.contains("dunst") { return }
            usleep(200_000)
        }
        throw Missing(name: "dunst on the session bus: \(diagnostics())")
    }

    private func daemon(_ argv: [String], env: [String: String] = ["PATH": "/usr/bin:/bin"], log: String) throws
        -> pid_t
    {
        try spawn(argv, env: env, cwd: base, stdin: "/dev/null", stdout: base + "/" + log, stderr: base + "/" + log)
    }

    /// Is this child still running? (A child that ended is reaped here.)
    static func alive(_ pid: pid_t) -> Bool {
        var status: Int32 = 0
        return waitpid(pid, &status, WNOHANG) == 0
    }

    /// What dunst printed, once it mentions `text` (or after 20 s).
    func waitForNotification(containing text: String) -> String {
        let deadline = ContinuousClock.now + .seconds(20)
        while true {
            let printed = (try? read(base + "/dunst.log")) ?? ""
            if printed.contains(text) || ContinuousClock.now >= deadline { return printed }
            usleep(200_000)
        }
    }

    func diagnostics() -> String {
        var lines = ["--- scratch \(base)"]
        for log in ["manager.log", "xvfb.log", "dunst.log"] {
            lines.append("--- \(log)\n" + ((try? read(base + "/" + log)) ?? "(none)"))
        }
        if manager != nil {
            lines.append("--- systemctl --user status\n" + systemctl(["status", "--no-pager", "--full"]).out)
        }
        lines.append(
            "--- journal of uid \(uid)\n"
                + run(["/usr/bin/journalctl", "--no-pager", "-n", "40", "_UID=\(uid)"], timeout: .seconds(30)).out)
        return lines.joined(separator: "\n")
    }

    private func removeMarker() {
        if madeMarker {
            rmdir(Self.marker)
            madeMarker = false
        }
    }

    /// Stops everything this run started and removes what it made. Safe to call at any point.
    func tearDown() {
        removeMarker()
        if let manager, Self.alive(manager) {
            _ = systemctl(["exit"], timeout: .seconds(15))
        }
        let started = daemons + [manager].compactMap { $0 }
        for pid in started where Self.alive(pid) { kill(pid, SIGTERM) }
        Self.removeCgroups(named: name)
        for pid in started where waitForExit(pid, timeout: .seconds(5)) == nil {
            kill(pid, SIGKILL)
            _ = waitForExit(pid, timeout: .seconds(10))
        }
        daemons = []
        manager = nil
        if madeUnitRoot {
            rmdir(Self.unitRoot)
            madeUnitRoot = false
        }
        if madeRuntime {
            try? FileManager.default.removeItem(atPath: runtime)
            madeRuntime = false
        }
        try? FileManager.default.removeItem(atPath: base)
    }

    /// Kills every process left in the named cgroups and removes them, deepest first, in every
    /// hierarchy the manager may have used (controllers included).
    static func removeCgroups(named name: String) {
        let hierarchies =
            ((try? FileManager.default.contentsOfDirectory(atPath: "/sys/fs/cgroup")) ?? [])
            .map { "/sys/fs/cgroup/" + $0 } + ["/sys/fs/cgroup"]
        for root in hierarchies {
            let top = root + "/" + name
            guard FileManager.default.fileExists(atPath: top) else { continue }
            for _ in 0..<50 {
                var left = false
                for dir in cgroupDirs(under: top) {
                    let pids = ((try? read(dir + "/cgroup.procs")) ?? "").split(separator: "\n").compactMap {
                        Int32($0)
                    }
                    for pid in pids {
                        kill(pid, SIGKILL)
                        left = true
                    }
                }
                if !left { break }
                usleep(100_000)
            }
            for dir in cgroupDirs(under: top).reversed() { rmdir(dir) }
        }
    }

    /// `top` and every cgroup below it, parents before children.
    static func cgroupDirs(under top: String) -> [String] {
        var found = [top]
        var i = 0
        while i < found.count {
            let dir = found[i]
            for entry in (try? FileManager.default.contentsOfDirectory(atPath: dir)) ?? [] {
                var isDir: ObjCBool = false
                if FileManager.default.fileExists(atPath: dir + "/" + entry, isDirectory: &isDir), isDir.boolValue {
                    found.append(dir + "/" + entry)
                }
            }
            i += 1
        }
        return found
    }

    /// What a run killed mid-way (a crash, a time-out) left behind, older than 15 minutes: never a
    /// run that may still be going in another test process.
    static func sweepLeftovers() {
        let cutoff = Date().addingTimeInterval(-15 * 60)
        func old(_ path: String) -> Bool {
            let modified = (try? FileManager.default.attributesOfItem(atPath: path)[.modificationDate]) as? Date
            return (modified ?? Date()) < cutoff
        }
        for entry in (try? FileManager.default.contentsOfDirectory(atPath: "/run")) ?? []
        where entry.hasPrefix("streakd-e2e.") && old("/run/" + entry) {
            removeCgroups(named: entry)
            try? FileManager.default.removeItem(atPath: "/run/" + entry)
        }
    }
}
