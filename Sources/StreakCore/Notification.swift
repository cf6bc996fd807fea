/// The kinds of notification (SPEC §4): the one list. Each kind's journal MESSAGE_ID and
/// priority are StreakDelivery's (`NotificationKind.messageID`), its default text StreakJobs'
/// (`Messages`); the compiler asks for both when a kind is added here.
public enum NotificationKind: String, CaseIterable, Sendable {
    case atRisk = "at_risk"
    case freezeUsed = "freeze_used"
    case streakBroken = "streak_broken"
    case freezeRefilled = "freeze_refilled"
    case badgeUnlocked = "badge_unlocked"
    case levelUp = "level_up"
    case streakRepaired = "streak_repaired"

    /// Every kind's name, for messages that list what is valid.
    public static var names: String { allCases.map(\.rawValue).joined(separator: ", ") }

    /// Whether the kind is about the user's achievements (SPEC §9) rather than one streak's day:
    /// then it happens once ever per badge or level, whatever the date.
    public var isAchievement: Bool { self == .badgeUnlocked || self == .levelUp }

    /// The kind's heading in English: the shipped English title, and a desktop notification's
    /// summary when the notification carries no title in the user's language.
    public var englishTitle: String {
        switch self {
        case .atRisk: "Streak at risk"
        case .freezeUsed: "Freeze used"
        case .streakBroken: "Streak broken"
        case .freezeRefilled: "Freeze refilled"
        case .badgeUnlocked: "Badge unlocked"
        case .levelUp: "Level up"
        case .streakRepaired: "Streak repaired"
        }
    }
}

/// One notification: what the ledger records under its key and every sink receives.
public struct Notification: Equatable, Sendable {
    public var kind: NotificationKind
    public var user: String
    public var streak: String
    /// The date the notification is about (the missed date for settlements).
    public var localDate: LocalDate
    /// When it was due (UTC).
    public var due: Instant
    /// The user's zone, and `due` in it (RFC 3339 with offset).
    public var timezone: String
    public var localDue: String
    public var streakLength: Int
    /// The text, in the user's language.
    public var message: String
    /// A short heading in the same language (the desktop's summary line); nil for one recorded
    /// before streakd wrote headings, or read back from the journal, which keeps none.
    public var title: String?
    /// The badge unlocked (`badge_unlocked`), or the level reached (`level_up`); for these `streak`
    /// is empty (they are the user's, not one streak's) and `localDate` the due instant's date.
    public var badge: String?
    public var level: Int?

    public init(
        kind: NotificationKind, user: String, streak: String, localDate: LocalDate, due: Instant, timezone: String,
        localDue: String, streakLength: Int, message: String, title: String? = nil, badge: String? = nil,
        level: Int? = nil
    ) {
        self.kind = kind
        self.user = user
        self.streak = streak
        self.localDate = localDate
        self.due = due
        self.timezone = timezone
        self.localDue = localDue
        self.streakLength = streakLength
        self.message = message
        self.title = title
        self.badge = badge
        self.level = level
    }

    /// What an achievement is about: the badge's id, or the level as a number.
    public var subject: String? { badge ?? level.map(String.init) }

    /// At most one notification per key (SPEC §4, §9): kind, user, streak, local date; for the
    /// achievement kinds kind, user and badge (or level), once ever.
    public var key: String {
        if kind.isAchievement, let subject { return Self.achievementKey(kind, user: user, subject: subject) }
        return "\(kind.rawValue)/\(user)/\(streak)/\(localDate)"
    }

    /// Whom and what it is about, for lines people read: `alice/daily`, `alice badge streak_7`,
    /// `alice level 3`.
    public var about: String {
        if let badge { return "\(user) badge \(badge)" }
        if let level { return "\(user) level \(level)" }
        return "\(user)/\(streak)"
    }

    /// `badge_unlocked/USER/BADGE`, `level_up/USER/LEVEL`.
    public static func achievementKey(_ kind: NotificationKind, user: String, subject: String) -> String {
        "\(kind.rawValue)/\(user)/\(subject)"
    }

    /// The JSON object of `preview -o json`, `log -o json` and hooks' stdin.
    public var json: JSON {
        var items: [(String, JSON)] = [
            ("kind", .string(kind.rawValue)), ("user", .string(user)),
            ("streak", kind.isAchievement ? .null : .string(streak)),
            ("due", .string(due.description)), ("local_due", .string(localDue)), ("timezone", .string(timezone)),
            ("local_date", .string(localDate.description)), ("streak_length", .int(streakLength)),
        ]
        if let badge { items.append(("badge", .string(badge))) }
        if let level { items.append(("level", .int(level))) }
        items += [("message", .string(message)), ("key", .string(key))]
        return .object(items)
    }

    /// The `STREAKD_*` fields of the journal entry and of a hook's environment.
    public var fields: [(String, String)] {
        var fields: [(String, String)] = []
        eachField { fields.append(("\($0)", $1)) }
        return fields
    }

    /// Calls `body` with each of `fields`, in order, without building the list.
    public func eachField(_ body: (StaticString, String) -> Void) {
        let date = localDate.description
        body("STREAKD_KIND", kind.rawValue)
        body("STREAKD_USER", user)
        if !kind.isAchievement { body("STREAKD_STREAK", streak) }
        if let badge { body("STREAKD_BADGE", badge) }
        if let level { body("STREAKD_LEVEL", String(level)) }
        body("STREAKD_LOCAL_DATE", date)
        body("STREAKD_STREAK_LENGTH", String(streakLength))
        body("STREAKD_DUE", due.description)
        body("STREAKD_LOCAL_DUE", localDue)
        body("STREAKD_TIMEZONE", timezone)
        body("STREAKD_KEY", key)
    }
}
