import CSQLiteConfig
import Foundation
import GRDB
import StreakCore
import StreakStore
import Synchronization

/// The embedded store: one SQLite file in WAL mode, safe for several
/// processes at once (writers wait for each other up to `busyTimeout`; readers never wait).
public final class SQLiteStore: Store {
    public let path: String
    public var location: String { path }
    /// A file on this host: its clock is this host's.
    public func clock() throws -> Instant? { nil }
    /// None to open: the readers open with the file.
    public func openConnections(_ count: Int) -> (open: Int, short: String?)? { nil }
    /// Write transactions exclude each other: a run claims its due streaks in large batches.
    public var concurrentClaims: Bool { false }
    let queue: DatabaseQueue

    /// The page cache of a connection, in SQLite's negative-KiB form (16 MB). A busy run reads
    /// most pages once, so a larger cache only grew: at 64 MB a busy quarter hour at a million
    /// users faulted in 2,800 more fresh pages (and peaked 11 MB higher), and the first run after
    /// an import peaked at 173 MB instead of 127 MB, in the same time.
    static let cacheSize = -16384

    /// Process-wide settings, for a process that has not opened a store yet (the executable's
    /// start): SQLite stops counting the memory it uses, which took a global mutex around every
    /// allocation, contended when a run plans on one connection while it records on another.
    public static func setUpProcess() {
        _ = streakd_sqlite_memstatus(0)
    }

    /// Whether this store only reads (commands that only read: never created, migrated or changed).
    public let access: StoreAccess
    /// How long a writer waits for another process's write lock, and when it stops waiting.
    let busy: BusyWait
    /// Connections of their own that reads take turns on (`readers` > 0: serve), else nil: reads
    /// are on the store's own connection.
    let readers: SQLiteReaders?

    /// Opens the file. `write`: creating it and its folder on first use, and migrating it forward;
    /// `read`: read-only, and only a store that exists and is up to date (SPEC §6), or of any
    /// version when `anyVersion` (`store check` and `store backup`, before an upgrade). `stopping`:
    /// a stop was asked for (SIGTERM), so waits for a lock end within a few seconds.
    public init(
        path: String, access: StoreAccess = .write, anyVersion: Bool = false, durable: Bool = false,
        readers: Int = 0, busyTimeout: TimeInterval = 30, stopping: @escaping @Sendable () -> Bool = { false }
    ) throws {
        self.path = path
        self.access = access
        busy = BusyWait(limit: .milliseconds(Int64(busyTimeout * 1000)), stopping: stopping)
        self.readers = readers > 0 && access == .write ? SQLiteReaders(path: path, busy: busy, count: readers) : nil
        let exists = try Self.checkPath(path, access)
        var config = Configuration()
        config.busyMode = busy.mode
        config.foreignKeysEnabled = true
        if access == .read {
            config.prepareDatabase { db in try db.execute(sql: "PRAGMA cache_size = \(Self.cacheSize)") }
            do {
                queue = try Self.openForReading(path: path, configuration: config)
                if !anyVersion { try Self.requireCurrentSchema(queue, path: path) }
            } catch let error as DatabaseError {
                throw Self.storeError(error, path: path)
            }
            return
        }
        let folder = (path as NSString).deletingLastPathComponent
        // SQLite would only say "unable to open database file".
        if exists, !Self.writable(path) || !Self.writable(folder.isEmpty ? "." : folder) {
            throw StoreError(
                .readOnly,
                "store \(path): \(Self.writable(path) ? "its folder" : "the file") is read-only; this command writes, and needs write access to the file and its folder (commands that only read work)"
            )
        }
        if !exists {
            if !folder.isEmpty { try Self.makeFolders(folder) }
            try Self.makeFile(path)
        }
        config.journalMode = .wal
        // WAL with synchronous=NORMAL: a commit does not wait for the disk; a power cut can lose the
        // last commits but never corrupts the file. Every delivery is one commit, so this matters.
        // `durable` (serve, whose 2xx promises the check-in survives a power cut): FULL, an fsync of
        // the WAL at each commit; the API's group commit shares it between requests.
        let synchronous = durable ? "FULL" : "NORMAL"
        config.prepareDatabase { db in
            try db.execute(sql: "PRAGMA synchronous = \(synchronous); PRAGMA cache_size = \(Self.cacheSize)")
        }
        do {
            queue = try Self.migrated(path: path, configuration: config, within: busyTimeout)
        } catch let error as StoreError {
            throw error
        } catch let error as DatabaseError {
            throw Self.storeError(error, path: path)
        } catch {
            throw StoreError(.unavailable, "cannot open the store \(path): \(Self.reason(error))")
        }
    }

