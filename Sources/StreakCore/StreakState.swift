/// What became of a date.
public enum DayMark: String, Sendable {
    case qualifying
    case frozen
    case missed
    /// Skipped by travel: neither missed nor counted.
    case bridged
    /// A rest day that did not qualify (SPEC §14): bridged.
    case rest
    /// A paused date that did not qualify (SPEC §14): bridged.
    case paused
    /// A date a repair mended (SPEC §14): keeps the run alive, adds no day.
    case repaired
    /// Not ended and not qualifying yet.
    case open
}

/// A date that ended without qualifying while a streak was alive.
public struct Settlement: Equatable, Sendable {
    public enum Kind: String, Sendable {
        case freezeUsed = "freeze_used"
        case streakBroken = "streak_broken"
        /// A repair mended the break on `date` (`at`: the repair's instant; `length`: restored).
        case streakRepaired = "streak_repaired"
    }
    public var kind: Kind
    public var date: LocalDate
    /// When the date ended.
    public var at: Instant
    /// The length of the streak the date was about.
    public var length: Int
    /// Freezes left just after it.
    public var freezesLeft: Int

    public init(kind: Kind, date: LocalDate, at: Instant, length: Int, freezesLeft: Int = 0) {
        self.kind = kind
        self.date = date
        self.at = at
        self.length = length
        self.freezesLeft = freezesLeft
    }
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
    public var marks: DayMarks
    /// Each qualifying date with the instant of the check-in that made it qualify (its goal-th
    /// after leeway), in instant order. Achievements (XP, unlock instants) start from these.
    public var qualified: [(at: Instant, date: LocalDate)]
    /// When streakd first stored a check-in for this streak.
    public var firstStored: Instant?
    /// When the first date not ended yet ends, in the user's zone at the evaluation instant
    /// (a later zone change can move it).
    public var nextEnd: Instant

    public func mark(_ date: LocalDate) -> DayMark? { marks[date] }

    /// The length of the streak alive through the day before an open date `date` (≤ today):
    /// the ended run plus the open dates before `date` that qualify.
    public func aliveBefore(_ date: LocalDate) -> Int {
        var n = aliveBeforeToday
        var d = date
        while d < today {
            if marks[d] == .qualifying { n -= 1 }
            d = d + 1
        }
        return n
    }

    /// Today qualifies already, is frozen, rests or is paused, or a later date qualifies (flew west).
    public var todaySafe: Bool {
        if let m = marks[today], m == .qualifying || m == .frozen || m == .rest || m == .paused { return true }
        if let l = lastQualifying, l > today { return true }
        return false
    }
}
