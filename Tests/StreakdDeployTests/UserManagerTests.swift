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
        let ended = Journal.read([
            "-o", "cat", "_UID=\(e2e.uid)", "MESSAGE_ID=\(JournalSink.summaryMessageIDs["tick"]!)",
        ])
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