    /// Opens and migrates forward. GRDB checks which migrations are applied before
    /// it takes the write lock, and runs each in its own transaction, so processes creating one
    /// new file at once race step by step: a loser's step fails (an error, or busy when its read
    /// of the schema went stale: SQLite answers that at once, without waiting), and it tries again
    /// from opening the file. Busy is waited on for as long as a writer would wait; an error (or a
    /// file that could not be opened or read while another process set up its WAL files) is
    /// tried again while another process is seen applying migrations meanwhile, and otherwise for
    /// `setupStall` (a file that is not a streakd store fails within seconds). Counted in tries
    /// (20, some 3 s of waiting), a machine busy enough to hold the migrating process back that
    /// long failed a first use with "no such table: grdb_migrations" (CI, five first uses at once).
    static func migrated(path: String, configuration: Configuration, within timeout: TimeInterval) throws
        -> DatabaseQueue
    {
        let start = ContinuousClock.now
        var stalled = 0
        var progress = start
        var applied = -1
        while true {
            do {
                let queue = try DatabaseQueue(path: path, configuration: configuration)
                if try queue.read({ try Schema.migrator.hasBeenSuperseded($0) }) {
                    throw StoreError(
                        .newer,
                        "the store \(path) was written by a newer streakd; run that version, or restore a backup")
                }
                try Schema.migrator.migrate(queue)
                return queue
            } catch let error as DatabaseError where ContinuousClock.now - start < .seconds(timeout) {
                switch error.resultCode {
                case .SQLITE_BUSY, .SQLITE_LOCKED, .SQLITE_PROTOCOL:
                    break
                case .SQLITE_ERROR, .SQLITE_CANTOPEN,
                    .SQLITE_IOERR where error.extendedResultCode != .SQLITE_IOERR_SHMSIZE,
                    .SQLITE_CONSTRAINT where appliedByAnother(error):
                    let now = appliedCount(path: path)
                    if now > applied {
                        applied = now
                        stalled = 0
                        progress = ContinuousClock.now
                    } else {
                        stalled += 1
                    }
                    guard ContinuousClock.now - progress < Self.setupStall else { throw error }
                default:
                    throw error
                }
                usleep(UInt32(20_000 * min(stalled + 1, 10) + Int.random(in: 0..<20_000)))  // apart, not in step
            }
        }
    }

    /// How long a first use tries again while no migration is seen applied (`migrated`).
    static let setupStall = Duration.seconds(10)

    /// How many migrations the file has recorded as applied, read apart from GRDB (0 when none
    /// or unreadable): another process applying them is progress to wait for, not a failure.
    private static func appliedCount(path: String) -> Int {
        var config = Configuration()
        config.readonly = true
        config.busyMode = .timeout(1)
        return (try? DatabaseQueue(path: path, configuration: config).read { db in
            try Int.fetchOne(db, sql: "SELECT count(*) FROM grdb_migrations") ?? 0
        }) ?? 0
    }

    /// A migration that can run twice (9-store-id) does not fail on its own when another
    /// process applied it since this one read the list: recording it applied then does.
    private static func appliedByAnother(_ error: DatabaseError) -> Bool {
        error.resultCode == .SQLITE_CONSTRAINT && (error.message ?? "").contains("grdb_migrations")
    }

