import StreakCore
import StreakTestKit
import Testing

@testable import StreakJobs

/// Message templates, language tags and the messages streakd ships (SPEC §10).
@Suite(.fastTier) struct MessagesTests {
    static let date = LocalDate("2026-11-21")!

    static func notice(
        _ kind: NotificationKind, length: Int = 7, count: Int = 0, goal: Int = 1, freezes: Int = 1
    ) -> Notice {
        Notice(
            kind: kind, date: date, due: RFC3339.parse("2026-11-21T19:00:00Z")!, length: length, count: count,
            goal: goal, freezes: freezes)
    }

    func render(_ n: Notice, streak: String = "daily", tag: String? = nil, book: MessageBook = MessageBook()) -> String
    {
        book.render(n, streak: streak, tag: tag).text
    }

    @Test func everyShippedTemplateReads() throws {
        for language in ShippedMessages.languages {
            for kind in NotificationKind.allCases {
                for title in [false, true] {
                    let key = kind.rawValue + (title ? "_title" : "")
                    _ = try MessageBook.template(
                        ShippedMessages.source(kind, title: title, language: language), key: key)
                    #expect(ShippedMessages.book[language]?[key] != nil, "\(language) \(key)")
                }
            }
        }
    }

    /// The English texts are the ones streakd has always sent (SPEC §4's default message).
    /// preview's texts, each written once: the same as rendering every notice, by any field the
    /// text depends on, also past the limit where the texts known are forgotten.
    @Test func renderedTextsAreTheRenderedOnes() {
        var texts = RenderedTexts(MessageBook())
        texts.limit = 5
        var names = NoticeNames()
        for _ in 0..<2 {
            for kind in NotificationKind.allCases {
                for (length, freezes) in [(7, 1), (7, 0), (12, 2)] {
                    for (streak, tag) in [("daily", nil), ("workout", "de"), ("daily", "fr-CA")] as [(String, String?)]
                    {
                        let n = Self.notice(kind, length: length, freezes: freezes)
                        let (s, l) = (names.number(streak: streak), names.number(language: tag))
                        let text = texts.withText(n, streak: s, tag: l, names: names) {
                            String(decoding: $0, as: UTF8.self)
                        }
                        #expect(text == render(n, streak: streak, tag: tag))
                    }
                }
            }
        }
    }

