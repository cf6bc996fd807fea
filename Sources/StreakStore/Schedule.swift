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
    /// The streaks not marked changed whose planned run is due by `through`, in the order of their
    /// runs: by instant, then by schedule row (`RunPosition`), from just after `after` (nil: the
    /// front of the queue), at most `limit`. Only runs planned at the streak's current version.
    /// Paging through one read transaction sees each such streak exactly once, in that order.
    ///
    /// What a reader may build on: no notification of such a streak that the ledger does not hold
    /// yet is due before its run's instant, assuming no new check-ins. The run was planned as the
    /// first instant a run could find anything due (`Notices.next`), and anything due before the
    /// run that planned it was found then and recorded. So `preview` merges streaks read in this
    /// order instead of collecting every one: once the queue has been read up to instant t, what
    /// is due before t is known.
    func plannedStreaks(through: Instant, after: RunPosition?, limit: Int) throws -> [PlannedStreak]
    /// The same runs as `plannedStreaks`, each handed to `plan` as it is read, its texts and bytes
    /// in place (`RunInPlace`: valid during the call only), with no value made of it. Answers the
    /// last run's position (nil: none), and the runs `plan` did not take (it answered false) as
    /// `plannedStreaks` would. `plan` may read the store meanwhile.
    func eachPlannedRun(through: Instant, after: RunPosition?, limit: Int, _ plan: (RunInPlace) throws -> Bool) throws
        -> (last: RunPosition?, unplanned: [PlannedStreak])
    /// Every streak `plannedStreaks` pages through by `through`, in the same order, handed to
    /// `body` a batch at a time: `first` streaks, then twice as many each time up to `most`.
    /// `body` may read the store meanwhile. A store may read them in one statement rather than
    /// in pages (PostgreSQL: one COPY on a second connection, at this transaction's snapshot).
    func eachPlannedStreak(through: Instant, first: Int, most: Int, _ body: ([PlannedStreak]) throws -> Void) throws
    /// The streaks marked changed since a run last handled them (`every`: all streaks), which have
    /// no valid planned run: their notices may be due at any time. In schedule row order, from
    /// just after row `after`, at most `limit`, each as `dueStreaks` lists it.
    func changedStreaks(every: Bool, after: Int64?, limit: Int) throws -> [DueStreak]
    /// Called every few hundred streaks by a caller working through a page: a server's store
    /// takes in what it asked for ahead (the next page of `plannedStreaks`, which a server sends
    /// while the caller plans this one), so the server is not held up by a full socket, and keeps
    /// a transaction that sent nothing for long from being ended as idle (`eachPlannedStreak`
    /// reads on another connection meanwhile). Never waits long; never fails (a broken
    /// connection is found by the next statement).
    func keepUp()
}

extension ScheduleReading {
    /// A store that reads nothing ahead and never ends a transaction as idle (SQLite).
    public func keepUp() {}

    /// By a page of `plannedStreaks`.
    public func eachPlannedRun(
        through: Instant, after: RunPosition?, limit: Int, _ plan: (RunInPlace) throws -> Bool
    ) throws -> (last: RunPosition?, unplanned: [PlannedStreak]) {
        let page = try plannedStreaks(through: through, after: after, limit: limit)
        return (page.last?.position, try page.filter { try !$0.withRun(plan) })
    }

    public func eachPlannedStreak(through: Instant, first: Int, most: Int, _ body: ([PlannedStreak]) throws -> Void)
        throws
    {
        try pagePlannedStreaks(through: through, first: first, most: most, body)
    }

    /// `eachPlannedStreak` by pages of `plannedStreaks`.
    public func pagePlannedStreaks(through: Instant, first: Int, most: Int, _ body: ([PlannedStreak]) throws -> Void)
        throws
    {
        var position: RunPosition?
        var limit = first
        while true {
            let page = try plannedStreaks(through: through, after: position, limit: limit)
            guard let last = page.last else { return }
            try body(page)
            position = last.position
            limit = min(2 * limit, most)
        }
    }
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

/// A place in the queue of planned runs: a run's instant, then its schedule row.
public struct RunPosition: Comparable, Sendable {
    public var at: Instant
    public var row: Int64

