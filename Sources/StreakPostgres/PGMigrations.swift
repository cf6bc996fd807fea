/// A named change to the schema. Migrations are append-only: once released, a migration's name
/// and SQL never change, and new ones go at the end.
public struct PGMigration: Sendable {
    public var name: String
    public var sql: String

    public init(_ name: String, _ sql: String) {
        self.name = name
        self.sql = sql
    }
}

extension PGConnection {
    /// The advisory lock every streakd holds while it migrates a database: "streakd" in ASCII.
    public static let migrationLockKey: Int64 = 0x73_74_72_65_61_6B_64

    /// Brings the database up to `migrations`, applying each missing one in a transaction of its
    /// own that takes the migration lock (`pg_advisory_xact_lock`), reads `schema_migrations`
    /// (created when missing), runs the migration's SQL and records its name. Any number of
    /// processes may migrate at once: the lock makes them take turns, and each sees the others'
    /// rows. When nothing is missing it costs one short transaction. Returns the names applied.
    ///
    /// Throws `.newerSchema` when the database records a migration not in the list: a newer
    /// streakd wrote it. `statementTimeout` (default: the connection's) is the server's
    /// `statement_timeout` and the client's deadline for each statement of a migration, for DDL
    /// on large tables (and three quarters of it the server's `lock_timeout`).
    @discardableResult
    public func migrate(_ migrations: [PGMigration], statementTimeout: Duration? = nil) throws -> [String] {
        var seen = Set<String>()
        for migration in migrations where !seen.insert(migration.name).inserted {
            throw PGError(.other, "the migration \"\(migration.name)\" is listed twice")
        }
        let timeout = statementTimeout.map { $0 + settings.clientGrace }
        var applied: [String] = []
        while true {
            // READ COMMITTED: each statement sees what was committed before it, so the names
            // read after the lock include those of the migrator that held it before.
            let next: String? = try transaction(isolation: .readCommitted) { c in
                if let statementTimeout {
                    // The lock wait in proportion (the defaults' 45 s to 60 s), for the migration
                    // lock and the DDL's own locks.
                    try c.execute(
                        "SET LOCAL statement_timeout = \(milliseconds(statementTimeout)); "
                            + "SET LOCAL lock_timeout = \(milliseconds(statementTimeout * 3 / 4))")
                }
                try c.query("SELECT pg_advisory_xact_lock($1)", Self.migrationLockKey, timeout: timeout)
                let done = try c.appliedMigrations(timeout)
                guard let pending = try c.firstPending(migrations, done) else { return nil }
                try c.execute(pending.sql, timeout: timeout)
                try c.query(
                    "INSERT INTO schema_migrations (name, applied_at) VALUES ($1, statement_timestamp())",
                    pending.name, timeout: timeout)
                return pending.name
            }
            guard let next else { return applied }
            applied.append(next)
        }
    }

    /// The names in `schema_migrations`, creating the table first when it is missing (under the
    /// migration lock, so two creators cannot race; and only when missing, so a role that may
    /// not create tables can still check an up-to-date database).
    private func appliedMigrations(_ timeout: Duration?) throws -> Set<String> {
        let exists: Bool = try query(
            "SELECT to_regclass('schema_migrations') IS NOT NULL", timeout: timeout
        ).get(0, 0)
        if !exists {
            try execute(
                """
                CREATE TABLE schema_migrations (
                    name text PRIMARY KEY,
                    applied_at timestamptz NOT NULL DEFAULT statement_timestamp()
                )
                """, timeout: timeout)
            return []
        }
        let result = try query("SELECT name FROM schema_migrations", timeout: timeout)
        var names = Set<String>()
        for row in result.rows { names.insert(try row.string(0)) }
        return names
    }

    /// The first migration not yet applied, after checking that the database has none this list
    /// lacks and no gap (a migration listed before an applied one but never applied).
    private func firstPending(_ migrations: [PGMigration], _ done: Set<String>) throws -> PGMigration? {
        let known = Set(migrations.map(\.name))
        let unknown = done.subtracting(known).sorted()
        if !unknown.isEmpty {
            let names = unknown.prefix(5).map { "\"\($0)\"" }.joined(separator: ", ")
            throw PGError(
                .newerSchema,
                "the database at \(url) has migrations this streakd does not know (\(names)"
                    + (unknown.count > 5 ? " and \(unknown.count - 5) more" : "")
                    + "): a newer streakd has upgraded it; upgrade streakd on this host to use it")
        }
        guard let first = migrations.firstIndex(where: { !done.contains($0.name) }) else { return nil }
        if let later = migrations[first...].first(where: { done.contains($0.name) }) {
            throw PGError(
                .other,
                "the migration \"\(migrations[first].name)\" comes before \"\(later.name)\", which the database "
                    + "at \(url) has, but was never applied: migrations are append-only, so new ones go at the end")
        }
        return migrations[first]
    }
}
