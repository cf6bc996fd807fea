/// A badge a user can unlock (SPEC §9): what it takes, and the XP it brings.
public struct BadgeDefinition: Equatable, Sendable {
    /// What a badge counts.
    public enum Requirement: Equatable, Sendable {
        /// The longest streak, in days (qualifying dates; freezes add none).
        case streakDays
        /// Counted check-ins (not backfilled).
        case totalCheckins
        /// Counted check-ins whose metadata has every one of these keys with its value.
        case taggedCheckins([String: MetaValue])

        /// The name in the configuration (`requirement = "streak_days"`).
        public var name: String {
            switch self {
            case .streakDays: "streak_days"
            case .totalCheckins: "total_checkins"
            case .taggedCheckins: "tagged_checkins"
            }
        }

        public static let names = ["streak_days", "total_checkins", "tagged_checkins"]
    }

    public static let idRule = "1 to 64 characters of a-z, 0-9 and '_'"
    public static let defaultXP = 50

    /// `^[a-z0-9_]{1,64}$`, unique among the badges.
    public var id: String
    public var title: String
    public var description: String
    /// A label that groups badges (the defaults use streaks, completeness, social, knowledge).
    public var category: String
    public var requirement: Requirement
    /// What `current` must reach; at least 1.
    public var value: Int
    /// Only this streak id counts; nil: every streak of the user.
    public var streak: String?
    public var xp: Int

    public init(
        id: String, title: String, description: String, category: String, requirement: Requirement, value: Int,
        streak: String? = nil, xp: Int = BadgeDefinition.defaultXP
    ) {
        self.id = id
        self.title = title
        self.description = description
        self.category = category
        self.requirement = requirement
        self.value = value
        self.streak = streak
        self.xp = xp
    }

    /// The same shape as a streak id.
    public static func validID(_ s: String) -> Bool { Validate.streakID(s) == nil }

    /// The twelve defaults of SPEC §9, in four categories.
    public static let defaults: [BadgeDefinition] = [
        BadgeDefinition(
            id: "streak_3", title: "Warming Up", description: "Reach a 3-day streak.", category: "streaks",
            requirement: .streakDays, value: 3),
        BadgeDefinition(
            id: "streak_7", title: "One Week Strong", description: "Reach a 7-day streak.", category: "streaks",
            requirement: .streakDays, value: 7),
        BadgeDefinition(
            id: "streak_30", title: "Habit Formed", description: "Reach a 30-day streak.", category: "streaks",
            requirement: .streakDays, value: 30),
        BadgeDefinition(
            id: "checkins_10", title: "First Steps", description: "Check in 10 times.", category: "completeness",
            requirement: .totalCheckins, value: 10),
        BadgeDefinition(
            id: "checkins_50", title: "Regular", description: "Check in 50 times.", category: "completeness",
            requirement: .totalCheckins, value: 50),
        BadgeDefinition(
            id: "checkins_100", title: "Centurion", description: "Check in 100 times.", category: "completeness",
            requirement: .totalCheckins, value: 100),
        BadgeDefinition(
            id: "social_1", title: "Better Together", description: "Make your first social check-in.",
            category: "social", requirement: .taggedCheckins(["kind": .string("social")]), value: 1),
        BadgeDefinition(
            id: "social_5", title: "Good Company", description: "Make 5 social check-ins.", category: "social",
            requirement: .taggedCheckins(["kind": .string("social")]), value: 5),
        BadgeDefinition(
            id: "social_20", title: "Social Butterfly", description: "Make 20 social check-ins.", category: "social",
            requirement: .taggedCheckins(["kind": .string("social")]), value: 20),
        BadgeDefinition(
            id: "knowledge_1", title: "Curious Mind", description: "Make your first knowledge check-in.",
            category: "knowledge", requirement: .taggedCheckins(["kind": .string("knowledge")]), value: 1),
        BadgeDefinition(
            id: "knowledge_10", title: "Bookworm", description: "Make 10 knowledge check-ins.", category: "knowledge",
            requirement: .taggedCheckins(["kind": .string("knowledge")]), value: 10),
        BadgeDefinition(
            id: "knowledge_50", title: "Scholar", description: "Make 50 knowledge check-ins.", category: "knowledge",
            requirement: .taggedCheckins(["kind": .string("knowledge")]), value: 50),
    ]
}

/// Badges, XP and levels as configured (`[[badges]]`, `[xp]`, `[levels]`).
public struct AchievementSettings: Equatable, Sendable {
    public static let defaultThresholds = [500, 1500, 4000, 10000]

    public var badges = BadgeDefinition.defaults
    /// XP for every qualifying date of every streak.
    public var xpPerDay = 10
    /// Total XP at which levels 2, 3, … begin; strictly increasing. Level 1 begins at 0 XP.
    public var levelThresholds = AchievementSettings.defaultThresholds

    public init() {}
}
