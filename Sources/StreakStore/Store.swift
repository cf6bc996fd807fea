import StreakCore

/// Reads that see one consistent snapshot of the store.
/// What `eachScheduleRow` calls with each row: the user and streak ids, and the packed history
/// when current, valid during the call only.
public typealias ScheduleRowBody = (
    _ user: UnsafeBufferPointer<UInt8>, _ streak: UnsafeBufferPointer<UInt8>, _ packed: UnsafeBufferPointer<UInt8>?
) throws -> Void

public protocol StoreReader {
    func user(_ id: String) throws -> User?
    func users() throws -> [User]
    func zoneHistory(of user: String) throws -> [StoredZoneChange]
    /// The streak ids a user has check-ins or freeze events for, sorted.
    func streaks(of user: String) throws -> [String]
    func checkins(of user: String, streak: String) throws -> [StoredCheckin]
    func freezeEvents(of user: String, streak: String) throws -> [FreezeEvent]
    func settingsEpochs(of streak: String) throws -> [SettingsEpoch]

    /// Which of these notification keys are recorded, sent or expired.
    func ledgerStates(keys: [String]) throws -> [String: LedgerState]
    /// Deliveries in state `pending`, oldest due first.
    func pendingDeliveries() throws -> [PendingDelivery]
    /// Deliveries by state, for one key or all.
    func deliveryStates(key: String) throws -> [String: DeliveryState]
    /// Pending deliveries no run is working on: waiting for another try.
    func waitingDeliveries() throws -> Int
    /// Streaks whose next notice is due by `through` (or that changed since they were planned); nil: every streak.
    func dueStreaks(through: Instant?) throws -> [DueStreak]
    func meta(_ key: String) throws -> String?
    /// A number that moves on whenever another connection or process commits a write: two equal
    /// answers on one connection mean nobody else wrote in between.
    func othersWrites() throws -> Int64
    /// The streak's user, with its packed history when still at `streak.version` (as `user` and
    /// `packedHistory`, in one lookup); nil when its schedule row is gone or the row is unknown.
    func userAndPackedHistory(of streak: DueStreak) throws -> (user: User, packed: StoredStreak?)?
    /// The streak's history packed by an earlier run, when it is still at `streak.version`.
    func packedHistory(of streak: DueStreak) throws -> StoredStreak?
    /// Every streak in part `part` of `parts`, unsorted: its packed history when current, else
    /// read from the tables. Answers how many were packed (work over all streaks at once).
    @discardableResult
    func eachPackedStreak(part: Int, of parts: Int, _ body: (StoredStreak) throws -> Void) throws -> Int
    /// Every schedule row in part `part` of `parts`, unsorted, read during the call only: the
    /// user and streak ids, and the packed history when current (`PackedHistory`).
    func eachScheduleRow(part: Int, of parts: Int, _ body: ScheduleRowBody) throws
    /// One (user, streak) read from the tables.
    func storedStreak(of user: User, streak: String) throws -> StoredStreak
    /// Every user's id and current zone, as UTF-8 read during the call only (bulk imports).
    func forEachUser(_ body: (_ id: UnsafeBufferPointer<UInt8>, _ zone: UnsafeBufferPointer<UInt8>) throws -> Void)
        throws
}

/// Writes inside one transaction: all of them land, or none.
public protocol StoreWriter: StoreReader {
    /// Adds a user; answers false when the id is taken.
    func addUser(_ user: User, at: Instant) throws -> Bool
    /// Replaces a user's settings; a new zone is recorded in the zone history from `at`.
    func updateUser(_ user: User, at: Instant) throws
    /// Deletes a user and everything stored for them; answers false when unknown.
    func removeUser(_ id: String) throws -> Bool
    /// Stores check-ins; one whose (user, event id) is stored already is a no-op.
    func insertCheckins(_ checkins: [NewCheckin], storedAt: Instant) throws -> InsertResult
    /// Starts storing check-ins one at a time in this transaction (`import`); how many
    /// are expected, when known, lets the store prepare for them.
    func checkinImport(storedAt: Instant, expectedRows: Int?) throws -> any CheckinImport
    /// Starts adding or updating users one at a time in this transaction (`user import`).
    func userImport(at: Instant) throws -> any UserImport
    func addFreezeEvent(_ event: FreezeEvent, user: String, streak: String) throws
    /// Records the goal and leeway seen for a streak id, when they differ from the last record.
    func recordSettings(_ epoch: SettingsEpoch, streak: String) throws

