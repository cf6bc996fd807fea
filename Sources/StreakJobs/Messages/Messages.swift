import StreakCore

/// Each kind's text and heading in the user's language (SPEC §4, §10): templates from the
/// configuration (`[messages.LANG]`) over the ones streakd ships (`ShippedMessages`).
public struct MessageBook: Equatable, Sendable {
    /// The language of users who chose none (`messages.default_language`), as available.
    public var defaultLanguage = "en"
    /// The configuration's templates: language (canonical) → key (`at_risk`, `at_risk_title`, …).
    public var configured: [String: [String: MessageTemplate]] = [:] {
        didSet { languages = Self.languages(configured) }
    }

    public init() {}

    /// The keys of a language's table: each kind's text, and its heading.
    /// The longest template taken, in bytes of UTF-8 (its rendering goes into a hook's environment).
    public static let templateBytesAtMost = 4096
    public static var keys: [String] { NotificationKind.allCases.flatMap { [$0.rawValue, $0.rawValue + "_title"] } }

    /// Every language with messages: those streakd ships and those configured, sorted (kept, not
    /// worked out again for each message written).
    public private(set) var languages = Self.languages([:])

    static func languages(_ configured: [String: [String: MessageTemplate]]) -> [String] {
        Set(ShippedMessages.languages + configured.keys).sorted()
    }

    /// The language a user's tag is served in (`LanguageTag.lookup`), or nil when streakd has no
    /// messages in it; a user without one gets the default language.
    public func language(for tag: String?) -> String? {
        guard let tag else { return defaultLanguage }
        return LanguageTag.lookup(tag, in: languages)
    }

    /// The template for `key` in `language`: the configured one, else the shipped one, else the
    /// same key in the default language, else English (a language configured in part).
    public func template(_ key: String, language: String) -> MessageTemplate? {
        for lang in [language, defaultLanguage, "en"] {
            if let t = configured[lang]?[key] ?? ShippedMessages.book[lang]?[key] { return t }
        }
        return nil
    }

    /// The text and heading of a notice for a user whose language tag is `tag`; a tag streakd
    /// has no messages in (the configuration changed since it was set) gets the default language.
    public func render(_ n: Notice, streak: String, tag: String?) -> (text: String, title: String) {
        render(n.kind, Self.values(n, streak: streak), tag: tag)
    }

    /// The text and heading of a `badge_unlocked` (the badge's title and value) or a `level_up`.
    public func render(_ e: AchievementEvent, date: LocalDate, tag: String?) -> (text: String, title: String) {
        var values: [String: MessageTemplate.Value] = ["date": .text(date.description)]
        if let badge = e.badge {
            (values["badge"], values["length"]) = (.text(badgeText(badge, tag: tag).title), .number(badge.value))
        }
        if let level = e.level { (values["level"], values["length"]) = (.number(level), .number(level)) }
        return render(e.kind, values, tag: tag)
    }

    /// A badge's title and description for a user whose language tag is `tag`: a shipped badge the
    /// configuration left as shipped (same id, title and description) in the language's own words
    /// where streakd has them (`ShippedMessages.badgeTexts`); any other badge as configured.
    public func badgeText(_ badge: BadgeDefinition, tag: String?) -> (title: String, description: String) {
        let own = (badge.title, badge.description)
        guard
            let shipped = BadgeDefinition.defaults.first(where: { $0.id == badge.id }),
            shipped.title == badge.title, shipped.description == badge.description,
            let language = language(for: tag), let text = ShippedMessages.badgeTexts[language]?[badge.id]
        else { return own }
        return text
    }

    func render(_ kind: NotificationKind, _ values: [String: MessageTemplate.Value], tag: String?) -> (
        text: String, title: String
    ) {
        let language = self.language(for: tag) ?? defaultLanguage
        let plural = PluralRule.rule(for: language)
        func write(_ key: String) -> String {
            template(key, language: language)?.render(values, plural: plural) ?? ""
        }
        return (write(kind.rawValue), write(kind.rawValue + "_title"))
    }

    /// The placeholders (SPEC §10) and what they stand for in a notice.
    static func values(_ n: Notice, streak: String) -> [String: MessageTemplate.Value] {
        [
            "length": .number(n.length), "streak": .text(streak), "freezes": .number(n.freezes),
            "done": .number(n.count), "goal": .number(n.goal), "date": .text(n.date.description),
        ]
    }

    /// The placeholders a kind's templates may use: numbers (which `plural` counts) and texts.
    /// `{badge}` and `{level}` belong to the achievement kinds, whose `{length}` is the badge's
    /// value (days or check-ins) or the level, and `{date}` the local date of the unlock.
    public static func placeholders(_ kind: NotificationKind) -> (numbers: [String], texts: [String]) {
        switch kind {
        case .atRisk, .freezeUsed, .streakBroken, .freezeRefilled, .streakRepaired:
            (["length", "freezes", "done", "goal"], ["streak", "date"])
        case .badgeUnlocked: (["length"], ["badge", "date"])
        case .levelUp: (["level", "length"], ["date"])
        }
    }

    /// The kind a key (`at_risk`, `at_risk_title`) is of.
    static func kind(of key: String) -> NotificationKind? {
        NotificationKind(rawValue: key.hasSuffix("_title") ? String(key.dropLast("_title".count)) : key)
    }

    /// Reads one template for `key`.
    static func template(_ text: String, key: String) throws(MessageTemplate.Problem) -> MessageTemplate {
        guard let kind = kind(of: key) else { throw MessageTemplate.Problem(message: "not a message") }
        let (numbers, texts) = placeholders(kind)
        return try MessageTemplate(text, numbers: numbers, texts: texts)
    }
}

/// The plural categories of CLDR a number falls in, for the few rules streakd knows; `=N` cases
/// are exact in every language, for the others.
enum PluralRule {
    /// Languages without plural forms.
    static let none: Set<String> = ["zh", "ja", "ko", "th", "vi", "id", "ms", "lo", "my", "km", "yue", "jv"]
    /// Languages whose `one` is 0 and 1.
    static let zeroOne: Set<String> = ["fr", "pt", "hi", "bn", "fa", "am", "zu"]

    static func rule(for language: String) -> (Int) -> String {
        let primary = String(language.prefix { $0 != "-" }).lowercased()
        if none.contains(primary) { return { _ in "other" } }
        if zeroOne.contains(primary) && language.lowercased() != "pt-pt" {
            return { $0 == 0 || $0 == 1 ? "one" : "other" }
        }
        return { $0 == 1 ? "one" : "other" }
    }
}
