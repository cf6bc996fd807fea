/// What became of a date.
public enum DayMark: String, Sendable {
    case qualifying
    case frozen
    case missed
    /// Skipped by travel: neither missed nor counted.
    case bridged
    /// Not ended and not qualifying yet.
    case open
}

/// A date that ended without qualifying while a streak was alive.
public struct Settlement: Equatable, Sendable {
    public enum Kind: String, Sendable {
        case freezeUsed = "freeze_used"
        case streakBroken = "streak_broken"
    }
    public var kind: Kind
    public var date: LocalDate
    /// When the date ended.
    public var at: Instant
    /// The length of the streak the date was about.
    public var length: Int
}

/// A streak as of one instant, with every ended date settled.
public struct StreakState: Sendable {
    public var today: LocalDate
    /// The latest ended date.
    public var endedThrough: LocalDate
    public var current: Int
    public var longest: Int
    /// The current streak without today: the length at risk today.
    public var aliveBeforeToday: Int
    public var freezes: Int
    public var todayCount: Int
    public var goal: Int
    public var totalCheckins: Int
    public var lastQualifying: LocalDate?
    public var settlements: [Settlement]
    public var marks: [LocalDate: DayMark]
    /// When streakd first stored a check-in for this streak.
    public var firstStored: Instant?

    public func mark(_ date: LocalDate) -> DayMark? { marks[date] }

    /// Today qualifies already, is frozen, or a later date qualifies (flew west).
    public var todaySafe: Bool {
        if let m = marks[today], m == .qualifying || m == .frozen { return true }
        if let l = lastQualifying, l > today { return true }
        return false
    }
}
