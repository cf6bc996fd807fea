import Foundation
import StreakCore
import StreakDelivery
import StreakTestKit
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// `make install`, `make install-user` and their uninstall targets, into scratch folders only;
/// what they install: the catalog, the man pages, the completions, the icon, the example
/// configuration.
@Suite("make install", .fastTier)
struct InstallTests {
    static let systemFiles = [
        "usr/local/bin/streakd",
        "usr/local/lib/systemd/catalog/streakd.catalog",
        "usr/local/lib/systemd/system/streakd-check.service",
        "usr/local/lib/systemd/system/streakd-check.timer",
        "usr/local/lib/systemd/system/streakd-refill.service",
        "usr/local/lib/systemd/system/streakd-refill.timer",
        "usr/local/lib/systemd/system/streakd-tick.service",
        "usr/local/lib/systemd/system/streakd-tick.timer",
        "usr/local/lib/systemd/system/streakd.service",
        "usr/local/lib/systemd/system/streakd.socket",
        "usr/local/share/bash-completion/completions/streakd",
        "usr/local/share/doc/streakd/network.conf",
        "usr/local/share/doc/streakd/postgres.conf",
        "usr/local/share/doc/streakd/streakd.rules.yml",
        "usr/local/share/doc/streakd/streakd.toml.example",
        "usr/local/share/fish/vendor_completions.d/streakd.fish",
        "usr/local/share/icons/hicolor/scalable/apps/streakd.svg",
        "usr/local/share/man/man1/streakd.1",
        "usr/local/share/man/man5/streakd.toml.5",
        "usr/local/share/zsh/site-functions/_streakd",
        "var/lib/systemd/catalog/database",
    ]

    @Test func installAndUninstallIntoAStagingRoot() throws {
        try #require(madeArtifacts.code == 0, "\(madeArtifacts)")
        let root = try ScratchDir()
        let install = make(["install"], ["DESTDIR": root.path])
        try #require(install.code == 0, "make install: \(install)")
        #expect(files(under: root.path) == Self.systemFiles)
        let installed = root.sub("usr/local/bin/streakd")
        #expect(FileManager.default.contents(atPath: installed) == FileManager.default.contents(atPath: builtStreakd))
        #expect(FileManager.default.isExecutableFile(atPath: installed))
        let unit = try read(root.sub("usr/local/lib/systemd/system/streakd-tick.service"))
        #expect(values("ExecStart", in: unit) == ["/usr/local/bin/streakd tick"])
        // Installing again over it is fine (no "file exists").
        #expect(make(["install"], ["DESTDIR": root.path]).code == 0)

        let uninstall = make(["uninstall"], ["DESTDIR": root.path])
        #expect(uninstall.code == 0, "make uninstall: \(uninstall)")
        #expect(files(under: root.path) == ["var/lib/systemd/catalog/database"])
    }

    @Test func prefixUsrInstallsWhereTheDistributionsUnitsAre() throws {
        try #require(madeArtifacts.code == 0, "\(madeArtifacts)")
        let root = try ScratchDir()
        let install = make(["install"], ["DESTDIR": root.path, "PREFIX": "/usr"])
        try #require(install.code == 0, "make install PREFIX=/usr: \(install)")
        let unit = try read(root.sub("usr/lib/systemd/system/streakd-refill.service"))
        #expect(values("ExecStart", in: unit) == ["/usr/bin/streakd refill"])
        #expect(FileManager.default.fileExists(atPath: root.sub("usr/lib/systemd/catalog/streakd.catalog")))
        #expect(FileManager.default.fileExists(atPath: root.sub("usr/share/man/man1/streakd.1")))
    }

