import Foundation
import StreakCore
import StreakDelivery
import StreakTestKit
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// deploy/user under a real `systemd --user` manager, run by an unprivileged user (nobody), as
/// on a desktop: `make install-user` into a scratch HOME; a streakd user added and seven days
/// of check-ins imported with the installed CLI at its default paths; the manager's own session
/// bus (dbus-user-session's dbus.socket) with dunst on an Xvfb display as the notification
/// server; the tick timer enabled; the tick service started. The reminder must be in the
/// journal (sent from the service's cgroup), on dunst, explained by `journalctl -x`, and hooks
/// must have run inside the sandbox. Everything it starts is stopped at the end, whatever
/// happened: the manager and everything in its cgroups, dunst, Xvfb, the /run/systemd/system
/// marker (only if this test made it, and only until the manager is up), /run/systemd/unit-root
/// (only if this test made it), the scratch folder.
@Suite(
    "systemd --user end to end", .serialized, .systemTier("a systemd --user manager for nobody, its bus and a desktop"),
    .timeLimit(TestTier.systemLimit))
struct UserManagerTests {
    // No time limit of its own: a limit counts from the start of the pass (TestTier), and this
    // test may wait there behind other system tests; the tier's covers it.
    @Test(.requires(.root, .userManager))
    func aReminderReachesTheJournalTheDesktopAndHooksFromTheUserUnits() throws {
        try #require(madeArtifacts.code == 0, "\(madeArtifacts)")
        // Before the manager starts: its units' output and streakd's entries go to it.
        try Journal.ensureRunning()
        let e2e = try EndToEnd()
        defer { e2e.tearDown() }
        let user = "desk-\(UUID().uuidString.prefix(8).lowercased())"
        let hookOutput = e2e.home + "/.local/state/streakd/hook-out.json"

        // make install-user into the scratch HOME (as root: the package folder need not be
        // readable by nobody), then the HOME is handed to nobody.
        let install = make(["install-user"], env: ["HOME": e2e.home])
        try #require(install.code == 0, "make install-user: \(install)")
        // The user's own configuration at its default path, found by the CLI and the units alike:
        // this desktop shows the user's notifications; one hook keeps the JSON object it gets,
        // one fails (so the run leaves a delivery pending: exit 75).
        try e2e.write(
            ".config/streakd/streakd.toml",
            """
            [desktop]
            users = ["\(user)"]

            [[hooks]]
            name = "keep"
            command = ["/bin/sh", "-c", "cat >> \(hookOutput)"]

            [[hooks]]
            name = "down"
            command = ["/bin/false"]
            kinds = ["at_risk"]

            """)
        try e2e.handHomeToUser()

        // The CLI by hand, at its default paths (no --store, no --config, no XDG variables).
        let (zone, remindAt, checkins) = try Self.plan()
        let added = e2e.asUser(["streakd", "user", "add", user, "--tz", zone, "--remind-at", remindAt])
        try #require(added.code == 0, "user add: \(added)")
        let lines = checkins.map { #"{"user":"\#(user)","at":"\#($0)","tz":"\#(zone)"}"# }
        try e2e.write("checkins.jsonl", lines.joined(separator: "\n") + "\n")
        try e2e.handHomeToUser()
        let imported = e2e.asUser(["streakd", "import", e2e.home + "/checkins.jsonl"])
        try #require(imported.code == 0, "import: \(imported)")
        let status = e2e.asUser(["streakd", "status", user, "-o", "json"])
        #expect(status.out.contains(#""current":7"#), "status: \(status)")
        #expect(FileManager.default.fileExists(atPath: e2e.home + "/.local/state/streakd/streakd.sqlite"))

        try e2e.startManager()
        try e2e.startNotificationServer()

        // The timer, enabled and listed, next firing on a quarter hour.
        #expect(e2e.systemctl(["daemon-reload"]).code == 0)
        let enable = e2e.systemctl(["enable", "--now", "streakd-tick.timer"])
        #expect(enable.code == 0, "enable --now: \(enable)")
        let timers = e2e.systemctl(["list-timers", "--all", "--no-pager"])
        #expect(timers.out.contains("streakd-tick.timer"), "list-timers: \(timers)")
        #expect(timers.out.contains("streakd-tick.service"), "list-timers: \(timers)")
        let next = e2e.systemctl(["show", "-p", "NextElapseUSecRealtime", "--value", "streakd-tick.timer"]).out
        #expect(
            next.contains(":00:00 UTC") || next.contains(":15:00 UTC") || next.contains(":30:00 UTC")
                || next.contains(":45:00 UTC"), "next elapse: \(next)")

        // The tick service, started as the timer would start it.
        let start = e2e.systemctl(["start", "streakd-tick.service"], timeout: .seconds(180))
        #expect(start.code == 0, "start streakd-tick.service: \(start)")
        let shown = e2e.systemctl(["show", "-p", "Result", "-p", "ExecMainStatus", "streakd-tick.service"]).out
        // Exit 75 (a hook delivery left pending) is no failure of the unit, but visible.
        #expect(shown.contains("Result=success"), "\(shown)")
        #expect(shown.contains("ExecMainStatus=75"), "\(shown)")
        let status75 = e2e.systemctl(["status", "--no-pager", "streakd-tick.service"])
        #expect(status75.out.contains("status=75"), "systemctl --user status: \(status75)")

        // The journal: one at_risk entry, written by the service (its cgroup), as nobody.
        let atRisk = NotificationKind.atRisk.messageID
        let json = Journal.read(["-o", "json", "MESSAGE_ID=\(atRisk)", "STREAKD_USER=\(user)"])
        let entries = json.split(separator: "\n").compactMap {
            (try? JSONSerialization.jsonObject(with: Data($0.utf8))) as? [String: Any]
        }
        #expect(entries.count == 1, "at_risk entries for \(user): \(json)\n\(e2e.diagnostics())")
        if let entry = entries.first {
            #expect(entry["STREAKD_KIND"] as? String == "at_risk")
            #expect(entry["STREAKD_STREAK_LENGTH"] as? String == "7")
            #expect(entry["STREAKD_TIMEZONE"] as? String == zone)
            #expect(entry["PRIORITY"] as? String == "5")
            #expect(entry["_UID"] as? String == String(e2e.uid))
            #expect((entry["_SYSTEMD_CGROUP"] as? String ?? "").hasSuffix("/app.slice/streakd-tick.service"))
        }
        // The service's summary line (standard error) is in the journal too.
        let summary = Journal.read(["-o", "cat", "_UID=\(e2e.uid)", "SYSLOG_IDENTIFIER=streakd", "--since=-10min"])
        #expect(summary.contains(user), "the service's output: \(summary)")

        // The run's summary entry, written by the service.
        let ended = Journal.read(["-o", "cat", "_UID=\(e2e.uid)", "MESSAGE_ID=\(JournalSink.summaryMessageIDs["tick"]!)"])
        #expect(ended.contains("tick: ") && ended.contains(" pending"), "the summary entry: \(ended)")
        // The weekly store check, started as its timer would start it: the store is whole.
        let check = e2e.systemctl(["start", "streakd-check.service"], timeout: .seconds(180))
        #expect(check.code == 0, "start streakd-check.service: \(check)\n\(e2e.diagnostics())")
        let checked = e2e.systemctl(["show", "-p", "Result", "-p", "ExecMainStatus", "streakd-check.service"]).out
        #expect(checked.contains("Result=success") && checked.contains("ExecMainStatus=0"), "\(checked)")

        // The desktop: dunst got it from the user's session bus.
        let desktop = e2e.waitForNotification(containing: "7-day streak")
        #expect(desktop.contains("appname: 'streakd'"), "dunst printed:\n\(desktop)\n\(e2e.diagnostics())")
        #expect(desktop.contains("summary: 'Streak at risk'"), "dunst printed:\n\(desktop)")

        // The hook ran inside the sandbox and got the JSON object on standard input (beside the
        // badge the week earned, in the order the run delivered them).
        let hook = (try? read(hookOutput)) ?? ""
        #expect(hook.contains(#""kind":"at_risk""#) && hook.contains(user), "hook got: \(hook)")

        // journalctl -x explains the entry with the catalog that make install-catalog stages.
        let staging = e2e.base + "/catalog-root"
        #expect(make(["install-catalog"], ["DESTDIR": staging]).code == 0)
        let explained = try #require(
            journalctlWithCatalog(staging, ["-x", "MESSAGE_ID=\(atRisk)", "STREAKD_USER=\(user)"]),
            "journalctl -x with the staged catalog needs root, unshare and /var/lib/systemd/catalog")
        #expect(explained.out.contains("Subject: \(user)'s 7-day streak is at risk"), "journalctl -x: \(explained)")

