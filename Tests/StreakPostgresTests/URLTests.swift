import Foundation
import StreakPostgres
import StreakTestKit
import Testing

/// URLs mean what they mean to libpq (and psql); what streakd cannot use is a usage error that
/// names the problem.
@Suite(.fastTier) struct URLTests {
    @Test func aURLShowsNoPassword() throws {
        let url = try PGURL("postgres://streakd:s3cret@db.example:5433/streakd?password=other&sslmode=require")
        #expect(url.description == "postgres://streakd:***@db.example:5433/streakd?password=***&sslmode=require")
        #expect(
            try PGURL("postgresql:///streakd?host=/run/postgresql").description
                == "postgresql:///streakd?host=/run/postgresql")
        #expect(
            try PGURL("postgresql://u@%2Frun%2Fpostgresql/db").description == "postgresql://u@%2Frun%2Fpostgresql/db")
    }

    @Test func anUnknownParameterIsAUsageErrorNamingIt() throws {
        let error = pgError { _ = try PGURL("postgresql:///streakd?host=/run/postgresql&frobnicate=1") }
        #expect(error?.kind == .badURL)
        #expect(error?.message.contains("\"frobnicate\"") == true, "\(error?.message ?? "")")
        #expect(error?.message.contains("postgresql:///streakd?host=/run/postgresql&frobnicate=1") == true)
    }

    @Test func anUnparsableURLIsAUsageError() throws {
        for text in [
            "postgresql://[::1/db", "postgresql://h/db?sslmode", "postgresql://h/d%zzb", "host=/tmp dbname=x",
            "mysql://h/db",
        ] {
            let error = pgError { _ = try PGURL(text) }
            #expect(error?.kind == .badURL, "\(text)")
        }
        let password = pgError { _ = try PGURL("postgresql://u:hunter2@h/db?bogus=1") }
        #expect(password?.message.contains("hunter2") == false)
    }

    @Test func hostListsAreRefused() throws {
        for text in ["postgresql://h1,h2/db", "postgresql://h1:5432,h2:5433/db", "postgresql:///db?host=/a,/b"] {
            let error = pgError { _ = try PGURL(text) }
            #expect(error?.kind == .badURL, "\(text)")
            #expect(error?.message.contains("several") == true, "\(error?.message ?? "")")
        }
    }
}

/// The forms of a socket URL connect to the same server.
@Suite(.fastTier, .requires(.postgres)) struct URLConnectTests {
    @Test(.requires(.ownPostgres)) func aSocketDirectoryAsHostInEachForm() throws {
        let socket = try #require(try TestPostgres.sharedSocketDirectory())
        let database = try TestPostgres.freshDatabase()
        let name = try PGConnection(url: database).query("SELECT current_database()").get(0, 0, as: String.self)
        let encoded = socket.replacingOccurrences(of: "/", with: "%2F")
        let user = try TestPostgres.psql(try TestPostgres.sharedURL(), "SELECT current_user")
        for url in [
            "postgresql:///\(name)?host=\(socket)&user=\(user)",
            "postgres:///\(name)?host=\(encoded)&user=\(user)",
            "postgresql://\(user)@\(encoded)/\(name)",
            "postgresql://\(user)@\(encoded):5432/\(name)?sslmode=disable&connect_timeout=5",
        ] {
            let connection = try PGConnection(url: url)
            #expect(try connection.query("SELECT current_database()").get(0, 0, as: String.self) == name, "\(url)")
            #expect(
                try connection.query("SELECT current_setting('application_name')").get(0, 0, as: String.self)
                    == "streakd")
        }
    }

    @Test func theSessionSettingsAreThoseOfATimerJob() throws {
        let connection = try freshConnection()
        var settings: [String] = []
        for name in [
            "statement_timeout", "lock_timeout", "idle_in_transaction_session_timeout",
            "client_connection_check_interval", "bytea_output", "client_encoding",
        ] {
            settings.append(try connection.query("SELECT current_setting($1)", name).get(0, 0))
        }
        #expect(settings == ["1min", "45s", "30s", "10s", "hex", "UTF8"])
        // The URL's own options come after streakd's, so they win.
        let url = try TestPostgres.freshDatabase() + "&options=-c%20statement_timeout%3D5s"
        let custom = try PGConnection(url: url)
        #expect(try custom.query("SELECT current_setting('statement_timeout')").get(0, 0, as: String.self) == "5s")
        #expect(try custom.query("SELECT current_setting('lock_timeout')").get(0, 0, as: String.self) == "45s")
    }

    /// PG* variables fill in what the URL leaves out (libpq reads them). Checked in a child
    /// process: setenv here could race other tests' reads of the environment.
    @Test(.requires(.ownPostgres)) func environmentVariablesFillInTheURL() throws {
        let socket = try #require(try TestPostgres.sharedSocketDirectory())
        let database = try TestPostgres.freshDatabase()
        let name = try PGConnection(url: database).query("SELECT current_database()").get(0, 0, as: String.self)
        let user = try TestPostgres.psql(try TestPostgres.sharedURL(), "SELECT current_user")
        var environment = ProcessInfo.processInfo.environment
        environment["PGHOST"] = socket
        environment["PGUSER"] = user
        environment["PGDATABASE"] = name
        environment["PGAPPNAME"] = "from-pgappname"
        environment["STREAKD_PG_ENV_PROBE"] = "postgresql://"
        try runChildTest("EnvironmentProbe", environment: environment)
    }
}

/// Runs in a child process started by `environmentVariablesFillInTheURL`; elsewhere it is skipped.
@Suite(
    .fastTier,
    .enabled(
        if: ProcessInfo.processInfo.environment["STREAKD_PG_ENV_PROBE"] != nil,
        "runs only in the child process URLConnectTests.environmentVariablesFillInTheURL starts"))
struct EnvironmentProbe {
    @Test func probe() throws {
        let url = try #require(ProcessInfo.processInfo.environment["STREAKD_PG_ENV_PROBE"])
        let connection = try PGConnection(url: url)
        let row = try connection.query(
            "SELECT current_database(), current_user, current_setting('application_name')"
        )[0]
        #expect(try row.string(0) == ProcessInfo.processInfo.environment["PGDATABASE"])
        #expect(try row.string(1) == ProcessInfo.processInfo.environment["PGUSER"])
        #expect(try row.string(2) == "from-pgappname")
        // A host list from PGHOST is refused as one in the URL is.
        setenv("PGHOST", "/a,/b", 1)
        #expect(pgError { _ = try PGURL(url) }?.kind == .badURL)
        print("environment probe: connected to \(try row.string(0)) as \(try row.string(1))")
    }
}

/// Runs one suite of this test binary in a child process with `environment` (two minutes at
/// most); fails unless it passes.
func runChildTest(_ suite: String, environment: [String: String]) throws {
    let child = run(
        ["/proc/self/exe", "--testing-library", "swift-testing", "--filter", "StreakPostgresTests.\(suite)"],
        env: environment, timeout: .seconds(120))
    let text = child.out + child.err
    #expect(child.code == 0 && !child.timedOut, "the child test failed:\n\(child)")
    #expect(text.contains("environment probe: connected"), "the child did not connect:\n\(text)")
}
