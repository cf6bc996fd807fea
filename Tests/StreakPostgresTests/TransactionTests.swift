import Foundation
import StreakPostgres
import StreakTestKit
import Testing

@Suite(.fastTier, .requires(.postgres)) struct TransactionTests {
    struct Oops: Error {}

    @Test func aThrownErrorRollsBack() throws {
        let url = try TestPostgres.freshDatabase()
        let c = try PGConnection(url: url)
        try c.execute("CREATE TABLE t (x bigint)")
        #expect(throws: Oops.self) {
            try c.transaction { c in
                try c.query("INSERT INTO t VALUES (1)")
                throw Oops()
            }
        }
        #expect(!c.inTransaction)
        try c.transaction { c in try c.query("INSERT INTO t VALUES (2)") }
        #expect(try c.query("SELECT array_agg(x)::text FROM t")[0].string(0) == "{2}")
        // Read only, and a serializable one, as asked.
        let readOnly = pgError {
            try c.transaction(readOnly: true) { c in _ = try c.query("INSERT INTO t VALUES (3)") }
        }
        #expect(readOnly?.sqlState == "25006")
        let level = try c.transaction(isolation: .serializable) { c in
            try c.query("SELECT current_setting('transaction_isolation')")[0].string(0)
        }
        #expect(level == "serializable")
        // No nesting; a caught failure makes COMMIT roll back, which is an error too.
        let nested = pgError { try c.transaction { c in try c.transaction { _ in } } }
        #expect(nested?.message.contains("do not nest") == true)
        let swallowed = pgError {
            try c.transaction { c in
                try c.query("INSERT INTO t VALUES (4)")
                _ = try? c.query("SELECT 1/0")
            }
        }
        #expect(swallowed?.message.contains("rolled the transaction back") == true)
        #expect(try c.query("SELECT count(*) FROM t")[0].int64(0) == 1)
    }

    /// A real serialization failure: another session changes the row this REPEATABLE READ
    /// transaction read; the retry sees the new row and succeeds.
    @Test func aSerializationFailureIsRetried() throws {
        let url = try TestPostgres.freshDatabase()
        let c = try PGConnection(url: url)
        let other = try PGConnection(url: url)
        try c.execute("CREATE TABLE counter (id int PRIMARY KEY, n bigint); INSERT INTO counter VALUES (1, 0)")
        var attempts = 0
        let n = try c.retryingTransaction(isolation: .repeatableRead) { c -> Int64 in
            attempts += 1
            let n = try c.query("SELECT n FROM counter WHERE id = 1")[0].int64(0)
            if attempts == 1 { try other.query("UPDATE counter SET n = n + 10 WHERE id = 1") }
            try c.query("UPDATE counter SET n = $1 WHERE id = 1", n + 1)
            return n + 1
        }
        #expect(attempts == 2 && n == 11)
        #expect(try c.query("SELECT n FROM counter")[0].int64(0) == 11)

        // A deadlock's 40P01 too; other errors are not retried, and the attempts are bounded.
        var tries = 0
        let gaveUp = pgError {
            try c.retryingTransaction(attempts: 3) { c in
                tries += 1
                try c.execute("DO $$ BEGIN RAISE EXCEPTION 'deadlock, as it were' USING ERRCODE = '40P01'; END $$")
            }
        }
        #expect(gaveUp?.kind == .conflict && gaveUp?.sqlState == "40P01" && tries == 3)
        tries = 0
        let other42 = pgError {
            try c.retryingTransaction { c in
                tries += 1
                try c.query("SELECT * FROM nowhere")
            }
        }
        #expect(other42?.sqlState == "42P01" && tries == 1)
    }
}

