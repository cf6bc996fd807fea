import StreakCore

/// What `status` without an ID shows of a whole store (like `systemctl status`): counts and the
/// deliveries that need an operator's eye. Reads only; a scan of a table is fine here (a rare
/// command), but nothing a tick runs uses these.
public protocol OverviewReading {
    /// How many users there are, and how many of them get reminders.
    func userCounts() throws -> UserCounts
    /// How many (user, streak) pairs the store keeps a schedule for.
    func streakCount() throws -> Int
    /// How many deliveries are in `state`.
    func deliveryCount(_ state: DeliveryState) throws -> Int
    /// Up to `limit` deliveries in `state`, the most recently attempted first (never attempted
    /// ones last, by due instant), with their last error.
    func deliveries(_ state: DeliveryState, limit: Int) throws -> [DeliveryRecord]
    /// Pending deliveries whose notification was due before `instant` (`status --check`).
    func pendingDeliveries(dueBefore instant: Instant) throws -> Int
    /// The ledger's notifications by kind and state (`sent`, `expired`), for the metrics: every
    /// one ever recorded, those of users removed since included (`removeUser` keeps their
    /// counts), so that the counter never goes down.
    func notificationCounts() throws -> [PairCount]
    /// Deliveries by sink and state, for the metrics.
    func deliveryCounts() throws -> [PairCount]
}

/// How many records share two labels (a kind and a state, a sink and a state).
public struct PairCount: Equatable, Sendable {
    public var first: String
    public var second: String
    public var count: Int

    public init(_ first: String, _ second: String, count: Int) {
        self.first = first
        self.second = second
        self.count = count
    }
}

/// Users in all, and those with reminders on.
public struct UserCounts: Equatable, Sendable {
    public var users: Int
    public var reminded: Int

    public init(users: Int, reminded: Int) {
        self.users = users
        self.reminded = reminded
    }
}

/// One sink's delivery of one notification, as the ledger has it.
public struct DeliveryRecord: Equatable, Sendable {
    public var notification: Notification
    public var sink: String
    public var state: DeliveryState
    public var attempts: Int
    public var lastAttempt: Instant?
    public var lastError: String?

    public init(
        notification: Notification, sink: String, state: DeliveryState, attempts: Int, lastAttempt: Instant?,
        lastError: String?
    ) {
        self.notification = notification
        self.sink = sink
        self.state = state
        self.attempts = attempts
        self.lastAttempt = lastAttempt
        self.lastError = lastError
    }
}

/// The keys streakd keeps in the store's meta (`MetaReading`), in one place.
public enum MetaKey {
    /// The store's identity: 32 lowercase hex digits (128 random bits), written once by the
    /// migration that brought it and never changed. Journal entries carry it as `STREAKD_STORE`.
    public static let storeID = "store_id"
    /// What the last `tick` did (`RunSummary` as JSON).
    public static let lastTick = "last_tick"
    /// What the last `refill` did (`RunSummary` as JSON).
    public static let lastRefill = "last_refill"
    /// The settings that decide notices, as the last run saw them.
    public static let noticeSettings = "notice-settings"
    /// `reminders.usual_earliest` and `usual_latest` (SPEC §14) as the usual users' reminder times
    /// were last worked out by ("08:00-21:00"; none: no usual hour worked out yet).
    public static let usualBounds = "usual-bounds"
    /// The prefix of the counts of removed users' notifications, one key a kind and state
    /// (`removed-notifications:at_risk:sent` = "12"): `notificationCounts` adds them.
    public static let removedNotifications = "removed-notifications:"
}

extension MetaReading {
    /// The store's identity (`MetaKey.storeID`); nil in a store no migration has given one yet.
    public func storeID() throws -> String? { try meta(MetaKey.storeID) }
}
