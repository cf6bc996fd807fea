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
    /// The store's own clock, when it has one (a database server's): every host that shares the
    /// store then decides by the same "now". Nil: the store lives on this host, whose clock is its.
    func clock() throws -> Instant?
    /// Whether several runs claim due streaks at once (row locks, skipping what another holds):
    /// then a run claims them in small batches, a transaction each, so runs going at once split
    /// the work. False where write transactions exclude each other (a SQLite file).
    var concurrentClaims: Bool { get }
    /// Where the store is, for messages: a file's path, a database's URL without its password.
    var location: String { get }
    /// Looks at every part of the store for damage (`streakd store check`): slow, it reads
    /// everything. Problems found are answered, not thrown; a store too damaged to look at throws
    /// a `.damaged` error.
    func check() throws -> StoreCheck
    /// Writes a consistent copy of the store, as of one instant, while other processes go on
    /// using it (`streakd store backup`). `path` names a file that must not exist yet; a store
    /// whose copy is not a file (a database server's) may refuse with `.unavailable` and say
    /// what to use instead.
    func backup(to path: String) throws
    /// Opens connections ahead of use, up to `count` open and idle, so a server's first requests
    /// find them (`serve`). Answers how many are open, and why not `count` when fewer (a limit of
    /// the store's, an error); a store without connections to open (a file, whose readers open
    /// with it) answers nil.
    func openConnections(_ count: Int) -> (open: Int, short: String?)?
    /// Holds back the store's own upkeep of its log from this process's commits while a run
    /// makes many (`true`), or lets it go on (`false`). SQLite checkpoints its write-ahead log
    /// inside the commit that finds it long: at a busy tick, pauses of 0.1–0.3 s in the lanes'
    /// commits. A store whose upkeep is its server's (PostgreSQL) does nothing.
    func holdUpkeep(_ hold: Bool) throws
    /// The upkeep held back, done now on a connection of its own, beside the commits that go on
    /// (SQLite: a passive checkpoint, which no writer waits for). Nothing for a server's store.
    func upkeep() throws
}

extension Store {
    public func write<T>(_ body: (any StoreWriter) throws -> T) throws -> T { try write(.ordinary, body) }
}

/// How a command opens the store: commands that only read (`status`, `preview`, `tick --dry-run`,
/// `store check`, …) open it `read`: it must exist, and is never created, migrated or changed; they
/// work on a read-only file and never wait for a writer (SPEC §6). `write` creates and migrates.
public enum StoreAccess: Sendable {
    case read
    case write
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
    & OverviewReading & TokenReading

/// Every role a write transaction sees.
public typealias StoreWriter = StoreReader & UserWriting & HistoryWriting & Importing & ScheduleWriting
    & LedgerWriting & RunRegistry & MetaWriting & TokenWriting

/// Small settings the store keeps for streakd itself: its identity, the notice settings'
/// fingerprint, the last runs (`MetaKey`).
public protocol MetaReading {
    func meta(_ key: String) throws -> String?
}

public protocol MetaWriting {
    func setMeta(_ key: String, _ value: String) throws
}

/// What `Store.check` found.
public struct StoreCheck: Equatable, Sendable {
    /// One line per problem, as the engine words it (at most a hundred or so); empty: no damage.
    public var problems: [String]
    /// What was looked at, for people: "integrity_check and foreign_key_check of 14 tables".
    public var checked: String

    public init(problems: [String], checked: String) {
        self.problems = problems
        self.checked = checked
    }

    public var ok: Bool { problems.isEmpty }
}

/// A store that could not be opened or used, and why, for the exit status (SPEC §6). The command
/// line maps each kind to its code in one place (Sources/streakd/GlobalOptions.swift).
public struct StoreError: Error, CustomStringConvertible, Sendable {
    public enum Kind: Sendable, Equatable {
        /// It cannot be opened or reached at all: no permission, a folder that cannot be made,
        /// a server that refuses (69).
        case unavailable
        /// Busy or unreachable for now: the next run will do (75).
        case busy
        /// Its contents are damaged (74).
        case damaged
        /// There is no store at the place named, and the command only reads (66).
        case missing
        /// The place named cannot be a store at all: empty, a device, a folder, a form of name
        /// streakd does not take (64).
        case invalid
        /// The disk (or the database's space) is full: the write that met it was not stored (69; the store is
        /// fine once space is freed).
        case full
        /// Only reading is possible: the file, its folder or the database is read-only, and the
        /// command writes (69).
        case readOnly
        /// The store is from an older streakd, and the command only reads: the next writing
        /// command (the next `tick`) upgrades it (75).
        case outdated
        /// The store was written by a newer streakd than this one (69).
        case newer
        /// The store refuses this user what the command needs: a database role without the
        /// rights on streakd's tables (77).
        case denied
    }

    public var kind: Kind
    public var description: String
    /// A `busy` store that could not be reached at all (its server gone or restarting), not one
    /// held by another writer: worth trying again for seconds, not minutes.
    public var unreachable: Bool

    public init(_ kind: Kind, _ description: String, unreachable: Bool = false) {
        self.kind = kind
        self.description = description
        self.unreachable = unreachable
    }
}
