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
    /// Set once the first connection was made: a database out of reach after that is a run that
    /// lost it (75, "for now"), not one that could not start (69).
    private let reached = Atomic<Bool>(false)

    /// A connection handed from thread to thread through the pool's lock, used by one at a time.
    /// `@unchecked`: it holds libpq's `PGconn*` (in `PGConnection`), which the compiler cannot see
    /// is used by one thread at a time; the pool's lock is what makes it so.
    final class Connection: @unchecked Sendable {
        let pg: PGConnection
        init(_ pg: PGConnection) { self.pg = pg }
    }

    public let access: StoreAccess

    /// Connects and, for `write`, migrates the schema forward (serialised across hosts). For
    /// `read` (commands that only read) nothing is created or changed: a database streakd has not
    /// set up yet is `missing`, one an older streakd set up is `outdated` (the next writing
    /// command upgrades it) unless `anyVersion`, and one a newer streakd set up is `newer`.
    public init(
        url: String, access: StoreAccess = .write, anyVersion: Bool = false, settings: PGSettings = PGSettings()
    ) throws {
        switch Result(catching: { try PGURL(url) }) {
        case .success(let parsed): self.url = parsed
        case .failure(let e): throw StoreError(.unavailable, "--store: \(e)")
        }
        self.settings = settings
        self.access = access
        try withConnection { pg in
            if access == .write {
                // A minute at least, whatever the connection's own settings (`PGSettings.serving`).
                let standard = PGSettings().statementTimeout
                _ = try pg.migrate(
                    PostgresSchema.migrations,
                    statementTimeout: settings.statementTimeout < standard ? standard : nil)
                return
            }
            let applied = try Self.appliedMigrations(pg)
            guard let applied else {
                throw StoreError(
                    .missing,
                    "no store at \(self.url) yet (the database has no streakd tables); the first command that "
                        + "writes (such as `streakd user add`) sets them up; check --store")
            }
            let known = Set(PostgresSchema.migrations.map(\.name))
            if let newer = applied.first(where: { !known.contains($0) }) {
                throw StoreError(.newer, "the store at \(self.url) was set up by a newer streakd (migration \(newer))")
            }
            if !anyVersion && applied.count < known.count {
                throw StoreError(
                    .outdated,
                    "the store at \(self.url) is from an older streakd; the next command that writes (tick) upgrades it"
                )
            }
        }
    }

    /// The names of the migrations applied, or nil when streakd has not set the database up.
    static func appliedMigrations(_ pg: PGConnection) throws -> [String]? {
        guard try pg.query("SELECT to_regclass('schema_migrations') IS NOT NULL").get(0, 0, as: Bool.self) else {
            return nil
        }
        return try pg.query("SELECT name FROM schema_migrations").rows.map { try $0.string(0) }
    }

    /// PostgreSQL keeps its own pages whole (WAL, checksums when on); what is checked here is
    /// what streakd relies on: the schema's version and that every reference resolves.
    public func check() throws -> StoreCheck {
        try withConnection { pg in
            var problems: [String] = []
            let applied = try Self.appliedMigrations(pg) ?? []
            for m in PostgresSchema.migrations where !applied.contains(m.name) {
                problems.append("migration \(m.name) is not applied")
            }
            let orphans = [
                (
                    "check-ins without a user",
                    "checkin_lists c LEFT JOIN users u ON u.id = c.user_id WHERE u.id IS NULL"
                ),
                (
                    "event ids without a user",
                    "checkin_events e LEFT JOIN users u ON u.id = e.user_id WHERE u.id IS NULL"
                ),
                ("schedule rows without a user", "schedule s LEFT JOIN users u ON u.id = s.user_id WHERE u.id IS NULL"),
                (
                    "deliveries without a notification",
                    "deliveries d LEFT JOIN notifications n ON n.id = d.notification WHERE n.id IS NULL"
                ),
            ]
            for (what, from) in orphans {
                let n: Int64 = try pg.query("SELECT count(*) FROM \(from)").get(0, 0)
                if n > 0 { problems.append("\(n) \(what)") }
            }
            // The packed copies against the tables, at one snapshot (issue 31).
            if problems.isEmpty {
                problems += try pg.transaction(isolation: .repeatableRead, readOnly: true) {
                    try PGAccess(pg: $0).packedCopyProblems(limit: 100)
                }
            }
            return StoreCheck(
                problems: problems,
                checked: "the schema's \(applied.count) migrations, the references of check-ins, schedule rows "
                    + "and deliveries, and the packed histories (PostgreSQL's own pages: amcheck, pg_checksums)")
        }
    }

    /// A database server's store is not a file to copy: pg_dump makes the consistent copy. Not a
    /// service out of reach (69) but a command for another kind of store (64).
    public func backup(to path: String) throws {
        throw StoreError(
            .invalid,
            "a PostgreSQL store is backed up by PostgreSQL's own tools, while streakd runs: "
                + "pg_dump --format=custom --file=\(path) '\(url)' (restore with pg_restore)")
    }

    public func read<T>(_ body: (any StoreReader) throws -> T) throws -> T {
        // Read commands' transactions are READ ONLY: the server refuses any write in them.
        try withConnection { pg in
            try pg.transaction(isolation: .repeatableRead, readOnly: true) { try body(PGAccess(pg: $0, store: self)) }
        }
    }

    public func write<T>(_ mode: WriteMode, _ body: (any StoreWriter) throws -> T) throws -> T {
        guard access == .write else {
            throw StoreError(.readOnly, "the store at \(url) was opened to read only")
        }
        return try withConnection { pg in
            try pg.transaction {
                // A bulk import may take longer than a statement's usual minute.
                if mode == .bulkImport { try $0.execute("SET LOCAL statement_timeout = '1h'") }
                return try body(PGAccess(pg: $0, bulk: mode == .bulkImport))
            }
        }
    }

    public func readBeside<T>(_ body: (any StoreReader) throws -> T) throws -> T { try read(body) }

    public var concurrentClaims: Bool { true }
    /// The server's own upkeep (its checkpoints, autovacuum): nothing of the process's to hold.
    public func holdUpkeep(_ hold: Bool) throws {}
    public func upkeep() throws {}
    public var location: String { url.description }

    public func clock() throws -> Instant? {
        try withConnection { try $0.databaseNow() }
    }

    /// Connects until `count` connections are idle in the pool, one after the other (each within
    /// `settings.connectTimeout`), taking at most half the connections the server has spare (its
    /// `max_connections`, less those reserved and those open): the rest stay for the other hosts
    /// and commands (a connection is still opened when one is needed and none is idle). The
    /// first connection that fails ends it.
    public func openConnections(_ count: Int) -> (open: Int, short: String?)? {
        let spare: Int
        do {
            spare = Int(try withConnection { try $0.query(Self.spareConnections).get(0, 0, as: Int64.self) })
        } catch {
            return (idle.withLock { $0.count }, "\(error)")
        }
        var open = idle.withLock { $0.count }
        let target = min(count, open + spare / 2)
        while open < target {
            do {
                let connection = Connection(try PGConnection(url, settings: settings))
                idle.withLock { $0.append(connection) }
                open += 1
            } catch {
                return (open, "\(error)")
            }
        }
        guard open < count else { return (open, nil) }
        return (open, "the server has \(spare) connections spare: half taken, half left to other hosts and commands")
    }

    /// How many more connections the server accepts (from a role that is not a superuser).
    static let spareConnections = """
        SELECT current_setting('max_connections')::int - current_setting('superuser_reserved_connections')::int
            - (SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'client backend')
        """

    /// Runs `body` on a pooled connection (a new one when none is idle); a connection that broke
    /// is dropped. PostgreSQL's errors become the store's, by kind (exit codes).
    func withConnection<T>(_ body: (PGConnection) throws -> T) throws -> T {
        do {
            // An idle connection the server closed meanwhile (a restart) is dropped, not used.
            var pooled = idle.withLock { $0.popLast() }
            while let stale = pooled, !stale.pg.stillOpen {
                stale.pg.close()
                pooled = idle.withLock { $0.popLast() }
            }
            let connection = try pooled ?? Connection(PGConnection(url, settings: settings))
            reached.store(true, ordering: .relaxed)
            defer {
                if connection.pg.isOpen && !connection.pg.inTransaction { idle.withLock { $0.append(connection) } }
            }
            return try body(connection.pg)
        } catch let e as PGError {
            throw Self.storeError(e, reachedBefore: reached.load(ordering: .relaxed), url: url)
        }
    }
}

