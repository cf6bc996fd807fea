import StreakCore

/// A user as stored.
public struct User: Equatable, Sendable {
    public var id: String
    /// The current zone's IANA identifier.
    public var zone: String
    /// Reminder time in force, seconds after local midnight: the fixed time, or for a user
    /// reminded at their usual hour the time `UsualHour` found in their stored history.
    public var remindAt: Int
    public var remind: Bool
    /// `--remind-at usual` (SPEC §14): `remindAt` follows the user's history.
    public var remindUsual: Bool
    /// The language of the user's messages (a BCP 47 tag such as `zh-Hans`); nil: the
    /// configuration's default language, whatever it is when a message is written.
    public var language: String?

    public init(
        id: String, zone: String, remindAt: Int = 20 * 3600, remind: Bool = true, language: String? = nil,
        remindUsual: Bool = false
    ) {
        self.id = id
        self.zone = zone
        self.remindAt = remindAt
        self.remind = remind
        self.language = language
        self.remindUsual = remindUsual
    }
}

/// A check-in to store. `meta` is a JSON object's text, or nil.
public struct NewCheckin: Equatable, Sendable {
    public var user: String
    public var streak: String
    public var instant: Instant
    public var zone: String
    public var eventID: String?
    public var meta: String?

    public init(
        user: String, streak: String, instant: Instant, zone: String, eventID: String? = nil, meta: String? = nil
    ) {
        self.user = user
        self.streak = streak
        self.instant = instant
        self.zone = zone
        self.eventID = eventID
        self.meta = meta
    }
}

/// A check-in as stored.
public struct StoredCheckin: Equatable, Sendable {
    public var instant: Instant
    public var zone: String
    public var eventID: String?
    public var storedAt: Instant

    public init(instant: Instant, zone: String, eventID: String?, storedAt: Instant) {
        self.instant = instant
        self.zone = zone
        self.eventID = eventID
        self.storedAt = storedAt
    }
}

/// One (user, streak) as stored: what a run needs to evaluate it.
public struct StoredStreak: Equatable, Sendable {
    public var userID: String
    /// The user's zone changes, oldest first; never empty (a user stored before zone
    /// history has their current zone, since the epoch).
    public var zones: [StoredZoneChange]
    public var streak: String
    public var checkins: [StoredCheckin]
    public var freezeEvents: [FreezeEvent]

    public init(
        userID: String, zones: [StoredZoneChange], streak: String, checkins: [StoredCheckin] = [],
        freezeEvents: [FreezeEvent] = []
    ) {
        self.userID = userID
        self.zones = zones
        self.streak = streak
        self.checkins = checkins
        self.freezeEvents = freezeEvents
    }

    /// `zones` as stored for the user: empty means the user's current zone all along.
    public init(
        user: User, zones: [StoredZoneChange], streak: String, checkins: [StoredCheckin] = [],
        freezeEvents: [FreezeEvent] = []
    ) {
        self.init(
            userID: user.id,
            zones: zones.isEmpty ? [StoredZoneChange(since: Instant(seconds: 0), zone: user.zone)] : zones,
            streak: streak, checkins: checkins, freezeEvents: freezeEvents)
    }
}

/// A zone a user took on at an instant.
public struct StoredZoneChange: Equatable, Sendable {
    public var since: Instant
    public var zone: String

    public init(since: Instant, zone: String) {
        self.since = since
        self.zone = zone
    }
}

/// What an insert of check-ins did.
public struct InsertResult: Equatable, Sendable {
    public var inserted = 0
    /// Check-ins whose event id was stored already (a no-op).
    public var duplicates = 0
    /// Which check-ins those were, by their place in the insert's list, in order
    /// (`HistoryWriting.insertCheckins` says it; a bulk import leaves it empty).
    public var duplicateRows: [Int] = []
    public init() {}
}
