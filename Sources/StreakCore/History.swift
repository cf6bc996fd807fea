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

/// Something that changed a streak's freeze count.
public struct FreezeEvent: Equatable, Sendable {
    public enum Kind: Equatable, Sendable {
        case grant
        case refill
        case use(LocalDate)
    }
    public var at: Instant
    public var kind: Kind
    public init(at: Instant, kind: Kind) {
        self.at = at
        self.kind = kind
    }
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

    /// The user's zone at an instant.
    public func zone(at instant: Instant) -> Zone {
        var found = zones[0].zone
        for z in zones.dropFirst() where z.since <= instant { found = z.zone }
        return found
    }
}
