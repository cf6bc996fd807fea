import Foundation
import StreakDelivery
import StreakTestKit
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// `make deb` on a fresh Debian 12 system (DebianRoot: debootstrap's minbase with systemd and the
/// package's Depends, nothing else): `dpkg -i` resolves against what Debian installed, the files
/// are where the package says, and a user's `systemd --user` manager runs the packaged
/// streakd-tick.timer and its service, as README's install section tells a user to: the tick
/// makes the user's store, runs again over a streak the user's own streakd added, and logs its
/// summary entry, which the package's catalog explains. It packages the swift-build binary, or
/// the one `STREAKD_DEB_BINARY` names (a release build: `swift build -c release
/// --static-swift-stdlib`, as a packager builds it; too slow to build in CI). What it leaves
/// out: the system units (no PID 1 systemd here).
@Suite(
    "the .deb on a fresh Debian system", .serialized,
    .systemTier("a debootstrapped Debian 12 root with a systemd --user manager in it"),
    .timeLimit(TestTier.systemLimit))
struct DebianRootTests {
    @Test(.requires(.root, DebTests.dpkg, .debianRootTools, .debianRoot))
    func theDebInstallsOnDebianAndItsUserTimerTicks() throws {
        try #require(madeArtifacts.code == 0, "\(madeArtifacts)")
        let root = try DebianRoot()
        defer { root.tearDown() }
        var variables = ["DEB_DIR": root.base + "/deb", "DEB_FLAGS": "-Znone"]
        if let binary = ProcessInfo.processInfo.environment["STREAKD_DEB_BINARY"] { variables["STREAKD"] = binary }
        let made = make(["deb"], variables)
        try #require(made.code == 0, "make deb: \(made)")
        let arch = run(["/usr/bin/dpkg", "--print-architecture"]).out.trimmingCharacters(in: .whitespacesAndNewlines)
        let deb = "streakd_\(madeVersion)_\(arch).deb"
        try FileManager.default.linkItem(atPath: root.base + "/deb/" + deb, toPath: root.path + "/tmp/" + deb)
        try root.boot()

        // dpkg -i, its Depends met by Debian's packages alone (no --force-depends).
        let install = root.inside(["/usr/bin/dpkg", "-i", "/tmp/" + deb], timeout: .seconds(120))
        try #require(install.code == 0, "dpkg -i: \(install)")
        let listed = Set(
            root.inside(["/usr/bin/dpkg-query", "-L", "streakd"]).out.split(separator: "\n").map(String.init))
        for file in DebTests.packaged {
            #expect(listed.contains("/" + file), "dpkg -L streakd: \(file) missing")
            #expect(FileManager.default.fileExists(atPath: root.path + "/" + file), "\(file) not installed")
        }
        let man = (try? read(root.path + "/usr/share/man/man1/streakd.1")) ?? ""
        #expect(man.contains(#".TH STREAKD 1 ""#) && man.contains("\"streakd \(madeVersion)\""), "streakd(1)")
        // The bash completion, loaded as bash-completion loads it (extglob on), completes streakd.
        let completion = root.inside([
            "/bin/bash", "-c",
            "shopt -s extglob && . /usr/share/bash-completion/completions/streakd && complete -p streakd",
        ])
        #expect(completion.out.contains("-F _streakd streakd"), "bash completion: \(completion)")
        // postinst's journalctl --update-catalog: the system's catalog has streakd's entries.
        let catalog = root.inside(["/usr/bin/journalctl", "--list-catalog", "--no-pager"])
        #expect(catalog.out.contains("streakd tick: "), "\(catalog)")
        let version = root.inside(["/usr/bin/streakd", "--version"])
        #expect(version.code == 0 && version.out.hasPrefix("streakd \(madeVersion)"), "\(version)")

        // A user, their manager, the timer as README says: systemctl --user enable --now.
        let user = "alice"
        let added = root.inside(["/usr/sbin/useradd", "--create-home", "--user-group", "--shell", "/bin/bash", user])
        try #require(added.code == 0, "useradd: \(added)")
        try root.startJournal()
        try root.startUserManager(for: user)
        let enable = root.systemctl(["enable", "--now", "streakd-tick.timer"], as: user)
        #expect(enable.code == 0, "enable --now: \(enable)")
        #expect(root.systemctl(["is-enabled", "streakd-tick.timer"], as: user).out == "enabled\n")
        #expect(root.systemctl(["is-active", "streakd-tick.timer"], as: user).out == "active\n")
        let timers = root.systemctl(["list-timers", "--all", "--no-pager"], as: user)
        #expect(timers.out.contains("streakd-tick.timer") && timers.out.contains("streakd-tick.service"), "\(timers)")

        // The tick, started as the timer starts it: it makes the user's store (0600, theirs).
        let home = root.path + "/home/" + user
        let store = home + "/.local/state/streakd/streakd.sqlite"
        tick(root, user)
        try #require(FileManager.default.fileExists(atPath: store), "no store at \(store)\n\(root.diagnostics())")
        let attributes = try FileManager.default.attributesOfItem(atPath: store)
        #expect((attributes[.posixPermissions] as? Int) == 0o600, "\(attributes)")
        #expect((attributes[.ownerAccountID] as? Int).map(String.init) == root.uid(of: user), "\(attributes)")

        // The user's streakd at its default paths, the same store; the next tick runs over it.
        let streak = root.inside(["/usr/bin/streakd", "user", "add", user, "--tz", "UTC"], as: user)
        #expect(streak.code == 0, "user add: \(streak)")
        let checkin = root.inside(["/usr/bin/streakd", "checkin", user], as: user)
        #expect(checkin.code == 0, "checkin: \(checkin)")
        tick(root, user)
        let status = root.inside(["/usr/bin/streakd", "status", user, "-o", "json"], as: user)
        #expect(status.code == 0 && status.out.contains(#""current":1"#), "status: \(status)")

        // Both runs' summary entries, from the service, explained by the package's catalog.
        let summary = JournalSink.summaryMessageIDs["tick"]!
        let entries = root.inside([
            "/usr/bin/journalctl", "--no-pager", "-x", "-o", "short", "MESSAGE_ID=\(summary)",
            "_UID=\(root.uid(of: user))",
        ])
        let subjects = entries.out.components(separatedBy: "Subject: streakd tick: ").count - 1
        #expect(subjects == 2, "journalctl -x: \(entries)\n\(root.diagnostics())")
    }

    /// streakd-tick.service started and done: a success, exit 0.
    private func tick(_ root: DebianRoot, _ user: String, sourceLocation: SourceLocation = #_sourceLocation) {
        let start = root.systemctl(["start", "streakd-tick.service"], as: user, timeout: .seconds(180))
        let shown = root.systemctl(["show", "-p", "Result", "-p", "ExecMainStatus", "streakd-tick.service"], as: user)
        #expect(start.code == 0, "start: \(start)\n\(root.diagnostics())", sourceLocation: sourceLocation)
        #expect(
            shown.out.contains("Result=success\n") && shown.out.contains("ExecMainStatus=0\n"), "\(shown)",
            sourceLocation: sourceLocation)
    }
}
