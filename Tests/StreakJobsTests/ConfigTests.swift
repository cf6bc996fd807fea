import StreakCore
import StreakDelivery
import StreakSQLite
import StreakStore
import StreakTestKit
import Testing

@testable import StreakJobs

@Suite(.fastTier) struct ConfigTests {
    @Test func emptyFileMeansDefaults() throws {
        #expect(try ConfigLoader.parse("", file: "c.toml") == Config())
    }

    @Test func readsEverySection() throws {
        let c = try ConfigLoader.parse(
            """
            [import]
            backfill_days = 30
            [freeze]
            max = 2
            initial = 2
            min_streak = 5
            auto_use = false
            [reminders]
            days = [3, 7]
            max_late = "1h"
            usual_earliest = "07:30"
            [streaks.workout]
            goal = 2
            leeway_hours = 3
            [streaks.workout.freeze]
            max = 3
            """, file: "c.toml")
        #expect(c.backfillDays == 30)
        #expect(c.freeze.max == 2 && c.freeze.initial == 2 && c.freeze.minStreak == 5 && !c.freeze.autoUse)
        #expect(c.reminderDays == [3, 7] && c.maxLate == 3600)
        #expect(c.usualEarliest == 7 * 3600 + 1800 && c.usualLatest == 21 * 3600)
        let w = c.settings(for: "workout")
        #expect(w.goal == 2 && w.leewayHours == 3 && w.freeze.max == 3 && w.freeze.minStreak == 5)
        #expect(c.settings(for: "daily").goal == 1 && c.settings(for: "daily").freeze.max == 2)
    }