        // The CLI by hand sees the service's ledger: the reminder is not due again.
        let again = e2e.asUser(["streakd", "tick", "-o", "json"])
        #expect(again.code == 0 || again.code == 75, "tick by hand: \(again)")
        #expect(!again.out.contains(#""kind":"at_risk""#), "sent twice: \(again)")
    }

    /// The API's user units: streakd.socket enabled, serve not running until a connection; curl
    /// through the socket starts it (Type=notify: active once READY=1) and gets /v1/health; a
    /// check-in with a token is stored where the CLI sees it; a stop is a clean exit 0.
    @Test(.requires(.root, .userManager, .program("/usr/bin/curl", package: "curl")))
    func theAPISocketStartsServeAtTheFirstConnection() throws {
        try #require(madeArtifacts.code == 0, "\(madeArtifacts)")
        try Journal.ensureRunning()
        let e2e = try EndToEnd()
        defer { e2e.tearDown() }
        let install = make(["install-user"], env: ["HOME": e2e.home])
        try #require(install.code == 0, "make install-user: \(install)")
        try e2e.handHomeToUser()
        let added = e2e.asUser(["streakd", "user", "add", "app-user", "--tz", "UTC"])
        try #require(added.code == 0, "user add: \(added)")
        let token = e2e.asUser(["streakd", "token", "add", "app", "--scope", "ingest"])
        try #require(token.code == 0, "token add: \(token)")

        try e2e.startManager()
        #expect(e2e.systemctl(["daemon-reload"]).code == 0)
        let enable = e2e.systemctl(["enable", "--now", "streakd.socket"])
        #expect(enable.code == 0, "enable --now streakd.socket: \(enable)")
        #expect(e2e.systemctl(["is-active", "streakd.service"]).out.hasPrefix("inactive"), "not before a connection")

        let socket = e2e.runtime + "/streakd.sock"
        let health = e2e.asUser(
            ["/usr/bin/curl", "-sS", "--max-time", "90", "--unix-socket", socket, "http://localhost/v1/health"],
            timeout: .seconds(120))
        #expect(health.code == 0 && health.out.hasPrefix(#"{"status":"ok""#), "\(health)\n\(e2e.diagnostics())")
        let state = e2e.systemctl(["show", "-p", "ActiveState", "-p", "SubState", "-p", "Type", "streakd.service"]).out
        #expect(state.contains("ActiveState=active") && state.contains("SubState=running"), "\(state)")
        let checkin = e2e.asUser([
            "/usr/bin/curl", "-sS", "--max-time", "60", "--unix-socket", socket, "-H",
            "Authorization: Bearer " + token.out.trimmingCharacters(in: .whitespacesAndNewlines), "-H",
            "Content-Type: application/json", "-d", "{}", "-o", "/dev/null", "-w", "%{http_code}",
            "http://localhost/v1/users/app-user/checkins",
        ])
        #expect(checkin.out == "201", "\(checkin)")
        let status = e2e.asUser(["streakd", "status", "app-user", "-o", "json"])
        #expect(status.out.contains(#""total_checkins":1"#), "the CLI sees it: \(status)")

        let stop = e2e.systemctl(["stop", "streakd.service"], timeout: .seconds(60))
        #expect(stop.code == 0, "\(stop)")
        let result = e2e.systemctl(["show", "-p", "Result", "-p", "ExecMainStatus", "streakd.service"]).out
        #expect(result.contains("Result=success") && result.contains("ExecMainStatus=0"), "\(result)")
        #expect(FileManager.default.fileExists(atPath: socket), "the socket stays: the next connection starts serve")
    }

    /// A zone where it is now between 03:00 and 21:00, a reminder time at the last quarter hour there
    /// (so the reminder is due, and fresh until the date ends), and check-ins at noon on the
    /// seven dates before today: a 7-day streak alive through yesterday, today not done.
    static func plan(now: Date = Date()) throws -> (zone: String, remindAt: String, checkins: [String]) {
        let zones = [
            "Europe/Berlin", "America/New_York", "Asia/Tokyo", "Asia/Kolkata", "Pacific/Honolulu",
            "America/Los_Angeles", "Asia/Kathmandu", "Pacific/Auckland",
        ]
        for name in zones {
            guard let tz = TimeZone(identifier: name) else { continue }
            var calendar = Calendar(identifier: .gregorian)
            calendar.timeZone = tz
            let hour = calendar.component(.hour, from: now)
            guard (3...20).contains(hour) else { continue }
            // The last quarter hour (a reminder time must be one of the timer's firings): due already,
            // so the first tick sends it.
            let quarter = Date(timeIntervalSince1970: (now.timeIntervalSince1970 / 900).rounded(.down) * 900)
            let remind = calendar.dateComponents([.hour, .minute], from: quarter)
            let remindAt = String(format: "%02d:%02d", remind.hour!, remind.minute!)
            let today = calendar.startOfDay(for: now)
            let checkins: [String] = try (1...7).map { back in
                let day = try #require(calendar.date(byAdding: .day, value: -back, to: today))
                let noon = try #require(calendar.date(bySettingHour: 12, minute: 0, second: 0, of: day))
                let formatter = ISO8601DateFormatter()
                formatter.timeZone = tz
                formatter.formatOptions = [.withInternetDateTime]
                return formatter.string(from: noon)
            }
            return (name, remindAt, checkins)
        }
        throw Missing(name: "a zone between 03:00 and 21:00")
    }
}

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
