import StreakCore

/// What decides a streak: the user's zone history, check-ins, freeze events and the settings
/// seen for the streak id.
public protocol HistoryReading {
    func zoneHistory(of user: String) throws -> [StoredZoneChange]
    /// The streak ids a user has check-ins or freeze events for, sorted.
    func streaks(of user: String) throws -> [String]
    func checkins(of user: String, streak: String) throws -> [StoredCheckin]
    func freezeEvents(of user: String, streak: String) throws -> [FreezeEvent]
    func settingsEpochs(of streak: String) throws -> [SettingsEpoch]
    /// For each of `users`, in order: what their badges need beyond one streak's history
    /// (SPEC §9), read at once for many users.
    func achievementFacts(of users: [String]) throws -> [AchievementFacts]
}

/// A user's streaks (each as a run would list it, for `ScheduleReading.dueHistories`) and their
/// check-ins that carry metadata, which tagged badges count.
public struct AchievementFacts: Sendable {
    /// Sorted by streak id.
    public var streaks: [DueStreak]
    /// Sorted by streak and instant.
    public var tagged: [TaggedCheckin]

    public init(streaks: [DueStreak] = [], tagged: [TaggedCheckin] = []) {
        self.streaks = streaks
        self.tagged = tagged
    }
}

/// A check-in's metadata as stored (a JSON object's text), with its streak and instant.
public struct TaggedCheckin: Equatable, Sendable {
    public var streak: String
    public var instant: Instant
    public var meta: String

    public init(streak: String, instant: Instant, meta: String) {
        self.streak = streak
        self.instant = instant
        self.meta = meta
    }
}

extension HistoryReading {
    /// One (user, streak) read whole.
    public func storedStreak(of user: User, streak: String) throws -> StoredStreak {
        StoredStreak(
            user: user, zones: try zoneHistory(of: user.id), streak: streak,
            checkins: try checkins(of: user.id, streak: streak),
            freezeEvents: try freezeEvents(of: user.id, streak: streak))
    }
}

/// Adding to a history. Each write moves the streak's version on in the same transaction
/// (`ScheduleWriting`): a run that read the streak before it plans nothing for that version.
public protocol HistoryWriting {
    /// Stores check-ins; one whose (user, event id) is stored already is a no-op (a unique key),
    /// listed in the result's `duplicateRows` (one listed twice: the first stored, the other not).
    func insertCheckins(_ checkins: [NewCheckin], storedAt: Instant) throws -> InsertResult
    func addFreezeEvent(_ event: FreezeEvent, user: String, streak: String) throws
    /// Removes a stored event equal to `event` (its instant, kind and dates): a pause that a
    /// `resume` ends or drops (SPEC §14).
    func removeFreezeEvent(_ event: FreezeEvent, user: String, streak: String) throws
    /// Records the goal, leeway and rest days seen for a streak id, when they differ from the last record.
    func recordSettings(_ epoch: SettingsEpoch, streak: String) throws
}

/// How both engines keep a freeze event (`freeze_events.kind`, `.date`, `.until_date`): `grant`,
/// `refill`, `use` with the used date's day number, `pause` and `repair` with their first and
/// last dates' (and their `author`).
extension FreezeEvent {
    public var stored: (kind: String, date: Int?, until: Int?) {
        switch kind {
        case .grant: ("grant", nil, nil)
        case .refill: ("refill", nil, nil)
        case .use(let d): ("use", d.day, nil)
        case .pause(let from, let until): ("pause", from.day, until.day)
        case .repair(let from, let until): ("repair", from.day, until.day)
        }
    }

    /// The event a stored row holds; `date` is asked only for a use, a pause or a repair, `until`
    /// and `author` only for the last two (a span without its end is one date).
    public init(
        at: Instant, stored kind: String, date: () throws -> Int, until: () throws -> Int? = { nil },
        author: () throws -> String? = { nil }
    ) rethrows {
        switch kind {
        case "grant": self.init(at: at, kind: .grant)
        case "refill": self.init(at: at, kind: .refill)
        case "pause", "repair":
            let from = LocalDate(day: try date())
            let last = try until().map { LocalDate(day: $0) } ?? from
            self.init(
                at: at, kind: kind == "pause" ? .pause(from: from, until: last) : .repair(from: from, until: last),
                author: try author())
        default: self.init(at: at, kind: .use(LocalDate(day: try date())))
        }
    }
}
