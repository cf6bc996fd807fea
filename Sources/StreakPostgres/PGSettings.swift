/// How long a connection waits, and the session settings it asks the server for.
///
/// The defaults suit a job a timer starts every 15 minutes, whose largest statements (batches of
/// tens of thousands of rows) take well under a second: anything that takes a minute is stuck, and
/// ending it with exit 75 lets the next run repair things sooner than waiting would.
public struct PGSettings: Sendable {
    /// The whole connect (every round trip of the handshake, TLS included). A server that is up
    /// answers in milliseconds; a stopped one never does.
    public var connectTimeout: Duration = .seconds(10)
    /// The server's `statement_timeout`: it cancels a statement running longer (57014). A bulk
    /// import raises it for its own transaction (`SET LOCAL statement_timeout`).
    public var statementTimeout: Duration = .seconds(60)
    /// The server's `lock_timeout` (55P03). Shorter than `statementTimeout`, so a statement stuck
    /// behind a lock says so; longer than `idleInTransactionTimeout`, so a statement waiting on a
    /// stopped process's locks outlasts that process's transaction and goes on.
    public var lockTimeout: Duration = .seconds(45)
    /// The server's `idle_in_transaction_session_timeout` (25P03): a streakd stopped or wedged
    /// inside a transaction gives up its row and advisory locks after this, so other hosts' runs
    /// proceed. streakd plans between statements but calls no sink inside a transaction.
    public var idleInTransactionTimeout: Duration = .seconds(30)
    /// How much longer than `statementTimeout` the client itself waits for an answer before it
    /// cancels and drops the connection: the server's own timeout should speak first, with its
    /// clearer message; the client's deadline is for a server that cannot answer at all.
    public var clientGrace: Duration = .seconds(5)
    /// Shown in `pg_stat_activity`; the URL's `application_name` or `PGAPPNAME` wins.
    public var applicationName = "streakd"

    public init() {}

    /// For `streakd serve`, whose clients wait on each request: a server that cannot answer (a
    /// stopped or wedged PostgreSQL, a lock held by a stopped process) turns into a 503 with
    /// `Retry-After` within about 13 s (the deadline, plus the second a cancel may take) rather
    /// than 66 s, under the minute after which clients and proxies give up on their own. Schema
    /// migrations at its start keep the defaults' minute (`PostgresStore`).
    public static var serving: PGSettings {
        var s = PGSettings()
        s.connectTimeout = .seconds(5)
        s.statementTimeout = .seconds(10)
        s.lockTimeout = .seconds(8)
        s.clientGrace = .seconds(2)
        return s
    }

    /// How long one statement may take from the client's side.
    public var statementDeadline: Duration { statementTimeout + clientGrace }

    /// streakd's server settings as `-c` options for the startup packet (no extra round trip).
    /// The URL's own `options` (or `PGOPTIONS`) come after them and so win.
    var serverOptions: String {
        let settings = [
            ("statement_timeout", milliseconds(statementTimeout)),
            ("lock_timeout", milliseconds(lockTimeout)),
            ("idle_in_transaction_session_timeout", milliseconds(idleInTransactionTimeout)),
            // The server checks every 10 s whether the client of a running statement is gone
            // (a killed streakd), and then stops it, freeing its locks (PostgreSQL 14+).
            ("client_connection_check_interval", "10000"),
            // The server notices a vanished client host on TCP within about a minute even when
            // idle (ignored on Unix sockets).
            ("tcp_keepalives_idle", "30"), ("tcp_keepalives_interval", "10"), ("tcp_keepalives_count", "3"),
            // Results read bytea in hex, whatever the database's default.
            ("bytea_output", "hex"),
        ]
        return settings.map { "-c \($0.0)=\($0.1)" }.joined(separator: " ")
    }

    /// libpq connection keywords that the URL may override (they come before it).
    var defaultKeywords: [(String, String)] {
        [
            ("fallback_application_name", applicationName),
            // Client keepalives, for TCP hosts only (libpq ignores them on Unix sockets): a server
            // host that vanishes while the connection idles is noticed within about a minute.
            ("keepalives", "1"), ("keepalives_idle", "30"), ("keepalives_interval", "10"),
            ("keepalives_count", "3"),
        ]
    }
}

/// A duration in whole milliseconds (rounded up, at least 1: 0 would mean "no limit" to the server).
func milliseconds(_ duration: Duration) -> String {
    let (seconds, attoseconds) = duration.components
    let ms = seconds * 1000 + (attoseconds + 999_999_999_999_999) / 1_000_000_000_000_000
    return String(max(ms, 1))
}
