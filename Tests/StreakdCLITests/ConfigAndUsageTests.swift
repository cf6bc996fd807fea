import Foundation
import StreakTestKit
import Testing

@Suite("config check and usage errors", .fastTier)
struct ConfigAndUsageTests {
    @Test func defaultsWhenTheDefaultFileIsMissing() throws {
        let s = try Sandbox()
        let r = s.run(["config", "check"])
        #expect(r.code == 0)
        #expect(r.err == "")
        #expect(r.out == Self.defaults)
        let json = s.run(["config", "check", "-o", "json"])
        #expect(json.code == 0)
        #expect(
            json.out
                == #"{"source":null,"import":{"backfill_days":90},"freeze":{"initial":1,"max":1,"min_streak":3,"auto_use":true},"reminders":{"days":[5,7,14],"max_late":null,"usual_earliest":"08:00","usual_latest":"21:00"},"desktop":{"users":[]},"hooks":[],"webhooks":[],"journal":{"burst":9500,"interval_seconds":30},"runs":{"lease_seconds":300},"api":{"trust_socket":false,"idle_timeout_seconds":30,"request_timeout_seconds":60,"max_connections":16384},"pause":{"max_days":30,"days_per_year":60},"repair":{"window_hours":48,"per_30_days":1},"streaks":{}"#
                + Self.achievementDefaultsJSON + Self.messagesDefaultsJSON + "}\n")
    }

    @Test func aValidFileIsPrinted() throws {
        let s = try Sandbox()
        let path = try s.file(
            "config/streakd/streakd.toml",
            "[streaks.workout]\ngoal = 2\nleeway_hours = 3\n[freeze]\nmax = 2\n[reminders]\nmax_late = \"1h\"\n")
        let r = s.run(["config", "check"])
        #expect(r.code == 0)
        #expect(
            r.out
                == Self.effective(
                    from: path, freezeMax: 2, maxLate: "1h",
                    streaks: """
                        [streaks.workout]
                        goal = 2
                        leeway_hours = 3
                        rest_days = []

                        [streaks.workout.freeze]
                        initial = 1
                        max = 2
                        min_streak = 3
                        auto_use = true


                        """))
        // An explicit --config wins over the default path.
        let other = try s.file("other.toml", "[import]\nbackfill_days = 30\n")
        let o = s.run(["config", "check", "--config", other, "-o", "json"])
        #expect(try jsonObject(o.out)["source"] as? String == other)
    }

    @Test(arguments: [
        (
            "w.toml", "[streaks.workout]\ngoal = 0\n",
            "w.toml:2: streaks.workout.goal: 0 is out of range; use a whole number from 1 to 100"
        ),
        (
            "u.toml", "[import]\nbackfill_days = 30\ncolour = 1\n",
            "u.toml:3: import.colour: unknown setting; valid in [import]: backfill_days"
        ),
        (
            "y.toml", "bogus = 1\n",
            "y.toml:1: bogus: unknown setting; valid in the top level: import, freeze, reminders, desktop, hooks, webhooks, journal, runs, api, streaks, messages, metrics, pause, repair, xp, levels, badges"
        ),
        (
            "x.toml", "[freeze]\nmax = 3\n\n[reminders\ndays = [1]\n",
            "x.toml:4: Error while parsing table header: expected ']', saw '\\n'"
        ),
        (
            "l.toml", "[streaks.daily]\nleeway_hours = 25\n",
            "l.toml:2: streaks.daily.leeway_hours: 25 is out of range; use a whole number from 0 to 24"
        ),
        (
            "i.toml", "[freeze]\nmax = 1\ninitial = 2\n",
            "i.toml:3: freeze.initial: 2 is more than max (1); use a number from 0 to 1"
        ),
        (
            "b.toml",
            "[[badges]]\nid = \"a\"\ntitle = \"A\"\ncategory = \"c\"\nrequirement = \"total_checkins\"\nvalue = 1\n"
                + "\n[[badges]]\nid = \"a\"\ntitle = \"B\"\ncategory = \"c\"\nrequirement = \"streak_days\"\nvalue = 2\n",
            "b.toml:9: badges[2].id: \"a\" names two badges; give each badge its own id"
        ),
        (
            "k.toml",
            "[[badges]]\nid = \"a\"\nkind = \"social\"\ntitle = \"A\"\ncategory = \"c\"\nrequirement = \"streak_days\"\nvalue = 3\n",
            "k.toml:3: badges[1].kind: unknown setting; valid in [[badges]]: id, title, description, category, requirement, value, streak, meta, xp"
        ),
        (
            "m.toml",
            "[[badges]]\nid = \"a\"\ntitle = \"A\"\ncategory = \"c\"\nrequirement = \"tagged_checkins\"\nvalue = 1\n"
                + "meta = {kind = 1.5}\n",
            "m.toml:7: badges[1].meta: kind: must be a string, true/false or a whole number"
        ),
        (
            "t.toml", "[levels]\nthresholds = [500, 1500]\n",
            "t.toml:2: levels.thresholds: must be a list of 4 whole numbers from 1 to 1000000000, each larger than the one before, such as [500, 1500, 4000, 10000]: the XP at which levels 2, 3, 4 and 5 begin"
        ),
        // Issue 17: the parser took a NUL byte for the end of the text, and dropped what followed.
        (
            "n.toml", "[import]\nbackfill_days = 5\u{0}\n[freeze]\nmax = 200\n",
            #"n.toml:2: a NUL byte (U+0000) at column 18; TOML allows no control characters but tab and line breaks; remove it"#
        ),
        // Issue 31, item 13: a \u0000 escape cut a hook's argument (and a template) at the NUL.
        (
            "z.toml",
            "# \\u0000 in a comment is text\n[[hooks]]\nname = 'x'\ncommand = ['/bin/echo', '\\u0000', \"a\\u0000b\"]\n",
            #"z.toml:4: a NUL character (\u0000) at column 37; it would end a program's argument or a message where it stands; remove it"#
        ),
        (
            "y.toml", "[messages.en]\nat_risk = \"\"\"\nkeep {length}\\U00000000\"\"\"\n",
            #"y.toml:3: a NUL character (\u0000) at column 14; it would end a program's argument or a message where it stands; remove it"#
        ),
        // Issue 31, item 13: a 200 KB template passed, then every hook failed with E2BIG.
        (
            "l.toml", "[messages.en]\nat_risk = \"" + String(repeating: "x", count: 200_000) + "\"\n",
            "l.toml:2: messages.en.at_risk: is 200000 bytes; a template may be at most 4096 bytes (hooks get the message in their environment)"
        ),
        (
            "c.toml", "[freeze]\r\nmax = 2\r\n# \u{1b}[31m\r\n",
            #"c.toml:3: a control character (U+001B) at column 3; TOML allows no control characters but tab and line breaks (in a quoted string write it as \u001b)"#
        ),
        // Found by ParserFuzzTests: toml++ asserted these away, aborting streakd (exit 134).
        (
            "h.toml", "[freeze]\nmax = 1\n[[[hooks]]]\n",
            "h.toml:3: a table header's name starts with a letter, digit, '_' or '-', or is in quotes, as in [freeze] or [[hooks]]; found a third '['"
        ),
        (
            "e.toml", "[freeze]\nmax = 1\n[ \n",
            "e.toml:3: a table header's name starts with a letter, digit, '_' or '-', or is in quotes, as in [freeze] or [[hooks]]; found the end of the line"
        ),
        (
            "a.toml", "[reminders]\ndays = [5,\n}]\n",
            "a.toml:3: a '}' inside an array, where a value, ',' or ']' should be"
        ),
        (
            "s.toml", "[reminders]\ndays = [\u{2028}]\n",
            "s.toml:2: a Unicode line separator (U+2028) outside quotes; TOML's line breaks are LF and CR LF"
        ),
        (
            "r.toml", "[freeze]\rmax = 2\n",
            "r.toml:1: a carriage return (U+000D) not followed by a line break at column 9; TOML allows no control characters but tab and line breaks"
        ),
    ])
    func badConfigurationIsExit78(_ name: String, _ text: String, _ message: String) throws {
        let s = try Sandbox()
        let path = try s.file(name, text)
        let r = s.run(["config", "check", "--config", path])
        #expect(r.code == 78)
        #expect(r.out == "")
        #expect(r.err == error(s.dir.path + "/" + message))
        // Every command refuses to run with it, from the default path as well.
        try s.file("config/streakd/streakd.toml", text)
        let status = s.run(["user", "list"])
        #expect(status.code == 78)
        #expect(status.err.hasPrefix("streakd: error: \(s.dir.path)/config/streakd/streakd.toml:"))
    }

    /// A `[[badges]]` list replaces the twelve defaults; `[xp]` and `[levels]` are printed as read.
    @Test func configuredBadgesAreTheOnlyOnes() throws {
        let s = try Sandbox()
        let path = try s.file(
            "badges.toml",
            """
            [xp]
            per_day = 20
            [levels]
            thresholds = [100, 1000, 2000, 5000]
            [[badges]]
            id = "gym_rat"
            title = "Gym Rat"
            category = "workout"
            requirement = "tagged_checkins"
            streak = "workout"
            meta = {place = "gym", heavy = true}
            value = 10
            xp = 75

            """)
        let r = s.run(["config", "check", "--config", path])
        #expect(r.code == 0 && r.err == "")
        #expect(
            r.out.hasSuffix(
                """
                interval_seconds = 30

                [runs]
                lease_seconds = 300

                [api]
                trust_socket = false
                idle_timeout_seconds = 30
                request_timeout_seconds = 60
                max_connections = 16384

                [pause]
                max_days = 30
                days_per_year = 60

                [repair]
                window_hours = 48
                per_30_days = 1

                [xp]
                per_day = 20

                [levels]
                thresholds = [100, 1000, 2000, 5000]

                [[badges]]
                id = "gym_rat"
                title = "Gym Rat"
                description = ""
                category = "workout"
                requirement = "tagged_checkins"
                meta = {heavy = true, place = "gym"}
                streak = "workout"
                value = 10
                xp = 75

                \(Self.messagesDefaults)

                """))
        let json = s.run(["config", "check", "--config", path, "-o", "json"])
        #expect(
            json.out.hasSuffix(
                #""streaks":{},"xp":{"per_day":20},"levels":{"thresholds":[100,1000,2000,5000]},"badges":[{"id":"gym_rat","title":"Gym Rat","description":"","category":"workout","requirement":"tagged_checkins","meta":{"heavy":true,"place":"gym"},"streak":"workout","value":10,"xp":75}]"#
                    + Self.messagesDefaultsJSON + "}\n"))
        // No badges at all.
        let none = try s.file("none.toml", "badges = []\n")
        let n = s.run(["config", "check", "--config", none])
        #expect(n.code == 0 && n.out.hasPrefix("# effective configuration from \(none)\nbadges = []\n[import]\n"))
        #expect(!n.out.contains("[[badges]]"))
    }

    /// Issue 17: `--config /dev/null` was an error ("cannot read"); like an empty file it is
    /// an empty configuration, the defaults.
    @Test func devNullAndAnEmptyFileAreTheDefaults() throws {
        let s = try Sandbox()
        let empty = try s.file("empty.toml", "")
        for path in ["/dev/null", empty] {
            let r = s.run(["config", "check", "--config", path])
            #expect(r.code == 0)
            #expect(r.err == "")
            #expect(r.out == Self.effective(from: path))
        }
        #expect(s.run(["user", "add", "u1", "--tz", "UTC", "--config", "/dev/null"]).code == 0)
        let folder = s.run(["config", "check", "--config", s.dir.path])
        #expect(folder.code == 78)
        #expect(folder.err == error("\(s.dir.path): a folder, not a configuration file"))
    }

    @Test func textThatIsNotUTF8NamesItsLine() throws {
        let s = try Sandbox()
        let path = try s.file("b.toml", bytes: Array("[freeze]\nmax = 1\n# ok: é\n# x\u{FF}".utf8) + [0xFF, 0x0A])
        let r = s.run(["config", "check", "--config", path])
        #expect(r.code == 78)
        #expect(r.err == error("\(path):4: the configuration is not valid UTF-8 text (column 5)"))
    }

    @Test func missingExplicitConfigIsExit66() throws {
        let s = try Sandbox()
        let path = s.dir.path + "/missing.toml"
        let r = s.run(["config", "check", "--config", path])
        #expect(r.code == 66)
        #expect(r.out == "")
        #expect(r.err == error("\(path): no such configuration file"))
    }

    @Test func badNowIsUsage() throws {
        let s = try Sandbox()
        s.addUser()
        let r = s.run(["status", "u1", "--now", "garbage"])
        #expect(r.code == 64)
        #expect(r.out == "")
        #expect(
            r.err
                == error(#"--now: "garbage" is not an RFC 3339 instant with an offset; use e.g. 2026-11-21T19:00:00Z"#))
        let env = s.run(["status", "u1"], env: ["STREAKD_NOW": "garbage"])
        #expect(env.code == 64)
        #expect(
            env.err
                == error(
                    #"STREAKD_NOW: "garbage" is not an RFC 3339 instant with an offset; use e.g. 2026-11-21T19:00:00Z"#)
        )
        let noOffset = s.run(["status", "u1", "--now", "2026-11-21T11:00:00"])
        #expect(noOffset.code == 64)
        // --now wins over STREAKD_NOW.
        let both = s.run(
            ["status", "u1", "--now", "2026-11-22T11:00:00Z", "-o", "json"], env: ["STREAKD_NOW": "garbage"])
        #expect(both.code == 0)
        #expect(try jsonObject(both.out)["today"] as? String == "2026-11-22")
    }

    @Test func unknownSubcommandIsUsage() throws {
        let s = try Sandbox()
        let r = s.runBare(["frobnicate"])
        #expect(r.code == 64)
        #expect(r.out == "")
        #expect(r.err.contains("frobnicate"), "\(r)")
        let sub = s.run(["user", "frobnicate"])
        #expect(sub.code == 64)
        let option = s.run(["status", "u1", "--bogus"])
        #expect(option.code == 64)
        #expect(option.err.hasPrefix("streakd: error: Unknown option '--bogus'"), "\(option)")
        let format = s.run(["user", "list", "-o", "xml"])
        #expect(format.code == 64)
        // A command group without its subcommand is incomplete: 64, its help on stderr (it was 0,
        // so `streakd store` in a cron job "succeeded" without checking anything).
        for group in [[], ["store"], ["deliveries"], ["config"], ["token"], ["user"], ["freeze"]] {
            let r = s.runBare(group)
            #expect(r.code == 64 && r.out.isEmpty && r.err.hasPrefix("OVERVIEW: "), "\(group): \(r)")
        }
        #expect(s.runBare(["store", "--help"]).code == 0)
    }

    @Test func defaultStoreFollowsXDGStateHome() throws {
        let s = try Sandbox()
        let r = s.runBare(["user", "add", "u1", "--tz", "UTC"])
        #expect(r.code == 0)
        #expect(FileManager.default.fileExists(atPath: s.dir.path + "/state/streakd/streakd.sqlite"))
        #expect(!FileManager.default.fileExists(atPath: s.store))
    }
}
