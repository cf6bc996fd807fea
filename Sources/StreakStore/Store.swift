import StreakCore

/// A place streakd keeps its data: a SQLite file (StreakSQLite) or, for several hosts, a
/// PostgreSQL database. What the jobs need of it is split by role (`UserReading`,
/// `HistoryReading`, `ScheduleWriting`, `LedgerWriting`, …), each stating its guarantees in terms
/// any transactional database gives: transactions, unique keys, row locks and compare-and-set.
/// docs/ARCHITECTURE.md shows the roles and who uses them.
public protocol Store: Sendable {
    /// A read of one consistent snapshot.
    func read<T>(_ body: (any StoreReader) throws -> T) throws -> T
    /// A transaction: every write in it lands, or none. Writers that touch the same rows are
    /// serialised (by a lock on the whole store, or on the rows); `mode` may let the engine skip
    /// checks the caller made itself.
    func write<T>(_ mode: WriteMode, _ body: (any StoreWriter) throws -> T) throws -> T
    /// A read on a connection of its own, which may run on another thread while this process
    /// writes on its own: a snapshot of what was committed when it began.
    func readBeside<T>(_ body: (any StoreReader) throws -> T) throws -> T
}

extension Store {
    public func write<T>(_ body: (any StoreWriter) throws -> T) throws -> T { try write(.ordinary, body) }
    public func readBeside<T>(_ body: (any StoreReader) throws -> T) throws -> T { try read(body) }
}

/// Which checks of a write the caller makes itself.
public enum WriteMode: Sendable {
    /// The store checks every reference (a check-in's user, a delivery's notification).
    case ordinary
    /// The caller checks what its rows reference, inside the same transaction (a tick records
    /// notices only for streaks it claimed in it, so whose user exists): the store may skip its
    /// own reference checks.
    case referencesChecked
    /// As `referencesChecked`, for a bulk import of many rows (each row's user checked against
    /// the users read in the transaction): the store may prepare for many rows.
    case bulkImport
}

/// Every role a read sees.
public typealias StoreReader = UserReading & HistoryReading & ScheduleReading & LedgerReading & MetaReading
    & OverviewReading

/// Every role a write transaction sees.
public typealias StoreWriter = StoreReader & UserWriting & HistoryWriting & Importing & ScheduleWriting
    & LedgerWriting & RunRegistry & MetaWriting

/// Small settings the store keeps for streakd itself: its identity, the notice settings'
/// fingerprint, the last runs (`MetaKey`).
public protocol MetaReading {
    func meta(_ key: String) throws -> String?
}

public protocol MetaWriting {
    func setMeta(_ key: String, _ value: String) throws
}

/// A store that could not be opened or used, and why, for the exit status (SPEC §6).
public struct StoreError: Error, CustomStringConvertible, Sendable {
    public enum Kind: Sendable, Equatable {
        /// It cannot be opened or reached at all (69).
        case unavailable
        /// Busy or unreachable for now: the next run will do (75).
        case busy
        /// Its contents are damaged (74).
        case damaged
    }

    public var kind: Kind
    public var description: String

    public init(_ kind: Kind, _ description: String) {
        self.kind = kind
        self.description = description
    }
}