    public func read<T>(_ body: (any StoreReader) throws -> T) throws -> T {
        if let readers { return try wrap { try readers.read { db in try body(SQLiteAccess(db: db)) } } }
        return try wrap { try queue.read { db in try body(SQLiteAccess(db: db)) } }
    }

    /// `referencesChecked` and `bulkImport` turn SQLite's foreign keys off for the transaction (a
    /// pragma that only works between transactions): looking up the user of each of millions of
    /// rows doubled an import's time. The write lock is held from the start, so what the caller
    /// checked against stays as it is until the commit.
    public func write<T>(_ mode: WriteMode, _ body: (any StoreWriter) throws -> T) throws -> T {
        guard access == .write else {
            throw StoreError(.readOnly, "store \(path): opened for reading only, by a command that must not write")
        }
        switch mode {
        case .ordinary:
            return try wrap { try queue.write { db in try body(SQLiteAccess(db: db)) } }
        case .referencesChecked:
            return try uncheckedWrite(cacheSize: Self.cacheSize, body)
        case .bulkImport:
            // SQLite's default page cache (2 MB) for the import: a larger one did not make it
            // faster (docs/ARCHITECTURE.md, "Page cache").
            return try uncheckedWrite(cacheSize: -2000, body)
        }
    }

    /// The second connection, read-only, opened on first use (a run planning ahead of its writes).
    private let beside = Mutex<DatabaseQueue?>(nil)
    /// Its page cache, in SQLite's negative-KiB form (8 MB): it reads each due streak's pages once.
    static let besideCacheSize = -8192

    /// A read-only connection beside the store's own (`readBeside`), waiting for
    /// a lock as long as the store's does, by a clock of its own.
    static func besideConfiguration(_ busy: BusyWait, cacheSize: Int = besideCacheSize) -> Configuration {
        var config = Configuration()
        config.readonly = true
        config.busyMode = BusyWait(limit: busy.limit, stopping: busy.stopping).mode
        config.prepareDatabase { db in try db.execute(sql: "PRAGMA cache_size = \(cacheSize)") }
        return config
    }

    public func readBeside<T>(_ body: (any StoreReader) throws -> T) throws -> T {
        let connection = try wrap {
            try beside.withLock { beside in
                if let beside { return beside }
                // As the store's own reading connection opens: a read-only folder works too.
                let opened = try Self.openForReading(path: path, configuration: Self.besideConfiguration(busy))
                beside = opened
                return opened
            }
        }
        return try wrap { try connection.read { db in try body(SQLiteAccess(db: db)) } }
    }

    private func uncheckedWrite<T>(cacheSize: Int, _ body: (any StoreWriter) throws -> T) throws -> T {
        try wrap {
            try queue.writeWithoutTransaction { db in
                // CHECKs too: the values they check come from Swift enums (`DeliveryState`,
                // `LedgerState`), and SQLite builds a table for a four-value `IN` on every insert.
                try db.execute(
                    sql:
                        "PRAGMA foreign_keys = OFF; PRAGMA ignore_check_constraints = ON; PRAGMA cache_size = \(cacheSize)"
                )
                defer {
                    try? db.execute(
                        sql:
                            "PRAGMA foreign_keys = ON; PRAGMA ignore_check_constraints = OFF; PRAGMA cache_size = \(Self.cacheSize)"
                    )
                }
                var result: T?
                try db.inTransaction(.immediate) {
                    result = try body(SQLiteAccess(db: db))
                    return .commit
                }
                return result!
            }
        }
    }

    func wrap<T>(_ body: () throws -> T) throws -> T {
        do {
            return try body()
        } catch let error as DatabaseError {
            throw Self.storeError(error, path: path)
        }
    }
}

/// The reader and writer over one open transaction.
struct SQLiteAccess: StoreWriter {
    let db: Database

    func streaks(of user: String) throws -> [String] {
        try String.fetchAll(
            db,
            sql: """
                SELECT streak FROM checkins WHERE user_id = ?1
                UNION SELECT streak FROM freeze_events WHERE user_id = ?1 ORDER BY 1
                """, arguments: [user])
    }

