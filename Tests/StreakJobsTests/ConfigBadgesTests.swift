import StreakCore
import StreakTestKit
import Testing

@testable import StreakJobs

/// `[[badges]]`, `[xp]` and `[levels]` in streakd.toml (SPEC §9).
@Suite(.fastTier) struct ConfigBadgesTests {
    @Test func theDefaultsAreTheTwelveOfTheSpec() throws {
        let a = try ConfigLoader.parse("", file: "c.toml").achievements
        #expect(a == AchievementSettings())
        #expect(a.xpPerDay == 10 && a.levelThresholds == [500, 1500, 4000, 10000])
        #expect(
            a.badges.map { "\($0.category)/\($0.id)/\($0.requirement.name)/\($0.value)/\($0.xp)" } == [
                "streaks/streak_3/streak_days/3/50", "streaks/streak_7/streak_days/7/50",
                "streaks/streak_30/streak_days/30/50", "completeness/checkins_10/total_checkins/10/50",
                "completeness/checkins_50/total_checkins/50/50", "completeness/checkins_100/total_checkins/100/50",
                "social/social_1/tagged_checkins/1/50", "social/social_5/tagged_checkins/5/50",
                "social/social_20/tagged_checkins/20/50", "knowledge/knowledge_1/tagged_checkins/1/50",
                "knowledge/knowledge_10/tagged_checkins/10/50", "knowledge/knowledge_50/tagged_checkins/50/50",
            ])
        #expect(a.badges.allSatisfy { !$0.title.isEmpty && !$0.description.isEmpty && $0.streak == nil })
        #expect(a.badges[6].requirement == .taggedCheckins(["kind": .string("social")]))
        #expect(a.badges[9].requirement == .taggedCheckins(["kind": .string("knowledge")]))
    }

    static let custom = """
        [xp]
        per_day = 5

        [levels]
        thresholds = [100, 200, 300, 400]

        [[badges]]
        id = "early_bird"
        title = "Early \\"Bird\\""
        description = "Five workouts before work — outdoors."
        category = "workout"
        requirement = "tagged_checkins"
        meta = {when = "morning", outdoor = true, reps = 20}
        streak = "workout"
        value = 5
        xp = 120

        [[badges]]
        id = "w30"
        title = "Thirty"
        category = "streaks"
        requirement = "streak_days"
        value = 30
        """

    @Test func badgesReplaceTheDefaultsEntirely() throws {
        let a = try ConfigLoader.parse(Self.custom, file: "c.toml").achievements
        #expect(a.xpPerDay == 5 && a.levelThresholds == [100, 200, 300, 400])
        #expect(
            a.badges == [
                BadgeDefinition(
                    id: "early_bird", title: "Early \"Bird\"", description: "Five workouts before work — outdoors.",
                    category: "workout",
                    requirement: .taggedCheckins([
                        "when": .string("morning"), "outdoor": .bool(true), "reps": .integer(20),
                    ]), value: 5, streak: "workout", xp: 120),
                BadgeDefinition(
                    id: "w30", title: "Thirty", description: "", category: "streaks", requirement: .streakDays,
                    value: 30),
            ])
    }

    @Test func anEmptyListMeansNoBadges() throws {
        let c = try ConfigLoader.parse("badges = []\n[xp]\nper_day = 0\n", file: "c.toml")
        #expect(c.achievements.badges.isEmpty && c.achievements.xpPerDay == 0)
        // Printed, it reads back the same: the empty list stands before the first table.
        #expect(c.toml.split(separator: "\n").dropFirst().first == "badges = []")
        #expect(try ConfigLoader.parse(c.toml, file: "c.toml") == c)
    }

    /// The effective configuration, printed, reads back as itself.
    @Test(arguments: ["", custom, "[levels]\nthresholds = [1, 2, 3, 1000000000]"])
    func thePrintedConfigurationReadsBackTheSame(text: String) throws {
        let c = try ConfigLoader.parse(text, file: "c.toml")
        #expect(try ConfigLoader.parse(c.toml, file: "c.toml") == c)
    }

    @Test func printsTheBadgesXPAndLevels() throws {
        let c = try ConfigLoader.parse(Self.custom, file: "c.toml")
        #expect(
            c.toml.contains(
                """
                [xp]
                per_day = 5

                [levels]
                thresholds = [100, 200, 300, 400]

                [[badges]]
                id = "early_bird"
                title = "Early \\"Bird\\""
                description = "Five workouts before work — outdoors."
                category = "workout"
                requirement = "tagged_checkins"
                meta = {outdoor = true, reps = 20, when = "morning"}
                streak = "workout"
                value = 5
                xp = 120

                [[badges]]
                id = "w30"
                title = "Thirty"
                description = ""
                category = "streaks"
                requirement = "streak_days"
                value = 30
                xp = 50
                """))
        #expect(
            c.json.text.hasSuffix(
                #","xp":{"per_day":5},"levels":{"thresholds":[100,200,300,400]},"badges":[{"id":"early_bird","title":"Early \"Bird\"","description":"Five workouts before work — outdoors.","category":"workout","requirement":"tagged_checkins","meta":{"outdoor":true,"reps":20,"when":"morning"},"streak":"workout","value":5,"xp":120},{"id":"w30","title":"Thirty","description":"","category":"streaks","requirement":"streak_days","meta":null,"streak":null,"value":30,"xp":50}],"messages":{"default_language":"en","languages":["en","zh-Hans"],"templates":{}}}"#
            ))
    }

    /// A valid badge with one line changed (nil: removed) or one added.
    static func badge(_ change: [String: String?] = [:], add: String = "") -> String {
        var lines = [
            ("id", "\"b\""), ("title", "\"B\""), ("category", "\"c\""), ("requirement", "\"total_checkins\""),
            ("value", "3"),
        ]
        for (key, value) in change {
            if let i = lines.firstIndex(where: { $0.0 == key }) {
                if let value { lines[i].1 = value } else { lines.remove(at: i) }
            } else if let value {
                lines.append((key, value))
            }
        }
        return "[[badges]]\n" + lines.map { "\($0.0) = \($0.1)" }.joined(separator: "\n") + add
    }

    static let idRule = "1 to 64 characters of a-z, 0-9 and '_'"

    @Test(arguments: [
        (badge(["id": "\"Early-Bird\""]), "c.toml:2: badges[1].id: \"Early-Bird\" is not a badge id; use \(idRule)"),
        (badge(["id": nil]), "c.toml:1: badges[1]: every badge needs an id = \"…\" of \(idRule)"),
        (badge(["id": "3"]), "c.toml:2: badges[1].id: every badge needs an id = \"…\" of \(idRule)"),
        (
            badge() + "\n" + badge(["title": "\"Other\""]),
            "c.toml:8: badges[2].id: \"b\" names two badges; give each badge its own id"
        ),
        (
            badge(["colour": "\"red\""]),
            "c.toml:7: badges[1].colour: unknown setting; valid in [[badges]]: id, title, description, category, requirement, value, streak, meta, xp"
        ),
        (badge(["title": nil]), "c.toml:1: badges[1]: badge \"b\" needs a title = \"…\""),
        (badge(["title": "\"\""]), "c.toml:3: badges[1].title: must be a string of 1 to 100 characters, on one line"),
        (
            badge(["title": "\"two\\nlines\""]),
            "c.toml:3: badges[1].title: must be a string of 1 to 100 characters, on one line"
        ),
        (
            badge(["description": "7"]),
            "c.toml:7: badges[1].description: must be a string of 0 to 500 characters, on one line"
        ),
        (badge(["category": nil]), "c.toml:1: badges[1]: badge \"b\" needs a category = \"…\""),
        (
            badge(["category": "\"Fun Stuff\""]),
            "c.toml:4: badges[1].category: \"Fun Stuff\" is not a category; use \(idRule)"
        ),
        (
            badge(["requirement": nil]),
            "c.toml:1: badges[1]: badge \"b\" needs a requirement = \"…\"; use streak_days, total_checkins, tagged_checkins"
        ),
        (
            badge(["requirement": "\"streak\""]),
            "c.toml:5: badges[1].requirement: \"streak\" is not a requirement; use streak_days, total_checkins, tagged_checkins"
        ),
        (badge(["value": nil]), "c.toml:1: badges[1]: badge \"b\" needs a value = N (1 to 1000000)"),
        (badge(["value": "0"]), "c.toml:6: badges[1].value: must be a whole number from 1 to 1000000"),
        (badge(["value": "\"7\""]), "c.toml:6: badges[1].value: must be a whole number from 1 to 1000000"),
        (badge(["xp": "-1"]), "c.toml:7: badges[1].xp: must be a whole number from 0 to 1000000"),
        (
            badge(["streak": "\"Work-Out\""]),
            "c.toml:7: badges[1].streak: \"Work-Out\" is not a streak id; use \(idRule)"
        ),
        (
            badge(["meta": "{kind = \"social\"}"]),
            "c.toml:7: badges[1].meta: only tagged_checkins badges take meta; this one's requirement is total_checkins"
        ),
        (
            badge(["requirement": "\"tagged_checkins\""]),
            "c.toml:1: badges[1]: badge \"b\" needs meta = {key = value, …}: tagged_checkins counts the check-ins whose metadata has each of them"
        ),
        (
            badge(["requirement": "\"tagged_checkins\"", "meta": "{}"]),
            "c.toml:7: badges[1].meta: must be a table of metadata keys and values (strings, true/false or whole numbers), such as {kind = \"social\"}"
        ),
        (
            badge(["requirement": "\"tagged_checkins\"", "meta": "\"social\""]),
            "c.toml:7: badges[1].meta: must be a table of metadata keys and values (strings, true/false or whole numbers), such as {kind = \"social\"}"
        ),
        (
            badge(["requirement": "\"tagged_checkins\"", "meta": "{Kind = \"social\"}"]),
            "c.toml:7: badges[1].meta: \"Kind\" is not a metadata key; use a lowercase letter, then up to 63 of a-z, 0-9 and '_'"
        ),
        (
            badge(["requirement": "\"tagged_checkins\"", "meta": "{pages = 1.5}"]),
            "c.toml:7: badges[1].meta: pages: must be a string, true/false or a whole number"
        ),
        (
            badge([
                "requirement": "\"tagged_checkins\"",
                "meta": "{kind = \"\(String(repeating: "x", count: 1025))\"}",
            ]),
            "c.toml:7: badges[1].meta: kind: must be a string of at most 1024 bytes"
        ),
        (
            "[badges]\nid = \"b\"",
            "c.toml:1: badges: must be an array of tables, each under a [[badges]] header (or badges = [] for none)"
        ),
        ("[xp]\nper_day = -1", "c.toml:2: xp.per_day: -1 is out of range; use a whole number from 0 to 1000000"),
        ("[xp]\nper_date = 5", "c.toml:2: xp.per_date: unknown setting; valid in [xp]: per_day"),
        (
            "[levels]\nthresholds = [500, 400, 4000, 10000]",
            "c.toml:2: levels.thresholds: must be a list of 4 whole numbers from 1 to 1000000000, each larger than the one before, such as [500, 1500, 4000, 10000]: the XP at which levels 2, 3, 4 and 5 begin"
        ),
        (
            "[levels]\nthresholds = [500, 1500, 4000]",
            "c.toml:2: levels.thresholds: must be a list of 4 whole numbers from 1 to 1000000000, each larger than the one before, such as [500, 1500, 4000, 10000]: the XP at which levels 2, 3, 4 and 5 begin"
        ),
        (
            "[levels]\n\nthresholds = [0, 1500, 4000, 10000]",
            "c.toml:3: levels.thresholds: must be a list of 4 whole numbers from 1 to 1000000000, each larger than the one before, such as [500, 1500, 4000, 10000]: the XP at which levels 2, 3, 4 and 5 begin"
        ),
        ("[levels]\nmax = 5", "c.toml:2: levels.max: unknown setting; valid in [levels]: thresholds"),
    ])
    func errorsNameFileLineAndKey(text: String, message: String) {
        #expect {
            _ = try ConfigLoader.parse(text, file: "c.toml")
        } throws: { error in
            let e = error as? StreakdError
            if e?.message != message { print("got: \(e?.message ?? "\(error)")") }
            return e?.status == .config && e?.message == message
        }
    }
}
