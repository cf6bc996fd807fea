import Foundation
import StreakPostgres
import StreakStore
import StreakTestKit
import Synchronization
import Testing

/// A server that goes away, never was there, or stops answering ends in a typed error within
/// seconds, never a hang.
@Suite(.fastTier, .requires(.postgres)) struct FaultTests {
    /// Runs `body` on another thread after `delay` seconds.
    func after(_ delay: Double, _ body: @escaping @Sendable () -> Void) {
        Thread.detachNewThread {
            Thread.sleep(forTimeInterval: delay)
            body()
        }
    }

    @Test func aTerminatedBackendIsLostWithinSeconds() throws {
        let url = try TestPostgres.freshDatabase()
        let c = try PGConnection(url: url)
        let pid = c.backendPID
        let terminatedAt = Mutex(ContinuousClock.now)
        after(0.3) {
            terminatedAt.withLock { $0 = .now }
            _ = try? TestPostgres.psql(url, "SELECT pg_terminate_backend(\(pid))")
        }
        let error = pgError { try c.query("SELECT pg_sleep(30)") }
        let seconds = durationSeconds(terminatedAt.withLock { $0 }.duration(to: .now))
        #expect(error?.kind == .lost && error?.sqlState == "57P01", "\(error?.message ?? "")")
        #expect(seconds < 5, "lost after \(seconds) s")
        // The connection is closed; later calls fail at once with the same kind.
        let (later, laterSeconds) = timed { pgError { try c.query("SELECT 1") } }
        #expect(later?.kind == .lost && laterSeconds < 0.1)

        // Terminated while idle: the next statement finds out.
        let idle = try PGConnection(url: url)
        try TestPostgres.psql(url, "SELECT pg_terminate_backend(\(idle.backendPID))")
        Thread.sleep(forTimeInterval: 0.1)
        let (next, nextSeconds) = timed { pgError { try idle.query("SELECT 1") } }
        #expect(next?.kind == .lost && nextSeconds < 1, "\(next?.message ?? "")")
    }

    /// A store's idle connections the server ended meanwhile (a restart, `pg_terminate_backend`)
    /// are dropped when next taken, not used: the next reads all succeed (serve answered 503
    /// once for each of its pooled connections after a restart).
    @Test func idleConnectionsTheServerEndedAreNotUsed() throws {
        let url = try TestPostgres.freshDatabase()
        let store = try PostgresStore(url: url)
        #expect(store.openConnections(4)?.open == 4)
        try TestPostgres.psql(
            url,
            "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE datname = current_database() "
                + "AND pid <> pg_backend_pid()")
        Thread.sleep(forTimeInterval: 0.2)
        for _ in 0..<5 { #expect(throws: Never.self) { _ = try store.read { try $0.users() } } }
    }

    /// A server with no connection slot left is busy (75 for the store), not a wrong URL (69):
    /// the message says so and what to change.
    @Test(.requires(.postgresPrograms)) func noConnectionSlotLeftIsBusyAndSaysSo() throws {
        let cluster = try PostgresCluster.start()
        defer { cluster.discard() }
        // A role allowed one connection: its second finds no slot, as a full server's would.
        try PGConnection(url: cluster.url).execute("CREATE ROLE slots LOGIN CONNECTION LIMIT 1")
        let url = cluster.url + (cluster.url.contains("?") ? "&" : "?") + "user=slots"
        let first = try PGConnection(url: url)
        let refused = pgError { _ = try PGConnection(url: url) }
        #expect(
            refused?.kind == .other
                && refused?.message.contains("the server has no connection left for streakd") == true,
            "\(String(describing: refused))")
        #expect(refused?.message.contains("check the URL") == false)
        first.close()
    }

    @Test(.requires(.postgresPrograms)) func aFastStopMidTransactionIsLostWithinSeconds() throws {
        let cluster = try PostgresCluster.start()
        defer { cluster.discard() }
        let c = try PGConnection(url: cluster.url)
        try c.execute("CREATE TABLE t (x bigint)")
        let stoppedAt = Mutex(ContinuousClock.now)
        let error = pgError {
            try c.transaction { c in
                try c.query("INSERT INTO t VALUES (1)")
                after(0.3) {
                    stoppedAt.withLock { $0 = .now }
                    try? cluster.stop()
                }
                try c.query("SELECT pg_sleep(30)")
            }
        }
        let seconds = durationSeconds(stoppedAt.withLock { $0 }.duration(to: .now))
        #expect(error?.kind == .lost, "\(error?.message ?? "")")
        #expect(seconds < 5, "lost after \(seconds) s")

        // Reconnecting to the stopped server: unreachable at once.
        let (down, downSeconds) = timed { pgError { _ = try PGConnection(url: cluster.url) } }
        #expect(down?.kind == .unreachable && downSeconds < 1, "\(down?.message ?? "")")
        try cluster.restart()
        let again = try PGConnection(url: cluster.url)
        #expect(try again.query("SELECT count(*) FROM t")[0].int64(0) == 0)
    }

    @Test func aMissingSocketOrDatabaseIsUnreachableAtOnce() throws {
        let missingSocket = "postgresql:///postgres?host=/nonexistent/streakd-socket-dir&user=postgres"
        let (socket, socketSeconds) = timed { pgError { _ = try PGConnection(url: missingSocket) } }
        #expect(socket?.kind == .unreachable && socketSeconds < 1)
        #expect(socket?.message.contains("/nonexistent/streakd-socket-dir") == true)

        let missingDatabase = TestPostgres.url(try TestPostgres.sharedURL(), database: "no_such_database")
        let (database, databaseSeconds) = timed { pgError { _ = try PGConnection(url: missingDatabase) } }
        #expect(database?.kind == .unreachable && databaseSeconds < 1)
        #expect(database?.message.contains("\"no_such_database\" does not exist") == true)
    }

    /// The server's own timeouts come first (the client's deadline is theirs plus a grace).
    @Test func theServersTimeoutsAreTimedOut() throws {
        var settings = PGSettings()
        settings.statementTimeout = .milliseconds(300)
        settings.lockTimeout = .milliseconds(200)
        settings.idleInTransactionTimeout = .milliseconds(300)
        let url = try TestPostgres.freshDatabase()
        let c = try PGConnection(url: url, settings: settings)
        let (slow, slowSeconds) = timed { pgError { try c.query("SELECT pg_sleep(5)") } }
        #expect(slow?.kind == .timedOut && slow?.sqlState == "57014" && slowSeconds < 1, "\(slow?.message ?? "")")
        #expect(slow?.message.contains("statement_timeout (0.3 s)") == true, "\(slow?.message ?? "")")
        #expect(try c.query("SELECT 1")[0].int64(0) == 1)  // still usable

        try c.execute("CREATE TABLE t (x bigint); INSERT INTO t VALUES (1)")
        let holder = try PGConnection(url: url)
        try holder.execute("BEGIN; LOCK TABLE t IN ACCESS EXCLUSIVE MODE")
        let locked = pgError { try c.query("SELECT * FROM t") }
        #expect(locked?.kind == .timedOut && locked?.sqlState == "55P03", "\(locked?.message ?? "")")
        try holder.execute("ROLLBACK")

        let idle = pgError {
            try c.transaction { c in
                try c.query("SELECT 1")
                Thread.sleep(forTimeInterval: 0.6)
                try c.query("SELECT 2")
            }
        }
        #expect(idle?.kind == .timedOut && idle?.sqlState == "25P03", "\(idle?.message ?? "")")
        #expect(!c.isOpen)
    }

    @Test(.requires(.postgresPrograms)) func aStoppedServerTimesOut() throws {
        let cluster = try PostgresCluster.start()
        defer { cluster.discard() }
        var settings = PGSettings()
        settings.connectTimeout = .seconds(1)
        let c = try PGConnection(url: cluster.url, settings: settings)
        try c.execute("CREATE TABLE t (x bigint)")
        cluster.signalAll(SIGSTOP)
        defer { cluster.signalAll(SIGCONT) }
        let (error, seconds) = timed {
            pgError { try c.query("INSERT INTO t VALUES (1)", timeout: .milliseconds(500)) }
        }
        #expect(error?.kind == .timedOut && error?.message.contains("timed out") == true, "\(error?.message ?? "")")
        #expect(seconds >= 0.5 && seconds < 2.5, "timed out after \(seconds) s")

        let (connect, connectSeconds) = timed { pgError { _ = try PGConnection(url: cluster.url, settings: settings) } }
        #expect(connect?.kind == .unreachable && connectSeconds >= 1 && connectSeconds < 2, "\(connect?.message ?? "")")

        cluster.signalAll(SIGCONT)
        // Once resumed, the server serves again. (The timed-out INSERT was outside a transaction:
        // the server may still have run it when it read it from the closed socket.)
        let again = try PGConnection(url: cluster.url)
        #expect(try again.query("SELECT count(*) FROM t")[0].int64(0) <= 1)
    }
}

func durationSeconds(_ d: Duration) -> Double {
    Double(d.components.seconds) + Double(d.components.attoseconds) / 1e18
}