    func checkins(of user: String, streak: String) throws -> [StoredCheckin] {
        let s = try RawStatement(
            db, "SELECT at, zone, event_id, stored_at FROM checkins WHERE user_id = ? AND streak = ? ORDER BY at")
        s.bind(1, user)
        s.bind(2, streak)
        var checkins: [StoredCheckin] = []
        try s.rows {
            checkins.append(
                StoredCheckin(
                    instant: Instant(seconds: s.int64(0)), zone: s.text(1), eventID: s.optionalText(2),
                    storedAt: Instant(seconds: s.int64(3))))
        }
        return checkins
    }

    func freezeEvents(of user: String, streak: String) throws -> [FreezeEvent] {
        let s = try RawStatement(
            db,
            "SELECT at, kind, date, until_date, author FROM freeze_events WHERE user_id = ? AND streak = ? ORDER BY at, id"
        )
        s.bind(1, user)
        s.bind(2, streak)
        var events: [FreezeEvent] = []
        try s.rows { events.append(Self.freezeEvent(s, at: 0)) }
        return events
    }

    /// A freeze event from the columns `at, kind, date, until_date, author` starting at column `first`.
    static func freezeEvent(_ s: RawStatement, at first: Int32) -> FreezeEvent {
        FreezeEvent(
            at: Instant(seconds: s.int64(first)), stored: s.text(first + 1), date: { s.int(first + 2) },
            until: { s.isNull(first + 3) ? nil : s.int(first + 3) }, author: { s.optionalText(first + 4) })
    }

    func settingsEpochs(of streak: String) throws -> [SettingsEpoch] {
        let s = try RawStatement(
            db, "SELECT since, goal, leeway_hours, rest_days FROM settings_epochs WHERE streak = ? ORDER BY since")
        s.bind(1, streak)
        var epochs: [SettingsEpoch] = []
        try s.rows {
            epochs.append(
                SettingsEpoch(
                    since: Instant(seconds: s.int64(0)), goal: s.int(1), leewayHours: s.int(2),
                    restDays: RestDays(bits: UInt8(truncatingIfNeeded: s.int(3)))))
        }
        return epochs
    }

    func insertCheckins(_ checkins: [NewCheckin], storedAt: Instant) throws -> InsertResult {
        let bulk = try SQLiteCheckinImport(db: db, storedAt: storedAt, expectedRows: checkins.count)
        bulk.noteDuplicates = true
        try bulk.insert(CheckinRows(checkins))
        return try bulk.finish()
    }

    func addFreezeEvent(_ event: FreezeEvent, user: String, streak: String) throws {
        let (kind, date, until) = event.stored
        try db.execute(
            sql: """
                INSERT INTO freeze_events (user_id, streak, at, kind, date, until_date, author)
                VALUES (?, ?, ?, ?, ?, ?, ?)
                """,
            arguments: [user, streak, event.at.seconds, kind, date, until, event.author])
        try touch(user: user, streak: streak)
    }

    func removeFreezeEvent(_ event: FreezeEvent, user: String, streak: String) throws {
        let (kind, date, until) = event.stored
        try db.execute(
            sql: """
                DELETE FROM freeze_events WHERE user_id = ? AND streak = ? AND at = ? AND kind = ?
                AND date IS ? AND until_date IS ?
                """,
            arguments: [user, streak, event.at.seconds, kind, date, until])
        try touch(user: user, streak: streak)
    }

    func recordSettings(_ epoch: SettingsEpoch, streak: String) throws {
        let last = try settingsEpochs(of: streak).last
        guard last?.goal != epoch.goal || last?.leewayHours != epoch.leewayHours || last?.restDays != epoch.restDays
        else { return }
        try db.execute(
            sql: """
                INSERT OR REPLACE INTO settings_epochs (streak, since, goal, leeway_hours, rest_days)
                VALUES (?, ?, ?, ?, ?)
                """,
            arguments: [streak, epoch.since.seconds, epoch.goal, epoch.leewayHours, Int(epoch.restDays.bits)])
    }
}
