import StreakCore

/// The delivery ledger: every notification recorded once under its key (a unique key decides
/// which of two runs records it), with a delivery row per sink that takes it.
public protocol LedgerReading {
    /// Which of these notification keys are recorded, sent or expired.
    func ledgerStates(keys: [String]) throws -> [String: LedgerState]
    /// Calls `body` with the parts of the key of every notification recorded about a date in
    /// `dates` (kind, user, streak, date), in no particular order: one read of a part of the
    /// ledger's unique key, where asking key by key is a lookup each (`preview` asks about every
    /// notice of its window, most of them not recorded).
    func eachLedgerKey(
        dates: ClosedRange<LocalDate>, _ body: (_ kind: String, _ user: String, _ streak: String, _ date: LocalDate) throws -> Void
    ) throws
    /// Deliveries in state `pending`, oldest due first.
    func pendingDeliveries() throws -> [PendingDelivery]
    /// Deliveries by state, for one key.
    func deliveryStates(key: String) throws -> [String: DeliveryState]
    /// Pending deliveries no run is working on: waiting for another try.
    func waitingDeliveries() throws -> Int
    /// Pending deliveries a run holds: one delivering them now, or one that died or was stopped
    /// and holds them until it is known gone or its lease runs out.
    func heldDeliveries() throws -> Int
}

extension LedgerReading {
    public func heldDeliveries() throws -> Int { try pendingDeliveries().count { $0.owner != nil } }
}

public protocol LedgerWriting {
    /// Records notifications, each with a delivery row per sink it names: `pending` and owned by
    /// `owner` when sent, `expired` when too old. Answers each one's ledger id, or nil, writing
    /// nothing for it, where its key is recorded already (by this run or another).
    func record(_ items: [NewRecord], owner: String?, at: Instant) throws -> [Int64?]
    /// Takes a pending delivery over from `from` (nil: nobody) by compare-and-set: only while
    /// `from` still owns it and, unless `fromGone` (the caller knows that run has ended), `from`'s
    /// lease has run out on the store's clock (`RunRegistry`). False when it is not to be had.
    func takeOver(id: Int64, sink: String, from: String?, fromGone: Bool, to owner: String) throws -> Bool
    /// Ends an attempt at the deliveries to `sink` of the ledger entries `ids` (every id in the
    /// range): the new state, the attempts made in all, and the error if it failed. With `owner`,
    /// only those that run still holds (compare-and-set: a run that lost them to a take-over while
    /// it was stopped writes nothing). `retryAt`: no try before then (a server's `Retry-After`).
    func finish(
        ids: ClosedRange<Int64>, sink: String, state: DeliveryState, attempts: Int, at: Instant, error: String?,
        owner: String?, retryAt: Instant?
    ) throws
    /// Puts the dead deliveries that `filter` takes back to pending, their attempts at 0, for the
    /// next run (`streakd deliveries retry`, SPEC §12); answers how many. Nothing delivered changes.
    func reviveDead(_ filter: DeadFilter) throws -> Int
    /// Gives up `owner`'s claim on its pending deliveries (a run ending before it tried them all),
    /// for the next run to take at once.
    func release(owner: String) throws
}

extension LedgerWriting {
    public func finish(
        ids: ClosedRange<Int64>, sink: String, state: DeliveryState, attempts: Int, at: Instant, error: String?,
        owner: String?
    ) throws {
        try finish(ids: ids, sink: sink, state: state, attempts: attempts, at: at, error: error, owner: owner, retryAt: nil)
    }

    /// Ends an attempt at one delivery.
    public func finish(
        id: Int64, sink: String, state: DeliveryState, attempts: Int, at: Instant, error: String?,
        owner: String? = nil
    ) throws {
        try finish(ids: id...id, sink: sink, state: state, attempts: attempts, at: at, error: error, owner: owner)
    }

    public func finish(
        ids: ClosedRange<Int64>, sink: String, state: DeliveryState, attempts: Int, at: Instant, error: String?
    ) throws {
        try finish(ids: ids, sink: sink, state: state, attempts: attempts, at: at, error: error, owner: nil)
    }

    /// Records one notification; nil when its key is recorded already.
    public func record(_ item: NewRecord, owner: String?, at: Instant) throws -> Int64? {
        try record([item], owner: owner, at: at)[0]
    }
}

/// A notification key's parts, as ledgers index them: "kind/user/streak/date" (user and streak
/// ids hold no '/').
public struct LedgerKey: Equatable, Sendable {
    public var localDate: LocalDate
    public var kind: Substring
    public var user: Substring
    public var streak: Substring

