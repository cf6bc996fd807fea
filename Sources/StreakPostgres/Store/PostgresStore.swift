import StreakCore
import StreakStore
import Synchronization

/// The PostgreSQL store (SPEC §7): one database shared by several hosts, each running the timers.
/// The roles are kept with PostgreSQL's own means: unique keys decide the ledger, claims lock the
/// schedule's rows `FOR UPDATE SKIP LOCKED`, leases and "now" are on the server's clock, and
/// migrations are serialised by an advisory lock (docs/POSTGRES.md).
///
/// Connections come from a small pool: a run's lanes and heartbeat write beside its recording.
/// Writes run in READ COMMITTED transactions with explicit row locks; reads in REPEATABLE READ
/// READ ONLY ones (one snapshot).
public final class PostgresStore: Store {
    public let url: PGURL
    let settings: PGSettings
    private let idle = Mutex<[Connection]>([])

    /// A connection handed from thread to thread through the pool's lock, used by one at a time.
    final class Connection: @unchecked Sendable {
        let pg: PGConnection
        init(_ pg: PGConnection) { self.pg = pg }
    }

    /// Connects and, when `create`, migrates the schema forward (serialised across hosts). Without
    /// `create` (read commands), a database streakd has not set up yet is `missing`.
    public init(url: String, create: Bool = true, settings: PGSettings = PGSettings()) throws {
        switch Result(catching: { try PGURL(url) }) {
        case .success(let parsed): self.url = parsed
        case .failure(let e): throw StoreError(.unavailable, "--store: \(e)")
        }
        self.settings = settings
        try withConnection { pg in
            if create {
                _ = try pg.migrate(PostgresSchema.migrations)
            } else {
                let known = try pg.query("SELECT to_regclass('schema_migrations') IS NOT NULL").get(0, 0, as: Bool.self)
                guard known else {
                    throw StoreError(.missing, "no streakd store in the database at \(self.url) yet")
                }
            }
        }
    }

    public func read<T>(_ body: (any StoreReader) throws -> T) throws -> T {
        try withConnection { pg in
            try pg.transaction(isolation: .repeatableRead, readOnly: true) { try body(PGAccess(pg: $0)) }
        }
    }

    public func write<T>(_ mode: WriteMode, _ body: (any StoreWriter) throws -> T) throws -> T {
        try withConnection { pg in
            try pg.transaction {
                // A bulk import may take longer than a statement's usual minute.
                if mode == .bulkImport { try $0.execute("SET LOCAL statement_timeout = '1h'") }
                return try body(PGAccess(pg: $0, bulk: mode == .bulkImport))
            }
        }
    }

    public func readBeside<T>(_ body: (any StoreReader) throws -> T) throws -> T { try read(body) }

    public var concurrentClaims: Bool { true }
    public var location: String { url.description }

    public func clock() throws -> Instant? {
        try withConnection { try $0.databaseNow() }
    }

    /// Runs `body` on a pooled connection (a new one when none is idle); a connection that broke
    /// is dropped. PostgreSQL's errors become the store's, by kind (exit codes).
    func withConnection<T>(_ body: (PGConnection) throws -> T) throws -> T {
        do {
            let connection = try idle.withLock { $0.popLast() } ?? Connection(PGConnection(url, settings: settings))
            defer {
                if connection.pg.isOpen && !connection.pg.inTransaction { idle.withLock { $0.append(connection) } }
            }
            return try body(connection.pg)
        } catch let e as PGError {
            throw StoreError(Self.kind(of: e), e.message)
        }
    }

    static func kind(of e: PGError) -> StoreError.Kind {
        switch e.kind {
        case .unreachable, .badURL: .unavailable
        case .lost, .timedOut, .conflict: .busy
        case .newerSchema: .unavailable
        case .uniqueViolation, .other: .busy
        }
    }
}

/// The reader and writer over one open transaction.
struct PGAccess: StoreWriter {
    let pg: PGConnection
    /// A bulk import's transaction (statements may take long).
    var bulk = false
}