@Suite(.fastTier, .requires(.postgres)) struct MigrationTests {
    static let migrations = [
        PGMigration("001 users", "CREATE TABLE users (id text PRIMARY KEY); CREATE TABLE log (what text)"),
        // Slow enough that concurrent migrators meet inside it.
        PGMigration("002 seed", "SELECT pg_sleep(0.05); INSERT INTO log VALUES ('seeded')"),
        PGMigration("003 index", "CREATE INDEX users_lower ON users (lower(id)); INSERT INTO log VALUES ('indexed')"),
    ]

    @Test func migrationsApplyOnceInOrder() throws {
        let c = try freshConnection()
        #expect(try c.migrate(Array(Self.migrations.prefix(2))) == ["001 users", "002 seed"])
        #expect(try c.migrate(Self.migrations) == ["003 index"])
        #expect(try c.migrate(Self.migrations) == [])
        #expect(try c.query("SELECT count(*) FROM schema_migrations")[0].int64(0) == 3)

        // An older streakd meets the newer database.
        let older = pgError { try c.migrate(Array(Self.migrations.prefix(2))) }
        #expect(older?.kind == .newerSchema)
        #expect(older?.message.contains("\"003 index\"") == true && older?.message.contains("newer streakd") == true)
        // A migration slipped in before an applied one is a mistake in the list.
        let gap = pgError {
            try c.migrate([Self.migrations[0], PGMigration("001b late", "SELECT 1")] + Self.migrations[1...])
        }
        #expect(gap?.message.contains("append-only") == true)
        // A failing migration leaves nothing behind.
        let failing = pgError {
            try c.migrate(Self.migrations + [PGMigration("004 bad", "CREATE TABLE users (x int)")])
        }
        #expect(failing?.sqlState == "42P07")
        #expect(try c.query("SELECT count(*) FROM schema_migrations")[0].int64(0) == 3)
    }

    @Test func eightConcurrentMigratorsApplyEachMigrationOnce() throws {
        let url = try TestPostgres.freshDatabase()
        let outcomes = Outcomes()
        let threads = (0..<8).map { _ in
            Thread {
                outcomes.arrive()
                do {
                    let c = try PGConnection(url: url)
                    outcomes.add(.success(try c.migrate(Self.migrations)))
                } catch {
                    outcomes.add(.failure(error))
                }
            }
        }
        threads.forEach { $0.start() }
        outcomes.waitForAll(8)
        let results = outcomes.results
        #expect(results.count == 8)
        let applied = results.compactMap { try? $0.get() }
        for case .failure(let error) in results { Issue.record("a migrator failed: \(error)") }
        #expect(applied.flatMap { $0 }.sorted() == Self.migrations.map(\.name).sorted())
        let c = try PGConnection(url: url)
        #expect(
            try c.query("SELECT name FROM schema_migrations ORDER BY name").rows.map { try $0.string(0) }
                == Self.migrations.map(\.name))
        #expect(
            try c.query("SELECT what FROM log ORDER BY what").rows.map { try $0.string(0) } == ["indexed", "seeded"])
    }
}

/// Collects what threads report, and lets them start together.
final class Outcomes: @unchecked Sendable {
    private let condition = NSCondition()
    private var arrived = 0
    private var collected: [Result<[String], any Error>] = []

    /// Blocks until all eight threads have arrived, so they connect and migrate at once (60 s at
    /// most: then each goes on alone, and the test still checks what they did).
    func arrive() {
        let deadline = Date().addingTimeInterval(60)
        condition.lock()
        arrived += 1
        condition.broadcast()
        while arrived < 8 && condition.wait(until: deadline) {}
        condition.unlock()
    }

    func add(_ result: Result<[String], any Error>) {
        condition.lock()
        collected.append(result)
        condition.broadcast()
        condition.unlock()
    }

    func waitForAll(_ count: Int) {
        condition.lock()
        while collected.count < count {
            if !condition.wait(until: Date().addingTimeInterval(60)) { break }
        }
        condition.unlock()
    }

    var results: [Result<[String], any Error>] {
        condition.lock()
        defer { condition.unlock() }
        return collected
    }
}