    /// `KIND/USER/STREAK/DATE`, or for an achievement `KIND/USER/SUBJECT`: kept with the subject
    /// as its streak and day 0 as its date, so the unique key holds it once ever.
    public init?(_ key: String) {
        // By the bytes, with no array: a run asks the ledger about every notice it plans.
        let utf8 = key.utf8
        var cuts = (key.startIndex, key.startIndex, key.startIndex)
        var found = 0
        for i in utf8.indices where utf8[i] == UInt8(ascii: "/") {
            switch found {
            case 0: cuts.0 = i
            case 1: cuts.1 = i
            case 2: cuts.2 = i
            default: return nil
            }
            found += 1
        }
        if found == 2, NotificationKind(rawValue: String(key[..<cuts.0]))?.isAchievement == true {
            kind = key[..<cuts.0]
            user = key[utf8.index(after: cuts.0)..<cuts.1]
            streak = key[utf8.index(after: cuts.1)...]
            localDate = Notification.achievementDate
            return
        }
        guard found == 3, let date = LocalDate(key[utf8.index(after: cuts.2)...]) else { return nil }
        kind = key[..<cuts.0]
        user = key[utf8.index(after: cuts.0)..<cuts.1]
        streak = key[utf8.index(after: cuts.1)..<cuts.2]
        localDate = date
    }
}

/// How the ledger's columns hold a notification: an achievement (SPEC §9) keeps its subject
/// (the badge, the level) in the streak column and day 0 in the local date, as `LedgerKey` looks
/// it up; its local date is read back from its local due instant.
extension Notification {
    /// The local date column of an achievement: one value, so its key stands once ever.
    public static let achievementDate = LocalDate(day: 0)

    /// The streak column.
    public var ledgerStreak: String { kind.isAchievement ? subject ?? "" : streak }
    /// The local date column.
    public var ledgerDate: LocalDate { kind.isAchievement ? Self.achievementDate : localDate }

    /// A notification from the ledger's columns.
    public static func fromLedger(
        kind: NotificationKind, user: String, streak: String, localDate: LocalDate, due: Instant, timezone: String,
        localDue: String, streakLength: Int, message: String, title: String?
    ) -> Notification {
        var n = Notification(
            kind: kind, user: user, streak: streak, localDate: localDate, due: due, timezone: timezone,
            localDue: localDue, streakLength: streakLength, message: message, title: title)
        guard kind.isAchievement else { return n }
        n.streak = ""
        if kind == .badgeUnlocked { n.badge = streak } else { n.level = Int(streak) }
        n.localDate = LocalDate(localDue.prefix(10)) ?? localDate
        return n
    }
}

/// A notification to record, and the sinks it goes to.
public struct NewRecord: Sendable {
    public var notification: Notification
    public var state: LedgerState
    public var sinks: [String]

    public init(_ notification: Notification, state: LedgerState, sinks: [String]) {
        self.notification = notification
        self.state = state
        self.sinks = sinks
    }
}

/// Whether a notification was meant to be sent, or was too old and only recorded.
public enum LedgerState: String, Sendable {
    case sent
    case expired
}

/// One sink's state for one notification.
public enum DeliveryState: String, Sendable, CaseIterable {
    case pending
    case delivered
    case expired
    case dead
}

/// A delivery not done yet: new, failed before, or left by a run that stopped.
public struct PendingDelivery: Equatable, Sendable {
    /// The ledger id of its notification.
    public var id: Int64
    public var notification: Notification
    public var sink: String
    public var attempts: Int
    public var lastAttempt: Instant?
    /// The run delivering it now, if any.
    public var owner: String?
    /// No try before this instant (a server's `Retry-After`), if set.
    public var retryAt: Instant?

    public init(
        id: Int64, notification: Notification, sink: String, attempts: Int, lastAttempt: Instant?, owner: String?,
        retryAt: Instant? = nil
    ) {
        self.retryAt = retryAt
        self.id = id
        self.notification = notification
        self.sink = sink
        self.attempts = attempts
        self.lastAttempt = lastAttempt
        self.owner = owner
    }
}

/// Which dead deliveries `streakd deliveries retry` takes: every one by default.
public struct DeadFilter: Equatable, Sendable {
    /// The sink's ledger name (`webhook:phone`, `hook:log`, `journal`).
    public var sink: String?
    public var kind: NotificationKind?
    public var user: String?
    /// Only those given up at or after this instant (their last attempt).
    public var since: Instant?

    public init(sink: String? = nil, kind: NotificationKind? = nil, user: String? = nil, since: Instant? = nil) {
        self.sink = sink
        self.kind = kind
        self.user = user
        self.since = since
    }
}
