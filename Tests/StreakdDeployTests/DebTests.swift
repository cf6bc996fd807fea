import Foundation
import StreakTestKit
import Testing

/// `make deb` (the Debian package): built from the test build's binary (uncompressed: a debug
/// binary is large), installed with dpkg into an empty root (`dpkg --root`, its maintainer
/// scripts run outside a chroot with DPKG_ROOT), then purged. DebianRootTests (system tier)
/// installs it on a debootstrapped Debian system and runs its user timer's tick under a
/// `systemd --user` manager there. The release binary is tested by neither.
@Suite("make deb", .fastTier)
struct DebTests {
    static let dpkg = Prerequisite.program("/usr/bin/dpkg-deb", package: "dpkg")

    /// The package's files (but the catalog's database postinst makes), relative to the root.
    static let packaged: [String] = {
        let units =
            ["check", "refill", "tick"].flatMap { ["streakd-\($0).service", "streakd-\($0).timer"] }
            + ["streakd.service", "streakd.socket"]
        return [
            "usr/bin/streakd", "usr/lib/systemd/catalog/streakd.catalog",
            "usr/share/bash-completion/completions/streakd", "usr/share/doc/streakd/network.conf",
            "usr/share/doc/streakd/postgres.conf", "usr/share/doc/streakd/streakd.rules.yml",
            "usr/share/doc/streakd/streakd.toml.example", "usr/share/fish/vendor_completions.d/streakd.fish",
            "usr/share/icons/hicolor/scalable/apps/streakd.svg", "usr/share/man/man1/streakd.1",
            "usr/share/man/man5/streakd.toml.5", "usr/share/zsh/site-functions/_streakd",
        ] + units.map { "usr/lib/systemd/system/" + $0 } + units.map { "usr/lib/systemd/user/" + $0 }
    }()

    @Test(.requires(.root, dpkg)) func theDebInstallsIntoAFreshRootAndPurgesCleanly() throws {
        try #require(madeArtifacts.code == 0, "\(madeArtifacts)")
        let scratch = try ScratchDir()
        let made = make(["deb"], ["DEB_DIR": scratch.sub("deb"), "DEB_FLAGS": "-Znone"])
        try #require(made.code == 0, "make deb: \(made)")
        let arch = run(["/usr/bin/dpkg", "--print-architecture"]).out.trimmingCharacters(in: .whitespacesAndNewlines)
        let deb = scratch.sub("deb/streakd_\(madeVersion)_\(arch).deb")
        let fields = run(["/usr/bin/dpkg-deb", "--field", deb, "Package", "Version", "Architecture"])
        #expect(fields.out == "Package: streakd\nVersion: \(madeVersion)\nArchitecture: \(arch)\n", "\(fields)")
        let depends = run(["/usr/bin/dpkg-deb", "--field", deb, "Depends"]).out
        for library in ["libsqlite3-0", "libsystemd0", "libpq5"] {
            #expect(depends.contains(library), "Depends: \(depends)")
        }

        // A fresh root: an empty dpkg database, nothing else.
        let root = scratch.sub("root")
        for folder in ["var/lib/dpkg/info", "var/lib/dpkg/updates"] {
            try FileManager.default.createDirectory(atPath: root + "/" + folder, withIntermediateDirectories: true)
        }
        for file in ["var/lib/dpkg/status", "var/lib/dpkg/available"] {
            try Data().write(to: URL(fileURLWithPath: root + "/" + file))
        }
        // systemd's own catalog, as on any system (journalctl keeps a database it would empty).
        let systemd = "usr/lib/systemd/catalog/systemd.catalog"
        try FileManager.default.createDirectory(
            atPath: root + "/usr/lib/systemd/catalog", withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: "/" + systemd, toPath: root + "/" + systemd)
        let dpkg = [
            "/usr/bin/dpkg", "--root=\(root)", "--force-script-chrootless", "--force-depends", "--log=/dev/null",
        ]
        let install = run(dpkg + ["-i", deb])
        #expect(install.code == 0, "dpkg -i: \(install)")
        let installed = files(under: root).filter { !$0.hasPrefix("var/lib/dpkg/") && $0 != systemd }
        // postinst: journalctl --update-catalog, in the root, makes the catalog's database.
        #expect(installed == (Self.packaged + ["var/lib/systemd/catalog/database"]).sorted(), "\(installed)")
        for kind in ["system", "user"] {
            let tick = try read(root + "/usr/lib/systemd/\(kind)/streakd-tick.service")
            #expect(values("ExecStart", in: tick) == ["/usr/bin/streakd tick"], "\(kind)")
        }
        let catalog = run(["/usr/bin/journalctl", "--root=\(root)", "--list-catalog", "--no-pager"])
        #expect(catalog.out.contains("streakd tick: "), "\(catalog)")
        let version = run([root + "/usr/bin/streakd", "--version"])
        #expect(version.code == 0 && version.out.hasPrefix("streakd \(madeVersion)"), "\(version)")

        // Purged: only dpkg's own files are left, and the catalog's database without streakd.
        let purge = run(dpkg + ["--purge", "streakd"])
        #expect(purge.code == 0, "dpkg --purge: \(purge)")
        #expect(
            files(under: root).filter { !$0.hasPrefix("var/lib/dpkg/") } == [
                systemd, "var/lib/systemd/catalog/database",
            ])
        #expect(
            !run(["/usr/bin/journalctl", "--root=\(root)", "--list-catalog", "--no-pager"]).out.contains("streakd"))
    }
}