    @Test func englishIsAsBefore() {
        #expect(
            render(Self.notice(.atRisk))
                == "Your 7-day streak is at risk! Check in today to keep it going. 1 freeze left.")
        #expect(
            render(Self.notice(.atRisk, count: 2, goal: 3, freezes: 0), streak: "workout")
                == "Your 7-day workout streak is at risk! Check in today to keep it going. 2 of 3 check-ins done. No "
                + "freezes left.")
        #expect(
            render(Self.notice(.freezeUsed, freezes: 2))
                == "A freeze kept your 7-day streak alive on 2026-11-21. 2 freezes left.")
        #expect(
            render(Self.notice(.streakBroken, length: 12), streak: "reading")
                == "Your 12-day reading streak ended on 2026-11-21. Check in today to start a new one.")
        #expect(render(Self.notice(.freezeRefilled)) == "You have a new freeze for your streak: 1 freeze left.")
        #expect(
            render(Self.notice(.freezeRefilled), streak: "workout")
                == "You have a new freeze for your workout streak: 1 freeze left.")
        #expect(MessageBook().render(Self.notice(.streakBroken), streak: "daily", tag: nil).title == "Streak broken")
    }

    @Test func simplifiedChineseReadsNaturally() {
        let zh = { (n: Notice, streak: String) in self.render(n, streak: streak, tag: "zh-Hans") }
        #expect(zh(Self.notice(.atRisk), "daily") == "你已连续打卡 7 天，今天还没有打卡！记得今天打卡，别让连续记录中断。还剩 1 张冻结卡。")
        #expect(
            zh(Self.notice(.atRisk, count: 1, goal: 2, freezes: 0), "workout")
                == "你在“workout”上已连续打卡 7 天，今天还没有打卡！记得今天打卡，别让连续记录中断。今天已完成 1/2 次。冻结卡已用完。")
        #expect(zh(Self.notice(.freezeUsed, freezes: 0), "daily") == "2026-11-21 没有打卡，一张冻结卡保住了你连续 7 天的记录。冻结卡已用完。")
        #expect(zh(Self.notice(.streakBroken), "daily") == "你连续 7 天的打卡记录在 2026-11-21 中断了。今天打卡，重新开始吧！")
        #expect(zh(Self.notice(.freezeRefilled, freezes: 2), "reading") == "你在“reading”上获得了一张新的冻结卡，现在共有 2 张。")
        #expect(MessageBook().render(Self.notice(.atRisk), streak: "daily", tag: "zh-Hans").title == "连续打卡即将中断")
        // Chinese has no plural forms: `one` is never chosen.
        #expect(PluralRule.rule(for: "zh-Hans")(1) == "other")
    }

    @Test func templatesSubstitutePluralizeSelectAndQuote() throws {
        let numbers = ["length", "freezes", "done", "goal"]
        let texts = ["streak", "date"]
        func t(_ text: String) throws -> MessageTemplate { try MessageTemplate(text, numbers: numbers, texts: texts) }
        let values: [String: MessageTemplate.Value] = [
            "length": .number(7), "freezes": .number(0), "done": .number(1), "goal": .number(3),
            "streak": .text("daily"), "date": .text("2026-11-21"),
        ]
        let english = PluralRule.rule(for: "en")
        #expect(
            try t("{length} days, {done}/{goal} on {date}").render(values, plural: english)
                == "7 days, 1/3 on 2026-11-21")
        #expect(try t("{ length }!").render(values, plural: english) == "7!")
        #expect(
            try t("{freezes, plural, =0 {none} one {# freeze} other {# freezes}}").render(values, plural: english)
                == "none")
        #expect(
            try t("{done, plural, =0 {none} one {# freeze} other {# freezes}}").render(values, plural: english)
                == "1 freeze")
        #expect(
            try t("{goal, plural, one {# check-in} other {# check-ins}}").render(values, plural: english)
                == "3 check-ins")
        #expect(
            try t("{streak, select, daily {your streak} other {your {streak} streak}}").render(values, plural: english)
                == "your streak")
        #expect(
            try t("Don't stop: '{'length'}' is {length}, '' quoted").render(values, plural: english)
                == "Don't stop: {length} is 7, ' quoted")
        #expect(try t("#1 {length}").render(values, plural: english) == "#1 7")
        // French counts 0 as one.
        #expect(
            try t("{freezes, plural, one {# gel} other {# gels}}").render(values, plural: PluralRule.rule(for: "fr"))
                == "0 gel")
    }

    @Test func templatesThatCannotBeReadSayWhy() {
        func problem(_ text: String) -> String? {
            do {
                _ = try MessageBook.template(text, key: "at_risk")
                return nil
            } catch {
                return error.message
            }
        }
        #expect(
            problem("Your {lenght}-day streak")
                == "unknown placeholder {lenght}; use {length}, {freezes}, {done}, {goal}, {streak}, {date} (at character 6)"
        )
        #expect(problem("{badge} unlocked")?.hasPrefix("unknown placeholder {badge}") == true)
        #expect(problem("a } b") == "a '}' with no '{' before it; write '}' for a brace itself (at character 3)")
        #expect(problem("{length") == "{length is never closed; write {length} (at character 8)")
        #expect(problem("{} x")?.hasPrefix("a '{' needs a placeholder name") == true)
        #expect(problem("{streak, plural, other {x}}")?.hasPrefix("{streak} is not a number") == true)
        #expect(
            problem("{freezes, plural, =0 {none}}")?.hasPrefix("{freezes, plural, …} needs an other {…} case") == true)
        #expect(problem("{freezes, plural, lots {x} other {y}}")?.hasPrefix("lots is not a plural case") == true)
        #expect(problem("{freezes, choice, other {y}}")?.hasPrefix("{freezes, choice…}: use plural or select") == true)
        #expect(
            problem("{streak, select, daily {x} other {y}") == "{streak, select, …} is never closed (at character 37)")
    }

    @Test func languageTagsAreWellFormedAndLookedUp() {
        #expect(LanguageTag.canonical("zh-hans-cn") == "zh-Hans-CN")
        #expect(LanguageTag.canonical("EN-gb") == "en-GB")
        #expect(LanguageTag.canonical("es-419") == "es-419")
        #expect(LanguageTag.canonical("de-CH-1996") == "de-CH-1996")
        #expect(LanguageTag.canonical("en-US-x-twain") == "en-US-x-twain")
        #expect(LanguageTag.canonical("sr-Latn-RS-u-co-phonebk") == "sr-Latn-RS-u-co-phonebk")
        for bad in [
            "", "e", "english", "en_GB", "en-", "-en", "en--GB", "en-GB-x", "zh-Hans-Hant", "en-a", "1en", "en GB",
        ] {
            #expect(LanguageTag.canonical(bad) == nil, "\(bad)")
        }
        let available = ["en", "zh-Hans", "pt-BR"]
        #expect(LanguageTag.lookup("en-GB", in: available) == "en")
        #expect(LanguageTag.lookup("zh-Hans-CN", in: available) == "zh-Hans")
        #expect(LanguageTag.lookup("zh", in: available) == "zh-Hans")
        #expect(LanguageTag.lookup("zh-SG", in: available) == "zh-Hans")
        #expect(LanguageTag.lookup("zh-TW", in: available) == nil)
        #expect(LanguageTag.lookup("zh-Hant", in: available) == nil)
        #expect(LanguageTag.lookup("pt", in: available) == nil)
        #expect(LanguageTag.lookup("pt-br", in: available) == "pt-BR")
        #expect(LanguageTag.lookup("en-US-x-twain", in: available) == "en")
    }

    @Test func configuredMessagesOverrideAndFallBack() throws {
        let c = try ConfigLoader.parse(
            """
            [messages]
            default_language = "fr"

            [messages.fr]
            at_risk = "Ta série de {length} jours est en danger ! {freezes, plural, one {# gel} other {# gels}} en réserve."
            at_risk_title = "Série en danger"

            [messages.en]
            streak_broken = "Gone: {length} days."
            """, file: "c.toml")
        #expect(c.messages.defaultLanguage == "fr")
        #expect(c.messages.languages == ["en", "fr", "zh-Hans"])
        let book = c.messages
        #expect(
            render(Self.notice(.atRisk, freezes: 0), book: book)
                == "Ta série de 7 jours est en danger ! 0 gel en réserve.")
        #expect(book.render(Self.notice(.atRisk), streak: "daily", tag: "fr-CA").title == "Série en danger")
        // A kind the French table leaves out comes from the default language, then English.
        #expect(render(Self.notice(.streakBroken), tag: "fr", book: book) == "Gone: 7 days.")
        #expect(render(Self.notice(.streakBroken), tag: "en", book: book) == "Gone: 7 days.")
        #expect(
            render(Self.notice(.freezeRefilled), tag: "fr", book: book)
                == "You have a new freeze for your streak: 1 freeze left.")
        #expect(render(Self.notice(.atRisk), tag: "zh-Hans", book: book).hasPrefix("你已连续打卡 7 天"))
        // A user whose language is gone from the configuration gets the default language.
        #expect(
            render(Self.notice(.atRisk, freezes: 2), tag: "de", book: book)
                == "Ta série de 7 jours est en danger ! 2 gels en réserve.")
        // Printed, it reads back the same.
        #expect(try ConfigLoader.parse(c.toml, file: "c.toml") == c)
    }

    @Test(arguments: [
        (
            "[messages.fr]\nat_risk = \"{lenght} jours\"\n",
            "c.toml:2: messages.fr.at_risk: unknown placeholder {lenght}; use {length}, {freezes}, {done}, {goal}, "
                + "{streak}, {date} (at character 1)"
        ),
        (
            "[messages.english]\nat_risk = \"x\"\n",
            "c.toml:1: messages.english: \"english\" is not a language; use a BCP 47 language tag such as en, en-GB, "
                + "zh-Hans or pt-BR (a 2- or 3-letter language, then optional script, region and variants)"
        ),
        (
            "[messages]\ndefault_language = \"de\"\n",
            "c.toml:2: messages.default_language: streakd has no messages in de; use one of en, zh-Hans, or add a "
                + "[messages.de] table"
        ),
        (
            "[messages.en]\nreminder = \"x\"\n",
            "c.toml:2: messages.en.reminder: unknown setting; valid in [messages.en]: at_risk, at_risk_title, "
                + "freeze_used, freeze_used_title, streak_broken, streak_broken_title, freeze_refilled, "
                + "freeze_refilled_title, badge_unlocked, badge_unlocked_title, level_up, level_up_title, streak_repaired, "
                + "streak_repaired_title"
        ),
        (
            "[messages.en]\nat_risk = \"{badge} is yours\"\n",
            "c.toml:2: messages.en.at_risk: unknown placeholder {badge}; use {length}, {freezes}, {done}, {goal}, {streak}, {date} (at character 1)"
        ),
        ("[messages.en]\nat_risk = 3\n", "c.toml:2: messages.en.at_risk: must be a string in quotes"),
    ])
    func badMessagesAreConfigurationErrors(text: String, message: String) {
        #expect {
            _ = try ConfigLoader.parse(text, file: "c.toml")
        } throws: { error in
            (error as? StreakdError)?.status == .config && (error as? StreakdError)?.message == message
        }
    }

    /// `config check` reports every problem of the file, in line order, then how many.
    @Test func everyProblemIsReported() {
        let text = """
            [import]
            backfill_days = 900
            [freeze]
            max = "two"
            [reminders]
            days = [0]
            colour = "blue"
            [[hooks]]
            name = "bad name"
            command = ["/bin/true"]
            [messages.en]
            at_risk = "{nope}"
            """
        #expect {
            _ = try ConfigLoader.parse(text, file: "c.toml")
        } throws: { error in
            (error as? StreakdError)?.message == """
                c.toml:2: import.backfill_days: 900 is out of range; use a whole number from 0 to 365
                c.toml:4: freeze.max: must be a whole number from 0 to 100
                c.toml:6: reminders.days: must be a list of whole numbers from 1 to 100000, such as [5, 7, 14]
                c.toml:7: reminders.colour: unknown setting; valid in [reminders]: days, max_late, usual_earliest, usual_latest
                c.toml:9: hooks[1].name: "bad name" is not a hook name; use 1 to 32 characters of a-z, 0-9, '_' and '-'
                c.toml:12: messages.en.at_risk: unknown placeholder {nope}; use {length}, {freezes}, {done}, {goal}, {streak}, {date} (at character 1)
                6 problems in c.toml
                """
        }
    }
    /// A `[[webhooks]]` table's problems are all reported too, not only its first.
    @Test func everyWebhookProblemIsReported() {
        let text = """
            [[webhooks]]
            name = "phone"
            url = "ftp://example.com/x"
            secret = "short"
            format = "xml"
            concurrency = 0
            kinds = ["at_risk", "soon"]
            [[webhooks]]
            url = "https://example.com/y"
            colour = "blue"
            """
        #expect {
            _ = try ConfigLoader.parse(text, file: "c.toml")
        } throws: { error in
            (error as? StreakdError)?.message == """
                c.toml:3: webhooks[1].url: "ftp://example.com/x" is not an http or https URL
                c.toml:4: webhooks[1].secret: is 5 bytes, shorter than 16; give a secret of 16 to 1024 bytes: a whsec_ secret (Standard Webhooks: whsec_ and base64) or any text
                c.toml:5: webhooks[1].format: "xml" is not a format; use one of "json", "ntfy", "gotify"
                c.toml:6: webhooks[1].concurrency: must be a whole number from 1 to 256
                c.toml:7: webhooks[1].kinds: "soon" is not a kind; must be a list of kinds from \(NotificationKind.allCases.map(\.rawValue).joined(separator: ", "))
                c.toml:8: webhooks[2]: every webhook needs a name = "…" of 1 to 32 characters of a-z, 0-9, '_' and '-'
                c.toml:8: webhooks[2]: this webhook of format "json" needs a secret = "whsec_…" or secret_file = "/…" to sign its requests
                c.toml:10: webhooks[2].colour: unknown setting; valid in [[webhooks]]: name, url, secret, secret_file, format, headers, header_files, timeout_seconds, concurrency, kinds, ca_file
                8 problems in c.toml
                """
        }
    }
    /// A name given twice is named even when an entry with it has other problems; a bad name
    /// and a secret say what is wrong with them.
    @Test func aNameTwiceAndABadSecretAreNamedAtOnce() {
        let text = """
            [[webhooks]]
            name = "phone"
            url = "https://example.com/x"
            secret = "whsec_not-base64!!-but-long-enough"
            [[webhooks]]
            name = "phone"
            url = "https://example.com/y"
            concurrency = 0
            [[webhooks]]
            name = "Phone"
            url = "https://example.com/z"
            secret = "\(String(repeating: "s", count: 1025))"
            """
        #expect {
            _ = try ConfigLoader.parse(text, file: "c.toml")
        } throws: { error in
            let message = (error as? StreakdError)?.message ?? ""
            return [
                "c.toml:4: webhooks[1].secret: is a whsec_ secret whose rest is not base64; give",
                "c.toml:6: webhooks[2].name: \"phone\" names two webhooks; give each its own name",
                "c.toml:8: webhooks[2].concurrency: must be a whole number from 1 to 256",
                "c.toml:10: webhooks[3].name: \"Phone\" is not a webhook name; use 1 to 32 characters of a-z, 0-9, '_' and '-'",
                "c.toml:12: webhooks[3].secret: is 1025 bytes, longer than 1024; give",
                "6 problems in c.toml",
            ].allSatisfy(message.contains)
        }
    }

    /// A `[[badges]]` table's problems are all reported, as a hook's and a webhook's are.
    @Test func everyBadgeProblemIsReported() {
        let text = """
            [[badges]]
            id = "Bad Id"
            category = "x y"
            requirement = "nope"
            value = 0
            xp = -1
            """
        let idRule = "1 to 64 characters of a-z, 0-9 and '_'"
        #expect {
            _ = try ConfigLoader.parse(text, file: "c.toml")
        } throws: { error in
            (error as? StreakdError)?.message == """
                c.toml:1: badges[1]: badge "Bad Id" needs a title = "…"
                c.toml:2: badges[1].id: "Bad Id" is not a badge id; use \(idRule)
                c.toml:3: badges[1].category: "x y" is not a category; use \(idRule)
                c.toml:4: badges[1].requirement: "nope" is not a requirement; use streak_days, total_checkins, tagged_checkins
                c.toml:5: badges[1].value: must be a whole number from 1 to 1000000
                c.toml:6: badges[1].xp: must be a whole number from 0 to 1000000
                6 problems in c.toml
                """
        }
    }
}