    @Test(arguments: [
        (
            "[streaks.workout]\ngoal = 0",
            "c.toml:2: streaks.workout.goal: 0 is out of range; use a whole number from 1 to 100"
        ),
        ("[freeze]\n\nmax = \"one\"", "c.toml:3: freeze.max: must be a whole number from 0 to 100"),
        (
            "[reminders]\ndays = [5, -1]",
            "c.toml:2: reminders.days: must be a list of whole numbers from 1 to 100000, such as [5, 7, 14]"
        ),
        (
            "[reminders]\nusual_earliest = \"08:10\"",
            "c.toml:2: reminders.usual_earliest: \"08:10\" is not a time of day on the quarter hour; use HH:MM with minutes 00, 15, 30 or 45, such as \"08:00\""
        ),
        (
            "[reminders]\ndays = [5]\nusual_latest = \"25:00\"",
            "c.toml:3: reminders.usual_latest: \"25:00\" is not a time of day on the quarter hour; use HH:MM with minutes 00, 15, 30 or 45, such as \"21:00\""
        ),
        (
            "[reminders]\nusual_earliest = \"18:00\"\nusual_latest = \"07:00\"",
            "c.toml:3: reminders.usual_latest: usual_earliest (18:00) is after usual_latest (07:00); the earliest must not be after the latest"
        ),
        ("[reminders]\nusual_latest = 21", "c.toml:2: reminders.usual_latest: must be a string in quotes"),
        (
            "[reminders]\nmax_late = \"soon\"",
            "c.toml:2: reminders.max_late: \"soon\" is not a duration; use a whole number and a unit m, h, d or w, such as 90m, 24h or 2d"
        ),
        ("[freeze]\ninitial = 2", "c.toml:2: freeze.initial: 2 is more than max (1); use a number from 0 to 1"),
        (
            "[remind]\ndays = [1]",
            "c.toml:1: remind: unknown setting; valid in the top level: import, freeze, reminders, desktop, hooks, webhooks, journal, runs, api, streaks, messages, metrics, pause, repair, xp, levels, badges"
        ),
        (
            "[import]\nbackfil_days = 3",
            "c.toml:2: import.backfil_days: unknown setting; valid in [import]: backfill_days"
        ),
        (
            "[streaks.Work-Out]\ngoal = 2",
            "c.toml:1: streaks: \"Work-Out\" is not a streak id; use 1 to 64 characters of a-z, 0-9 and '_'"
        ),
        ("[freeze]\nauto_use = 1", "c.toml:2: freeze.auto_use: must be true or false"),
        (
            "[[hooks]]\nname = \"a\"\ncommand = \"notify-send hi\"",
            "c.toml:3: hooks[1].command: must be a list of strings, the program and its arguments, such as [\"/usr/local/bin/notify\", \"--quiet\"]; streakd never runs a shell"
        ),
        (
            "[[hooks]]\nname = \"a\"\ncommand = [\"/bin/a\"]\n[[hooks]]\nname = \"a\"\ncommand = [\"/bin/b\"]",
            "c.toml:5: hooks[2].name: \"a\" names two hooks; give each hook its own name"
        ),
        (
            "[[hooks]]\nname = \"a\"\ncommand = [\"/bin/a\"]\nkinds = [\"reminder\"]",
            "c.toml:4: hooks[1].kinds: \"reminder\" is not a kind; must be a list of kinds from at_risk, freeze_used, streak_broken, freeze_refilled, badge_unlocked, level_up, streak_repaired"
        ),
        ("[[hooks]]\nname = \"a\"", "c.toml:1: hooks[1]: hook \"a\" needs a command = [\"program\", …]"),
        (
            "[[hooks]]\nname = \"a\"\ncommand = [\"notify-send hi\"]",
            "c.toml:3: hooks[1].command: \"notify-send hi\" is not a program; put the program alone first and each argument in its own string"
        ),
        (
            "[[hooks]]\nname = \"a\"\ncommand = [\"/bin/a\"]\ntimeout_seconds = 0",
            "c.toml:4: hooks[1].timeout_seconds: must be a whole number from 1 to 3600"
        ),
        (
            "[desktop]\nusers = [\"-x\"]",
            "c.toml:2: desktop.users: \"-x\" is not a user id; use 1 to 128 characters: a letter or digit, then letters, digits, '.', '_', '@' or '-'"
        ),
        ("[journal]\nburst = -1", "c.toml:2: journal.burst: -1 is out of range; use a whole number from 0 to 1000000"),
    ])
    func errorsNameFileLineAndKey(text: String, message: String) {
        #expect {
            _ = try ConfigLoader.parse(text, file: "c.toml")
        } throws: { error in
            let e = error as? StreakdError
            return e?.status == .config && e?.message == message
        }
    }

    @Test func readsTheDeliverySections() throws {
        let c = try ConfigLoader.parse(
            """
            [desktop]
            users = ["alice"]
            [journal]
            burst = 0
            [[hooks]]
            name = "team"
            command = ["/usr/bin/env", "notify", "--to", "$(not a shell)"]
            timeout_seconds = 3
            kinds = ["at_risk"]
            """, file: "c.toml")
        #expect(c.desktopUsers == ["alice"] && c.journalBurst == 0)
        #expect(c.hooks.map(\.argv) == [["/usr/bin/env", "notify", "--to", "$(not a shell)"]])
        #expect(c.hooks.first?.timeout == 3 && c.hooks.first?.kinds == [.atRisk])
    }

    @Test func syntaxErrorsNameTheLine() {
        #expect {
            _ = try ConfigLoader.parse("[import]\nbackfill_days = = 3\n", file: "c.toml")
        } throws: { error in
            (error as? StreakdError)?.message.hasPrefix("c.toml:2: ") == true
        }
    }

    @Test func missingDefaultFileMeansDefaultsButMissingNamedFileIsAnError() throws {
        #expect(try ConfigLoader.load(path: "/nonexistent/streakd.toml", explicit: false) == Config())
        #expect(throws: StreakdError.self) { try ConfigLoader.load(path: "/nonexistent/streakd.toml", explicit: true) }
    }

    @Test func defaultPathsFollowSystemdThenXDG() {
        let systemd = Paths(environment: [
            "STATE_DIRECTORY": "/var/lib/streakd:/other", "CONFIGURATION_DIRECTORY": "/etc/streakd",
        ])
        #expect(systemd.defaultStore == "/var/lib/streakd/streakd.sqlite")
        #expect(systemd.defaultConfig == "/etc/streakd/streakd.toml")
        let xdg = Paths(environment: ["XDG_STATE_HOME": "/h/st", "XDG_CONFIG_HOME": "/h/cf", "HOME": "/h"])
        #expect(xdg.defaultStore == "/h/st/streakd/streakd.sqlite")
        #expect(xdg.defaultConfig == "/h/cf/streakd/streakd.toml")
        let bare = Paths(environment: ["HOME": "/home/ann"], fileExists: { _ in false })
        #expect(bare.defaultStore == "/home/ann/.local/state/streakd/streakd.sqlite")
        #expect(bare.defaultConfig == "/etc/streakd/streakd.toml")
    }

    @Test func aPersonalConfigFileWithoutXDGConfigHomeIsFound() {
        let personal = "/home/ann/.config/streakd/streakd.toml"
        let found = Paths(environment: ["HOME": "/home/ann"], fileExists: { $0 == personal })
        #expect(found.defaultConfig == personal)
        let xdg = Paths(environment: ["HOME": "/home/ann", "XDG_CONFIG_HOME": "/h/cf"], fileExists: { _ in true })
        #expect(xdg.defaultConfig == "/h/cf/streakd/streakd.toml")
        let systemd = Paths(environment: ["HOME": "/home/ann", "CONFIGURATION_DIRECTORY": "/etc/streakd"]) { _ in true }
        #expect(systemd.defaultConfig == "/etc/streakd/streakd.toml")
    }
}
