import Foundation
import Synchronization
import Testing

/// PostgreSQL for tests: one cluster per test process, started at first use and stopped at exit
/// (or the server `STREAKD_TEST_PG_URL` names), and a fresh database for each test.
public enum TestPostgres {
    /// Whether the tests can run: a server to reuse, or PostgreSQL's programs to start one.
    public static let isAvailable: Bool =
        externalURL != nil || FileManager.default.isExecutableFile(atPath: PostgresCluster.binDirectory + "/postgres")

    /// Stopping, pausing or restarting a server needs one of the test's own: are the programs here?
    public static let canStartClusters = FileManager.default.isExecutableFile(
        atPath: PostgresCluster.binDirectory + "/postgres")

    static let externalURL = ProcessInfo.processInfo.environment["STREAKD_TEST_PG_URL"].flatMap {
        $0.isEmpty ? nil : $0
    }

    /// The shared server: its URL (the `postgres` database), and the cluster when it is ours.
    static let shared: Result<(url: String, cluster: PostgresCluster?), TestPostgresError> = {
        if let externalURL { return .success((externalURL, nil)) }
        do {
            let cluster = try PostgresCluster.start()
            return .success((cluster.url, cluster))
        } catch {
            return .failure(TestPostgresError("cannot start a PostgreSQL cluster for the tests: \(error)"))
        }
    }()

    /// The shared server's URL. Without PostgreSQL the test is skipped, saying so (a failure
    /// when strict); a server that cannot start is a failure.
    public static func sharedURL() throws -> String {
        try Prerequisite.postgres.require()
        return try shared.get().url
    }

    /// The shared cluster's socket directory, when the cluster is ours (not STREAKD_TEST_PG_URL's).
    public static func sharedSocketDirectory() throws -> String? {
        try shared.get().cluster.map { $0.directory + "/sock" }
    }

    private static let created = Mutex<[String]>([])
    private static let dropHook: Void = { atexit { TestPostgres.dropCreated() } }()

    /// A new empty database on the shared server; returns its URL.
    public static func freshDatabase() throws -> String {
        let base = try sharedURL()
        let name = "t_" + String(UInt64.random(in: 0...UInt64.max), radix: 36)
        try psql(base, "CREATE DATABASE \(name)")
        if externalURL != nil {
            _ = dropHook
            created.withLock { $0.append(name) }
        }
        return url(base, database: name)
    }

    /// `url` with another database: libpq lets a later `dbname` parameter override the path's.
    public static func url(_ url: String, database: String) -> String {
        url + (url.contains("?") ? "&" : "?") + "dbname=" + database
    }

    /// Runs SQL with psql (independent of the code under test).
    @discardableResult
    public static func psql(_ url: String, _ sql: String) throws -> String {
        try runTool(
            PostgresCluster.binDirectory + "/psql", [url, "-X", "-q", "-At", "-v", "ON_ERROR_STOP=1", "-c", sql])
    }

    /// A database on the external server is dropped at exit; a cluster of our own is thrown away.
    static func dropCreated() {
        guard let base = externalURL else { return }
        for name in created.withLock({ $0 }) {
            _ = try? psql(base, "DROP DATABASE IF EXISTS \(name) WITH (FORCE)")
        }
    }
}
