import StreakCore

/// The schedule: each (user, streak)'s version, which every change to what decides its notices
/// moves on in the changing transaction (a check-in, a freeze event, a user or zone change, new
/// settings), and its next run, the first instant a run could find something due. A tick lists
/// the due streaks, then claims them a batch at a time in write transactions.
public protocol ScheduleReading {
    /// The streaks whose next run is due by `through`, or that changed since a run last handled
    /// them; `nil`: every streak. Each streak once, at its newest version, sorted by user and streak.
    func dueStreaks(through: Instant?) throws -> DueList
    /// What a run reads to plan due streaks, as of this snapshot, in their order; nil where the
    /// user is gone.
    func dueHistories(of streaks: [DueStreak]) throws -> [DueHistory?]
    /// Every planned run due by `through`, in the queue's order (by instant, then by schedule
    /// row), handed to `body` a batch at a time as the store reads them: a small batch first, so
    /// a reader's first results come at once. Each streak at most once; only runs planned at the
    /// streak's current version (a change to a streak drops its run, or plans a new one in the
    /// same transaction). `body` may read the store meanwhile.
    ///
    /// What a reader may build on: no notification of such a streak that the ledger does not hold
    /// yet is due before its run's instant, assuming no new check-ins. The run was planned as the
    /// first instant a run could find anything due (`Notices.firstDue`), and anything due before
    /// it was found then and recorded. So `preview` merges streaks read in this order instead of
    /// collecting every one: once the queue has been read up to instant t, what is due before t
    /// is known.
    func eachPlannedRun(through: Instant, _ body: (PlannedRuns) throws -> Void) throws
    /// The streaks with no planned run at their current version (changed since a run last
    /// handled them, and not planned again; `every`: all streaks), whose notices may be due at
    /// any time: in schedule row order, a batch at a time, each as `dueStreaks` lists it.
    func eachUnplannedStreak(every: Bool, _ body: ([DueStreak]) throws -> Void) throws
}

public protocol ScheduleWriting {
    /// Claims listed streaks for this transaction. Answers, for each, the streak as claimed, or
    /// nil when it is not this run's to plan: another run holds it (skipped at once, never waited
    /// for), it changed since it was listed (its newer version is due for a later run), it is
    /// gone, or it is no longer due by `now` (another run handled it). A claimed streak stays
    /// this run's until the transaction ends: no other run claims or changes it meanwhile.
    func claim(_ streaks: [DueStreak], listed: DueList.Mark?, now: Instant) throws -> [DueStreak?]
    /// Plans each claimed streak's next run (nil: none until it changes) and notes that a run
    /// handled it through `handledThrough`.
    func schedule(_ runs: [PlannedRun], handledThrough: Instant) throws
    /// Plans the next run of streaks this transaction changed (a check-in, an import) at their
    /// current version, so readers of the queue find them there rather than among the unplanned.
    /// They stay marked: the next run still looks at them afresh (`dueStreaks` lists them) and
    /// plans them again. Each names its streak by its ids; `next` nil: nothing can come until it
    /// changes again. A streak no longer marked (a run handled it since) is left as it is.
    func planChanged(_ runs: [PlannedRun]) throws
    /// Marks every streak for a fresh look on the next run (the configuration changed).
    func rescheduleAll() throws
    /// Keeps every other writer off a streak until this transaction ends, for a check-then-act
    /// (a freeze granted or used, a refill): two at once then act once. A store whose write
    /// transactions exclude each other already does nothing more.
    func lockStreak(user: String, streak: String) throws
}

/// The due streaks as listed, and the store's mark of when.
public struct DueList: RandomAccessCollection, Sendable {
    /// What the store noted when it listed them: with it, a claim may tell that nothing but this
    /// run has written since, and take each streak as listed without looking it up again.
    public struct Mark: Sendable, Equatable {
        public var value: Int64
        public init(_ value: Int64) { self.value = value }
    }

    public var streaks: [DueStreak]
    public var mark: Mark?

    public init(_ streaks: [DueStreak], mark: Mark? = nil) {
        self.streaks = streaks
        self.mark = mark
    }

    public var startIndex: Int { streaks.startIndex }
    public var endIndex: Int { streaks.endIndex }
    public subscript(i: Int) -> DueStreak { streaks[i] }
}

/// A streak's user and history as a run read them to plan it.
public struct DueHistory: Sendable {
    public var user: User
    public var stored: StoredStreak
    /// Whether the store answered from a copy it keeps (`schedule` keeps one of a history read
    /// from its tables, for later runs, until the streak changes).
    public var fromCopy: Bool

    public init(user: User, stored: StoredStreak, fromCopy: Bool) {
        self.user = user
        self.stored = stored
        self.fromCopy = fromCopy
    }
}

/// A claimed streak's next run.
public struct PlannedRun: Sendable {
    public var streak: DueStreak
    public var next: Instant?
    /// What the run read for it from the tables (the store may keep a copy); nil when the run
    /// read the copy the store keeps.
    public var history: DueHistory?
    /// The user as the run read them: a store may keep their zone and reminder settings with the
    /// planned run, beside its copy of the history, for readers of the queue (`eachPlannedRun`).
    public var user: User?

    public init(streak: DueStreak, next: Instant?, history: DueHistory?, user: User? = nil) {
        self.streak = streak
        self.next = next
        self.history = history
        self.user = user ?? history?.user
    }
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
    /// planning its next run clears the mark.
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

    /// The id of its schedule row in the store, when listed from there (a shortcut to it).
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
