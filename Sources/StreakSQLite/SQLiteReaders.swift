import Dispatch
import GRDB
import StreakStore
import Synchronization

/// Read-only connections that a store's reads take turns on (serve's requests, SPEC §11): in WAL
/// mode readers never wait for the writer nor for each other, so requests read side by side while
/// the one writer commits, instead of one after another on the store's own connection. Each read
/// is a snapshot of what was committed when it began, as on the store's own connection.
final class SQLiteReaders: Sendable {
    /// A reader's page cache, in SQLite's negative-KiB form (4 MB): several are open at once.
    static let cacheSize = -4096

    private let path: String
    private let busy: BusyWait
    private let idle = Mutex<[DatabaseQueue]>([])
    /// At most `count` connections, each used by one read at a time.
    private let free: DispatchSemaphore

    init(path: String, busy: BusyWait, count: Int) {
        self.path = path
        self.busy = busy
        free = DispatchSemaphore(value: count)
    }

    func read<T>(_ body: (Database) throws -> T) throws -> T {
        free.wait()
        defer { free.signal() }
        let connection =
            try idle.withLock { $0.popLast() }
            ?? SQLiteStore.openForReading(
                path: path, configuration: SQLiteStore.besideConfiguration(busy, cacheSize: Self.cacheSize))
        defer { idle.withLock { $0.append(connection) } }
        return try connection.inDatabase { db in try Self.transaction(db, body) }
    }

    /// `body` in one read transaction, begun and ended by statements prepared once: GRDB's `read`
    /// parses its BEGIN and COMMIT again each time, 6 % of a GET's CPU.
    private static func transaction<T>(_ db: Database, _ body: (Database) throws -> T) throws -> T {
        defer { if db.isInsideTransaction { try? db.cachedStatement(sql: "ROLLBACK").execute() } }
        try db.cachedStatement(sql: "BEGIN").execute()
        let value = try body(db)
        try db.cachedStatement(sql: "COMMIT").execute()
        return value
    }
}