/// The reader and writer over one open transaction.
struct PGAccess: StoreWriter {
    let pg: PGConnection
    /// A bulk import's transaction (statements may take long).
    var bulk = false
    /// The store, for a second connection beside this one (a read's `eachPlannedRun`).
    var store: PostgresStore?
    /// The settings epochs this transaction read, by streak (`settingsEpochs`).
    let epochs = EpochsRead()

    /// The most rows (array values) a statement over arrays is run prepared for
    /// (`PGConnection.query(reusing:)`): a request's or a check-in's few; a batch's statement is
    /// planned for its values.
    static let fewRows = 64

    /// Runs a statement over arrays of `rows` values each (`unnest($1::text[], …)`): prepared
    /// (`query(reusing:)`) for at most `fewRows`, planned for its values beyond. For one row (a
    /// request's), each array parameter is written `ARRAY[($1::text[])[1]]`, an array the planner
    /// counts one row in: the prepared statement's generic plan is then as cheap as a custom
    /// one, so PostgreSQL takes it and does not plan the statement again at each run (over an
    /// array parameter it would, its generic plan counting 100 rows).
    func query(overArrays sql: String, rows: Int, _ values: any PGEncodable...) throws -> PGResult {
        try pg.query(
            reusing: rows == 1 ? Self.oneRow(sql) : sql, when: rows <= Self.fewRows, parameters: PGParameters(values))
    }

    /// `sql` with each array parameter (`$1::text[]`, `$2::bigint[]`, up to `$9`) written as an
    /// array of its first value; made once for each statement.
    static func oneRow(_ sql: String) -> String {
        if let made = oneRowTexts.withLock({ $0[sql] }) { return made }
        var text = sql
        for n in 1...9 {
            for type in ["text", "bigint"] {
                text = text.replacing("$\(n)::\(type)[]", with: "ARRAY[($\(n)::\(type)[])[1]]")
            }
        }
        oneRowTexts.withLock { $0[sql] = text }
        return text
    }

    private static let oneRowTexts = Mutex<[String: String]>([:])
}

/// The settings epochs one transaction read, by streak: a check-in over the API asks for its
/// streak's up to four times (its settings noted, its run planned, its history, its
/// achievements), each a round trip to the server. Dropped for a streak whose epochs it writes.
final class EpochsRead {
    var byStreak: [String: [SettingsEpoch]] = [:]
}