    @Test func installUserAndUninstallUserInAScratchHome() throws {
        try #require(madeArtifacts.code == 0, "\(madeArtifacts)")
        let scratch = try ScratchDir()
        let home = scratch.sub("home")
        let install = make(["install-user"], env: ["HOME": home])
        try #require(install.code == 0, "make install-user: \(install)")
        #expect(
            files(under: home) == [
                ".config/systemd/user/streakd-check.service",
                ".config/systemd/user/streakd-check.timer",
                ".config/systemd/user/streakd-refill.service",
                ".config/systemd/user/streakd-refill.timer",
                ".config/systemd/user/streakd-tick.service",
                ".config/systemd/user/streakd-tick.timer",
                ".config/systemd/user/streakd.service",
                ".config/systemd/user/streakd.socket",
                ".local/bin/streakd",
                ".local/share/bash-completion/completions/streakd",
                ".local/share/doc/streakd/network.conf",
                ".local/share/doc/streakd/postgres.conf",
                ".local/share/doc/streakd/streakd.rules.yml",
                ".local/share/doc/streakd/streakd.toml.example",
                ".local/share/fish/vendor_completions.d/streakd.fish",
                ".local/share/icons/hicolor/scalable/apps/streakd.svg",
                ".local/share/man/man1/streakd.1",
                ".local/share/man/man5/streakd.toml.5",
                ".local/share/zsh/site-functions/_streakd",
            ])
        let unit = try read(home + "/.config/systemd/user/streakd-tick.service")
        #expect(values("ExecStart", in: unit) == ["\(home)/.local/bin/streakd tick"])
        #expect(values("BindReadOnlyPaths", in: unit).contains("\(home)/.local/bin/streakd"))
        let uninstall = make(["uninstall-user"], env: ["HOME": home])
        #expect(uninstall.code == 0, "make uninstall-user: \(uninstall)")
        #expect(files(under: home) == [])
    }

    /// Every MESSAGE_ID streakd writes has a catalog entry, and every @FIELD@ an entry names is
    /// a field that streakd's entries of that id carry.
    @Test func theCatalogHasAnEntryPerMessageIDWithFieldsStreakdWrites() throws {
        let root = try ScratchDir()
        let install = make(["install-catalog"], ["DESTDIR": root.path])
        try #require(install.code == 0, "make install-catalog: \(install)")
        let listed = run(["/usr/bin/journalctl", "--root=\(root.path)", "--list-catalog", "--no-pager"])
        let ids = Set(listed.out.split(separator: "\n").map { String($0.prefix(32)) })
        let sample = Self.notification(.atRisk, user: "u1")
        var expected: [String: [String]] = [:]
        for kind in NotificationKind.allCases {
            expected[kind.messageID] = JournalSink.entry(for: Self.notification(kind, user: "u1"))
        }
        expected[JournalSink.deadMessageID] = JournalSink.deadEntry(
            for: sample, sink: "hook:x", attempts: 5, error: "e", store: "s")
        expected[JournalSink.failedMessageID] = JournalSink.failedEntry(
            for: sample, sink: "hook:x", attempts: 1, error: "e", retry: sample.due + 60, store: "s")
        expected[JournalSink.summaryMessageIDs["tick"]!] = JournalSink.summaryEntry(
            job: "tick", counts: [:], extra: [("held", 0)], durationMS: 1, store: "s")
        expected[JournalSink.summaryMessageIDs["refill"]!] = JournalSink.summaryEntry(
            job: "refill", counts: [:], extra: [("refilled", 0), ("at_maximum", 0), ("not_due", 0), ("held", 0)],
            durationMS: 1, store: "s")
        #expect(ids == Set(expected.keys), "journalctl --list-catalog: \(listed)")

        for (id, entry) in expected {
            let text = run(["/usr/bin/journalctl", "--root=\(root.path)", "--dump-catalog", id, "--no-pager"]).out
            #expect(text.contains("Subject: "), "\(id): \(text)")
            let written = Set(entry.map { String($0.prefix { $0 != "=" }) })
            for field in Self.fieldNames(in: text) {
                #expect(
                    written.contains(field), "the catalog entry \(id) names @\(field)@, which streakd does not write")
            }
        }
    }

    /// journalctl -x explains real entries: one per MESSAGE_ID, sent through the journal sink,
    /// shown with the catalog staged by `make install-catalog`, every @FIELD@ filled in.
    @Test(.requires(.root, .unshare))
    func journalctlXExplainsEachEntry() throws {
        try Journal.ensureRunning()
        let root = try ScratchDir()
        try #require(make(["install-catalog"], ["DESTDIR": root.path]).code == 0)
        let user = "catalog-\(UUID().uuidString.prefix(8).lowercased())"
        let sink = JournalSink(store: "0123456789abcdef0123456789abcdef")
        for kind in NotificationKind.allCases {
            #expect(sink.deliver(Self.notification(kind, user: user)) == .delivered)
        }
        #expect(
            sink.recordDead(Self.notification(.atRisk, user: user), sink: "hook:chat", attempts: 5, error: "exit 1")
                == .delivered)
        #expect(
            sink.recordFailed(
                Self.notification(.atRisk, user: user), sink: "hook:chat", attempts: 2, error: "exit 22: 503",
                retry: RFC3339.parse("2026-11-21T19:06:00Z")!) == .delivered)
        _ = Journal.read(["-o", "cat", "STREAKD_USER=\(user)"]) { $0.split(separator: "\n").count >= 8 }
        let shown = try #require(journalctlWithCatalog(root.path, ["-x", "-o", "short", "STREAKD_USER=\(user)"]))
        #expect(shown.code == 0, "\(shown)")
        for subject in [
            "Subject: \(user)'s 7-day streak is at risk",
            "Subject: A freeze kept \(user)'s 7-day streak alive",
            "Subject: \(user)'s 7-day streak broke",
            "Subject: A streak freeze was refilled for \(user)",
            "Subject: \(user) unlocked the badge streak_7", "Subject: \(user) reached level 3",
            "Subject: Delivery to hook:chat given up after 5 attempts",
            "Subject: Delivery to hook:chat failed (attempt 2); tried again from 2026-11-21T19:06:00Z",
        ] {
            #expect(shown.out.contains(subject), "journalctl -x lacks \"\(subject)\":\n\(shown.out)")
        }
        #expect(!shown.out.contains("STREAKD_"), "an unfilled field in:\n\(shown.out)")
        #expect(shown.out.contains("exit 1"))
    }

    /// The man pages, as installed: rendered by man and groff without a warning, within 80
    /// columns, with the sections people look for; the example in streakd.toml(5) is a valid
    /// configuration; every command and option of the program is in streakd(1).
    @Test(arguments: [("man1/streakd.1", "STREAKD(1)"), ("man5/streakd.toml.5", "STREAKD.TOML(5)")])
    func theManPagesRenderCleanly(page: String, title: String) throws {
        try #require(madeArtifacts.code == 0, "\(madeArtifacts)")
        let scratch = try ScratchDir()
        let home = scratch.sub("home")
        try #require(make(["install-user"], env: ["HOME": home]).code == 0)
        let path = home + "/.local/share/man/" + page
        let source = try read(path)
        #expect(!source.contains("@VERSION@") && !source.contains("@DATE@"))
        let man = try tool("man", package: "man-db")
        let env = ["PATH": searchPath, "MANWIDTH": "80", "LANG": "C.UTF-8", "HOME": home]
        let shown = run([man, "--warnings", "-l", path], env: env)
        #expect(shown.code == 0 && shown.err.isEmpty, "man --warnings -l \(page): \(shown.err)")
        let groff = run([try tool("groff", package: "groff-base"), "-ww", "-z", "-man", path], env: env)
        #expect(groff.code == 0 && groff.err.isEmpty, "groff -ww -z: \(groff.err)")
        let lines = shown.out.split(separator: "\n", omittingEmptySubsequences: false)
        #expect(lines.first?.hasPrefix(title) == true, "\(lines.first ?? "")")
        for line in lines where line.count > 80 {
            Issue.record("wider than 80 columns: \(line)")
        }
        #expect(shown.out.contains("streakd \(madeVersion)"))
        let sections =
            page.hasPrefix("man1")
            ? [
                "NAME", "SYNOPSIS", "DESCRIPTION", "COMMANDS", "OPTIONS", "LOG", "FILES", "ENVIRONMENT", "EXIT STATUS",
                "EXAMPLES", "SEE ALSO",
            ]
            : ["NAME", "SYNOPSIS", "DESCRIPTION", "SETTINGS", "MESSAGES", "EXAMPLES", "SEE ALSO"]
        let headings = lines.filter { !$0.isEmpty && !$0.hasPrefix(" ") }.map(String.init)
        #expect(Array(headings.dropFirst().dropLast()) == sections)

        if page.hasPrefix("man5") {
            // The example, as printed, is a configuration streakd takes (its hook made runnable).
            let example = lines.drop { $0 != "EXAMPLES" }.dropFirst().prefix { $0 != "SEE ALSO" }
                .map { $0.hasPrefix("       ") ? String($0.dropFirst(7)) : String($0) }
                .joined(separator: "\n").replacingOccurrences(of: "/usr/local/bin/post-to-chat", with: "/bin/true")
            let file = try scratch.write("example.toml", example)
            let check = run([builtStreakd, "config", "check", "--config", file], env: env)
            #expect(check.code == 0, "the man page's example: \(check)")
            #expect(check.out.contains(#"default_language = "fr""#))
        } else {
            // Every command, and every option of every command, is in the page.
            let help = run([builtStreakd, "--experimental-dump-help"], env: env)
            let names = Set(help.out.matches(of: #/"(?:commandName|name)" *: *"([a-z-]+)"/#).map { String($0.1) })
            for name in names.subtracting(["help", "generate-completion-script", "experimental-dump-help"])
            where name.count > 1 {
                let option = "--" + name
                #expect(
                    shown.out.contains(option) || shown.out.contains(" " + name),
                    "streakd(1) does not mention \(name)")
            }
        }
    }

    @Test func theCompletionsAndTheIcon() throws {
        try #require(madeArtifacts.code == 0, "\(madeArtifacts)")
        let scratch = try ScratchDir()
        let home = scratch.sub("home")
        try #require(make(["install-user"], env: ["HOME": home]).code == 0)
        let share = home + "/.local/share"
        let bash = run(
            [
                "/bin/bash", "--norc", "-c", "source \"$1\" && complete -p streakd", "bash",
                share + "/bash-completion/completions/streakd",
            ])
        #expect(bash.code == 0 && bash.out == "complete -o filenames -F _streakd streakd\n", "bash completion: \(bash)")
        #expect(try read(share + "/zsh/site-functions/_streakd").hasPrefix("#compdef streakd"))
        #expect(try read(share + "/fish/vendor_completions.d/streakd.fish").contains("complete -c 'streakd'"))
        #expect(try read(share + "/icons/hicolor/scalable/apps/streakd.svg").contains("<svg"))
    }

    /// `make version` says what a build by the Makefile bakes into `streakd --version`: the
    /// version and `git describe`.
    @Test func theMakefileNamesTheCommit() throws {
        let describe = run(["/usr/bin/git", "-C", packageRoot, "describe", "--always", "--dirty", "--tags"])
        let version = make(["-s", "version"])
        #expect(version.code == 0, "\(version)")
        if describe.code == 0 {
            #expect(version.out == "streakd \(madeVersion) (git \(describe.out.trimmingCharacters(in: .newlines)))\n")
        } else {
            #expect(version.out == "streakd \(madeVersion) (commit unknown: built without make)\n")
        }
        let built = run([builtStreakd, "--version"])
        #expect(built.out.hasPrefix("streakd \(madeVersion) ("))
    }

    /// deploy/streakd.toml.example: as shipped, and with every `#key = value` line uncommented,
    /// it is the defaults; its `# e.g.` examples are valid settings; it names every setting.
    @Test func theExampleConfigurationShowsTheDefaults() throws {
        let scratch = try ScratchDir()
        let env = ["PATH": searchPath, "LANG": "C.UTF-8", "HOME": scratch.path, "XDG_CONFIG_HOME": scratch.sub("none")]
        let example = try read("\(packageRoot)/deploy/streakd.toml.example")
        func check(_ text: String) throws -> String {
            let file = try scratch.write("streakd-\(UUID().uuidString.prefix(6)).toml", text)
            let result = run([builtStreakd, "config", "check", "--config", file], env: env)
            #expect(result.code == 0, "config check on:\n\(text)\n\(result)")
            return result.out.split(separator: "\n").dropFirst().joined(separator: "\n")
        }
        let defaults = run([builtStreakd, "config", "check"], env: env)
        try #require(defaults.code == 0, "\(defaults)")
        let defaultText = defaults.out.split(separator: "\n").dropFirst().joined(separator: "\n")

        #expect(try check(example) == defaultText)
        let lines = example.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        let settingLine = #/^#([a-z_]+ = .+)$/#
        let uncommented = lines.map { line in (try? settingLine.wholeMatch(in: line)).map { String($0.1) } ?? line }
        #expect(uncommented != lines)
        #expect(try check(uncommented.joined(separator: "\n")) == defaultText)

        // The examples: "# e.g. key = value" lines, and the "# [table]" blocks after "# e.g.".
        var examples: [String] = []
        var inBlock = false
        for line in lines {
            if line == "# e.g." {
                inBlock = true
                continue
            }
            if line.hasPrefix("# e.g. ") {
                examples.append(String(line.dropFirst("# e.g. ".count)))
            } else if inBlock, line.hasPrefix("# ") {
                examples.append(String(line.dropFirst(2)))
            } else {
                inBlock = false
                examples.append(line.hasPrefix("#") || line.hasPrefix("[") ? line : "")
            }
        }
        // (Its hook's program made one that exists: config check says when a hook's cannot run.)
        let withExamples = try check(
            examples.joined(separator: "\n").replacingOccurrences(of: "/usr/local/bin/post-to-chat", with: "/bin/true"))
        for expected in [
            #"max_late = "1h""#, #"users = ["me"]"#, "[[hooks]]", "[streaks.workout]", "goal = 2",
            #"id = "early_bird""#, "[messages.fr]", #"at_risk_title = "Série en danger""#,
        ] {
            #expect(withExamples.contains(expected), "the examples do not set \(expected):\n\(withExamples)")
        }
        for key in [
            "backfill_days", "initial", "max", "min_streak", "auto_use", "days", "max_late", "users", "burst",
            "interval_seconds", "name", "command", "timeout_seconds", "kinds", "goal", "leeway_hours", "per_day",
            "thresholds", "id", "title", "description", "category", "requirement", "value", "streak", "meta", "xp",
            "default_language", "trust_socket", "idle_timeout_seconds", "request_timeout_seconds", "max_connections",
            "lease_seconds", "max_days", "days_per_year", "window_hours", "per_30_days", "textfile", "url", "format",
            "secret_file", "rest_days",
        ] {
            #expect(example.contains("\(key) = "), "deploy/streakd.toml.example does not show \(key)")
        }
    }

    /// A notification of `kind`: an achievement names its badge (`streak_7`) or level (3).
    static func notification(_ kind: NotificationKind, user: String) -> StreakDelivery.Notification {
        Notification(
            kind: kind, user: user, streak: kind.isAchievement ? "" : "daily", localDate: LocalDate("2026-11-21")!,
            due: RFC3339.parse("2026-11-21T19:00:00Z")!, timezone: "Europe/Berlin",
            localDue: "2026-11-21T20:00:00+01:00", streakLength: 7,
            message: "Your 7-day streak is at risk! Check in today to keep it going.",
            badge: kind == .badgeUnlocked ? "streak_7" : nil, level: kind == .levelUp ? 3 : nil)
    }

    /// The `@NAME@` fields a catalog entry's text names.
    static func fieldNames(in text: String) -> Set<String> {
        Set(text.matches(of: #/@([A-Z0-9_]+)@/#).map { String($0.1) })
    }
}