    public init(at: Instant, row: Int64) {
        self.at = at
        self.row = row
    }

    public static func < (a: RunPosition, b: RunPosition) -> Bool { (a.at, a.row) < (b.at, b.row) }
}

/// A streak due by its planned run, and where that run stands in the queue.
public struct PlannedStreak: Sendable {
    public var streak: DueStreak
    public var position: RunPosition
    /// What a run reads to plan it, when the store keeps that with the run (one read of the queue
    /// then needs no lookup of each streak); nil: ask `dueHistories`.
    public var carried: CarriedHistory?

    public init(streak: DueStreak, position: RunPosition, carried: CarriedHistory? = nil) {
        self.streak = streak
        self.position = position
        self.carried = carried
    }
}

extension PlannedStreak {
    /// `body` with this run in place.
    public func withRun<T>(_ body: (RunInPlace) throws -> T) throws -> T {
        var (user, streak) = (streak.user, streak.streak)
        return try user.withUTF8 { user in
            try streak.withUTF8 { streak in
                func run(_ carried: RunInPlace.Carried?) throws -> T {
                    try body(
                        RunInPlace(
                            user: UnsafeRawBufferPointer(user), streak: UnsafeRawBufferPointer(streak), position: position,
                            carried: carried))
                }
                guard let carried else { return try run(nil) }
                return try carried.packed.withUnsafeBytes { history in
                    func with(_ language: UnsafeRawBufferPointer?) throws -> T {
                        try run(
                            RunInPlace.Carried(
                                remindAt: carried.user.remindAt, remind: carried.user.remind, language: language,
                                history: history))
                    }
                    guard var language = carried.user.language else { return try with(nil) }
                    return try language.withUTF8 { try with(UnsafeRawBufferPointer($0)) }
                }
            }
        }
    }
}

/// A planned run as a store reads it, its texts and bytes in place: valid only during the call it
/// is handed to (`ScheduleReading.eachPlannedRun`). A reader of a million runs takes what it
/// needs from the bytes; the store makes a `PlannedStreak` of the few it cannot take.
public struct RunInPlace {
    public var user: UnsafeRawBufferPointer
    public var streak: UnsafeRawBufferPointer
    public var position: RunPosition
    /// What the run carries (`CarriedHistory`; its user's zone is the history's own), nil when
    /// nothing.
    public var carried: Carried?

    public struct Carried {
        public var remindAt: Int
        public var remind: Bool
        public var language: UnsafeRawBufferPointer?
        /// The packed history (`PackedHistory`).
        public var history: UnsafeRawBufferPointer

        public init(remindAt: Int, remind: Bool, language: UnsafeRawBufferPointer?, history: UnsafeRawBufferPointer) {
            self.remindAt = remindAt
            self.remind = remind
            self.language = language
            self.history = history
        }
    }

    public init(
        user: UnsafeRawBufferPointer, streak: UnsafeRawBufferPointer, position: RunPosition, carried: Carried?
    ) {
        self.user = user
        self.streak = streak
        self.position = position
        self.carried = carried
    }
}

/// A planned run's user and history as the run that planned it read them, the history still
/// packed (`PackedHistory`): a reader of a million runs may take what it needs from the bytes.
public struct CarriedHistory: Sendable {
    public var user: User
    /// Its bytes, in a buffer a store may share among a page's runs (one allocation a page, not
    /// one a run: a million mallocs and frees were a sixth of a planning thread).
    public var packed: ArraySlice<UInt8>

    public init(user: User, packed: ArraySlice<UInt8>) {
        self.user = user
        self.packed = packed
    }

    /// The history unpacked, as `dueHistories` answers it; nil when the bytes are not one.
    public func history(streak: String) -> DueHistory? {
        packed.withUnsafeBufferPointer { PackedHistory.unpack($0, user: user.id, streak: streak) }.map {
            DueHistory(user: user, stored: $0, fromCopy: true)
        }
    }
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
    /// planned run, beside its copy of the history, for readers of the queue (`plannedStreaks`).
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
