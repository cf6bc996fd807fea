import StreakCore

/// One notification as the ledger keeps it: the key (kind, user, streak, local date) and what
/// every sink is given.
public struct LedgerEntry: Equatable, Sendable {
    public var key: String
    public var kind: String
    public var user: String
    public var streak: String
    public var localDate: LocalDate
    public var due: Instant
    public var timezone: String
    public var localDue: String
    public var length: Int
    public var message: String

    public init(
        key: String, kind: String, user: String, streak: String, localDate: LocalDate, due: Instant,
        timezone: String, localDue: String, length: Int, message: String
    ) {
        self.key = key
        self.kind = kind
        self.user = user
        self.streak = streak
        self.localDate = localDate
        self.due = due
        self.timezone = timezone
        self.localDue = localDue
        self.length = length
        self.message = message
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
    public var entry: LedgerEntry
    public var sink: String
    public var attempts: Int
    public var lastAttempt: Instant?
    /// The run delivering it now, if any.
    public var owner: String?
}

/// A (user, streak) whose next notice may be due. Kept small: after an import every streak is
/// due at once, and a run holds the list (optionals are stored without their flag byte).
public struct DueStreak: Equatable, Sendable {
    public var user: String
    public var streak: String
    private var handled: Int64
    private var rowid: Int64
    private var versionBits: Int32
    /// Whether its row is marked changed (it came from the mark, not only from a planned run):
    /// recording its next run clears the mark.
    public var marked: Bool

    /// Moves on with every change to the streak. Kept in 32 bits: two billion changes to one streak.
    public var version: Int {
        get { Int(versionBits) }
        set { versionBits = Int32(truncatingIfNeeded: newValue) }
    }

    /// The `now` of the last run that handled it.
    public var handledThrough: Instant? {
        get { handled == .min ? nil : Instant(seconds: handled) }
        set { handled = newValue?.seconds ?? .min }
    }

    /// Where the store keeps its schedule row, when it read it from there (a shortcut to it).
    public var row: Int64? {
        get { rowid == .min ? nil : rowid }
        set { rowid = newValue ?? .min }
    }

    public init(
        user: String, streak: String, handledThrough: Instant? = nil, version: Int = 0, row: Int64? = nil,
        marked: Bool = false
    ) {
        self.user = user
        self.streak = streak
        self.handled = handledThrough?.seconds ?? .min
        self.rowid = row ?? .min
        self.versionBits = Int32(truncatingIfNeeded: version)
        self.marked = marked
    }
}