    /// Records a notification and a delivery row per sink: `pending` and owned by `owner` when
    /// sent, `expired` when too old. Answers its ledger id, or nil, writing nothing, when the key
    /// is recorded already.
    func record(_ entry: LedgerEntry, state: LedgerState, sinks: [String], owner: String?, at: Instant) throws
        -> Int64?
    /// Takes a pending delivery of ledger entry `id` over from `from` (nil: nobody); false when
    /// someone else has it now.
    func claim(id: Int64, sink: String, from: String?, to owner: String) throws -> Bool
    /// Ends an attempt at the deliveries to `sink` of the ledger entries `ids` (every id in the
    /// range): the new state, the attempts made in all, and the error if it failed.
    func finish(
        ids: ClosedRange<Int64>, sink: String, state: DeliveryState, attempts: Int, at: Instant, error: String?
    ) throws
    /// Plans a streak's next run (nil: nothing until it changes) and notes the run that handled it.
    /// Keeps it due when it changed after the run read it (its version moved on).
    /// `read`: the history the run read for it (not its packed one), packed to stand for the
    /// tables until the streak changes.
    /// Answers false, planning nothing, when the streak changed since the run read it (or is gone):
    /// then its notices must not be recorded either.
    /// `unchanged`: nothing was written since the streak was read but this run's own recording
    /// (`StoreReader.othersWrites()` answers as it did then), so its row is as read.
    @discardableResult
    func schedule(
        _ streak: DueStreak, nextAt: Instant?, handledThrough: Instant, read: StoredStreak?, unchanged: Bool
    ) throws -> Bool
    /// Marks every streak for a fresh look on the next run (the configuration changed).
    func rescheduleAll() throws
    func setMeta(_ key: String, _ value: String) throws
}

extension StoreWriter {
    @discardableResult
    public func schedule(_ streak: DueStreak, nextAt: Instant?, handledThrough: Instant, read: StoredStreak?) throws
        -> Bool
    {
        try schedule(streak, nextAt: nextAt, handledThrough: handledThrough, read: read, unchanged: false)
    }

    /// Ends an attempt at one delivery.
    public func finish(id: Int64, sink: String, state: DeliveryState, attempts: Int, at: Instant, error: String?)
        throws
    {
        try finish(ids: id...id, sink: sink, state: state, attempts: attempts, at: at, error: error)
    }
}

/// A place streakd keeps its data. SQLite now; PostgreSQL later, with the
/// same guarantees: serializable write transactions and unique keys on
/// (user), (user, event id) and, for notifications, their keys.
public protocol Store: Sendable {
    func read<T>(_ body: (any StoreReader) throws -> T) throws -> T
    func write<T>(_ body: (any StoreWriter) throws -> T) throws -> T
    /// A write transaction for bulk imports that check every row's user
    /// themselves, inside it: the store may skip its own reference checks.
    func bulkWrite<T>(_ body: (any StoreWriter) throws -> T) throws -> T
    /// A write transaction whose caller checks what its rows reference itself (a tick records
    /// notices only for streaks whose schedule row, so whose user, it found in it): the store
    /// may skip its own reference checks.
    func uncheckedWrite<T>(_ body: (any StoreWriter) throws -> T) throws -> T
    /// A read on a connection of its own, which may run while another thread writes: it sees
    /// what was committed when it began.
    func readBeside<T>(_ body: (any StoreReader) throws -> T) throws -> T
}

extension Store {
    public func bulkWrite<T>(_ body: (any StoreWriter) throws -> T) throws -> T { try write(body) }
    public func uncheckedWrite<T>(_ body: (any StoreWriter) throws -> T) throws -> T { try write(body) }
    public func readBeside<T>(_ body: (any StoreReader) throws -> T) throws -> T { try read(body) }
}

/// A store that could not be opened or used.
public struct StoreError: Error, CustomStringConvertible, Sendable {
    public var description: String
    public init(_ description: String) { self.description = description }
}
