/// A stored check-in as the engine sees it.
public struct CheckIn: Sendable {
    public var instant: Instant
    public var zone: Zone
    public var id: String?
    /// When streakd first stored it (decides the backfill cap).
    public var storedAt: Instant

    public init(instant: Instant, zone: Zone, id: String? = nil, storedAt: Instant) {
        self.instant = instant
        self.zone = zone
        self.id = id
        self.storedAt = storedAt
    }
}

/// From `since` on, the user's zone was `zone`.
public struct ZoneChange: Sendable {
    public var since: Instant
    public var zone: Zone
    public init(since: Instant, zone: Zone) {
        self.since = since
        self.zone = zone
    }
}

/// Something that changed a streak's freeze count, or that bridged or mended its dates (SPEC
/// §14): the events a person records for a streak, each with its instant (and, for a pause or a
/// repair, its author). docs/ARCHITECTURE.md, "streak events".
public struct FreezeEvent: Equatable, Sendable {
    public enum Kind: Equatable, Sendable {
        case grant
        case refill
        case use(LocalDate)
        /// Dates `from` through `until` (both included) are paused: bridged.
        case pause(from: LocalDate, until: LocalDate)
        /// The break on `from` mended: `from` through `until` (the day before the repair's today)
        /// are repaired where they do not qualify. Void once `from` qualifies.
        case repair(from: LocalDate, until: LocalDate)
    }
    public var at: Instant
    public var kind: Kind
    /// Who recorded it (a pause or a repair): the login name, or the API token's name.
    public var author: String?
    public init(at: Instant, kind: Kind, author: String? = nil) {
        self.at = at
        self.kind = kind
        self.author = author
    }

    /// Whether it changes the freeze count (a grant, refill or use).
    public var isFreeze: Bool {
        switch kind {
        case .grant, .refill, .use: true
        case .pause, .repair: false
        }
    }

    /// Whether it is a pause (kept or not: see `pausedDates`).
    public var isPause: Bool {
        if case .pause = kind { true } else { false }
    }

    /// The dates a pause bridges, when the engine keeps it (`DateSpan.pause`). Nil for any other event.
    public var pausedDates: DateSpan? {
        guard case .pause(let from, let until) = kind else { return nil }
        return DateSpan.pause(from: from, until: until)
    }
}

/// A span of dates, both ends included.
public struct DateSpan: Equatable, Sendable {
    public var from: LocalDate
    public var until: LocalDate
    public init(from: LocalDate, until: LocalDate) {
        self.from = from
        self.until = until
    }
    /// The dates a pause from `from` through `until` bridges, when the engine keeps it: in order,
    /// both ends within `LocalDate.plausible` (a damaged store's spans are left out).
    public static func pause(from: LocalDate, until: LocalDate) -> DateSpan? {
        guard from <= until, LocalDate.plausible.contains(from), LocalDate.plausible.contains(until) else { return nil }
        return DateSpan(from: from, until: until)
    }
    public func contains(_ d: LocalDate) -> Bool { from <= d && d <= until }
    public var count: Int { until - from + 1 }
}

/// Everything the engine needs to know about one (user, streak).
public struct StreakHistory: Sendable {
    public var checkins: [CheckIn]
    /// The user's zones over time, oldest first; never empty. The first one
    /// also applies before its `since`.
    public var zones: [ZoneChange]
    public var freezeEvents: [FreezeEvent]
    public var epochs: [SettingsEpoch]
    public var settings: StreakSettings
    public var backfillDays: Int

    public init(
        checkins: [CheckIn], zones: [ZoneChange], freezeEvents: [FreezeEvent] = [],
        epochs: [SettingsEpoch] = [], settings: StreakSettings = StreakSettings(), backfillDays: Int = 90
    ) {
        self.checkins = checkins
        self.zones = zones
        self.freezeEvents = freezeEvents
        self.epochs = epochs
        self.settings = settings
        self.backfillDays = backfillDays
    }

    /// The streak's pauses the engine keeps (`FreezeEvent.pausedDates`), in date order (SPEC §14).
    public var pauses: [DateSpan] { freezeEvents.compactMap(\.pausedDates).sorted { $0.from < $1.from } }

    /// The streak's repairs with their instants, in instant order.
    public var repairs: [(at: Instant, span: DateSpan)] {
        freezeEvents.compactMap { e -> (at: Instant, span: DateSpan)? in
            guard case .repair(let from, let until) = e.kind, from <= until else { return nil }
            return (e.at, DateSpan(from: from, until: until))
        }.sorted { $0.at < $1.at }
    }

    /// The user's zone at an instant.
    public func zone(at instant: Instant) -> Zone {
        var found = zones[0].zone
        for z in zones.dropFirst() where z.since <= instant { found = z.zone }
        return found
    }
}
