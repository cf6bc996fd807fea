import Foundation
import StreakTestKit
import Testing

/// Everyday friction an operator met (issue 34): mistyped commands, each command's own -o values
/// in its help, `checkin --at` as `log --since` reads times, `--skip-invalid`'s count, badges in the
/// user's language, man pages with a version in a checkout.
@Suite(.fastTier) struct FrictionTests {
    /// A mistyped command names the nearest, as git does; a mistyped option, ArgumentParser's.
    @Test func aMistypedCommandSuggestsTheNearest() throws {
        let s = try Sandbox()
        let typo = s.run(["stauts", "u1"])
        #expect(typo.code == 64, "\(typo)")
        #expect(
            typo.err.hasPrefix("streakd: error: \"stauts\" is not a streakd command; see streakd --help"), "\(typo)")
        #expect(typo.err.contains("The most similar command is\n\tstatus\n"), "\(typo)")
        let nested = s.run(["user", "ad", "u1", "--tz", "UTC"])
        #expect(nested.code == 64 && nested.err.contains("The most similar command is\n\tuser add\n"), "\(nested)")
        let far = s.run(["frobnicate"])
        #expect(far.code == 64 && far.err.contains("commands: user, checkin"), "\(far)")
        #expect(s.run(["--now", fixedNow, "chekin", "u1"]).err.contains("\tcheckin"))
        let option = s.run(["status", "u1", "--steak", "daily"])
        #expect(option.code == 64 && option.err.contains("Did you mean '--streak'?"), "\(option)")
        // Nothing was created on the way.
        #expect(!FileManager.default.fileExists(atPath: s.store) || TestStore.postgres)
    }

    /// Each command's help lists its own -o values: log's five, the others' two.
    @Test func eachHelpListsItsOwnOutputFormats() throws {
        let status = streakd(["status", "--help"])
        #expect(status.code == 0 && status.out.contains("-o <short|json>"), "\(status.out)")
        #expect(!status.out.contains("cat") && !status.out.contains("json-pretty"), "\(status.out)")
        let log = streakd(["log", "--help"])
        #expect(log.code == 0 && log.out.contains("-o <short|json|json-pretty|cat|verbose>"), "\(log.out)")
    }

    /// `checkin --at` reads "yesterday 21:00" and "2 hours ago" as `log --since` does, local times
    /// in the check-in's zone.
    @Test func checkinAtTakesHumanTimes() throws {
        let s = try Sandbox()  // now: 2026-11-21T11:00:00Z, 12:00 in Berlin
        s.addUser("u1")
        let yesterday = s.run(["checkin", "u1", "--at", "yesterday 21:00", "--id", "y"])
        #expect(yesterday.code == 0, "\(yesterday)")
        var status = try s.statusObject()
        #expect(status["last_qualifying_date"] as? String == "2026-11-20" && status["today_count"] as? Int == 0)
        #expect(s.run(["checkin", "u1", "--at", "2 hours ago", "--id", "t"]).code == 0)
        // A value with a leading dash is the option's, as log --since takes it.
        let dash = s.run(["checkin", "u1", "--at", "-3h", "--id", "d", "-o", "json"])
        #expect(dash.code == 0 && dash.out.contains(#""today_count":2"#), "\(dash)")
        status = try s.statusObject()
        #expect(status["last_qualifying_date"] as? String == "2026-11-21" && status["current"] as? Int == 2)
        // The same words mean the instant of another zone with --tz: 21:00 in Tokyo on the 20th is
        // 12:00 UTC, the 20th in Tokyo too.
        #expect(s.run(["checkin", "u1", "--at", "2026-11-20 21:00", "--tz", "Asia/Tokyo", "--id", "k"]).code == 0)
        // A length of time is not a time; what is not a time says what is.
        let span = s.run(["checkin", "u1", "--at", "2h"])
        #expect(span.code == 64 && span.err.contains("\"2h ago\""), "\(span)")
        let bad = s.run(["checkin", "u1", "--at", "teatime"])
        #expect(bad.code == 64 && bad.err.contains("yesterday"), "\(bad)")
        // Outside the allowed instants is still the data's problem.
        #expect(s.run(["checkin", "u1", "--at", "tomorrow"]).code == 65)
    }

    /// `import --skip-invalid` listed the first 20 invalid records and said nothing of the rest.
    @Test func skipInvalidCountsWhatItDidNotList() throws {
        let s = try Sandbox()
        s.addUser("u1")
        let lines = [#"{"user":"u1","at":"2026-11-21T09:00:00Z"}"#] + (1...25).map { #"{"user":"u1","at":"x\#($0)"}"# }
        let file = try s.file("mixed.jsonl", lines.joined(separator: "\n") + "\n")
        let r = s.run(["import", file, "--skip-invalid"])
        #expect(r.code == 0, "\(r)")
        #expect(r.err.split(separator: "\n").filter { $0.contains("mixed.jsonl:") }.count == 20, "\(r.err)")
        #expect(r.err.contains("skipped 5 more invalid records, not listed"), "\(r.err)")
        #expect(r.out.contains("imported 1 check-in") && r.out.contains("25 invalid skipped"), "\(r.out)")
    }

    /// A zh-Hans user reads the shipped badges' titles in Chinese; a badge the configuration
    /// replaced keeps its own title.
    @Test func badgesSpeakTheUsersLanguage() throws {
        let s = try Sandbox()
        s.addUser("lin", tz: "Asia/Shanghai", ["--lang", "zh-Hans"])
        s.addUser("ann")
        let lin = try jsonLines(s.run(["badges", "lin", "-o", "json"]).out)
        #expect(lin.first?["title"] as? String == "热身" && lin.first?["description"] as? String == "连续打卡 3 天。")
        let ann = try jsonLines(s.run(["badges", "ann", "-o", "json"]).out)
        #expect(ann.first?["title"] as? String == "Warming Up")
        let config = try s.file(
            "c.toml",
            "[[badges]]\nid = \"streak_3\"\ntitle = \"Three in a row\"\ndescription = \"3 days.\"\n"
                + "category = \"streaks\"\nrequirement = \"streak_days\"\nvalue = 3\n")
        let own = try jsonLines(s.run(["badges", "lin", "-o", "json", "--config", config]).out)
        #expect(own.first?["title"] as? String == "Three in a row")
        #expect(s.run(["badges", "lin"]).out.contains("热身"))
    }

    /// The man pages in a checkout carry the version (`man deploy/streakd.1` showed `@VERSION@`),
    /// the one in Sources/streakd/Streakd.swift.
    @Test func manPagesInACheckoutShowTheVersion() throws {
        let swift = try String(contentsOfFile: packageRoot + "/Sources/streakd/Streakd.swift", encoding: .utf8)
        let version = try #require(
            swift.split(separator: "\n").first { $0.contains("static let version = \"") }?
                .split(separator: "\"").dropFirst().first.map(String.init))
        for page in ["deploy/streakd.1", "deploy/streakd.toml.5"] {
            let text = try String(contentsOfFile: packageRoot + "/" + page, encoding: .utf8)
            #expect(!text.contains("@VERSION@") && !text.contains("@DATE@"), "\(page)")
            let th = text.split(separator: "\n").first { $0.hasPrefix(".TH ") } ?? ""
            #expect(th.contains("\"streakd \(version)\""), "\(page): \(th)")
        }
    }
}
