import CLibpq

#if canImport(Glibc)
    import Glibc
#endif

/// One connection to PostgreSQL through libpq, used from one thread at a time.
///
/// Nothing here waits without a deadline: the connect is driven by `PQconnectPoll` and every
/// statement by libpq's asynchronous calls, each wait a `poll(2)` on the connection's socket that
/// ends by the deadline. A statement whose deadline passes is cancelled and the connection closed;
/// any error that leaves the connection unusable closes it too, and later calls fail at once with
/// that error.
public final class PGConnection {
    public let url: PGURL
    public let settings: PGSettings
    /// PGconn*; nil once closed.
    var raw: OpaquePointer?
    /// Why the connection was closed, for the calls that come after.
    var closedBecause: PGError?
    /// Numbers the prepared statements of this connection.
    var preparedCount = 0
    /// The statements `query(reusing:)` prepared on this connection, by their SQL.
    var reused: [String: PGStatement] = [:]
    /// When the last statement was sent (`keepAlive`).
    var lastSent = ContinuousClock.now

    /// Connects, or throws `.unreachable` (no server, socket or database; refused; no answer
    /// within `settings.connectTimeout`).
    public init(_ url: PGURL, settings: PGSettings = PGSettings()) throws {
        self.url = url
        self.settings = settings
        let deadline = Deadline(after: settings.connectTimeout)
        var keywords = settings.defaultKeywords
        keywords.append(("dbname", url.text))  // expanded by libpq: everything before it is a default
        keywords.append(("client_encoding", "UTF8"))  // Swift strings are UTF-8 on both sides
        let userOptions = url.options ?? getenv("PGOPTIONS").map { String(cString: $0) }
        keywords.append(("options", [settings.serverOptions, userOptions ?? ""].joined(separator: " ")))
        guard let conn = withCStringPairs(keywords, { PQconnectStartParams($0, $1, 1) }) else {
            throw PGError(.unreachable, "cannot connect to PostgreSQL at \(url): libpq could not allocate memory")
        }
        raw = conn
        do {
            try finishConnecting(conn, deadline)
        } catch {
            PQfinish(conn)
            raw = nil
            throw error
        }
        PQsetnonblocking(conn, 1)
        // libpq prints notices (CREATE … IF NOT EXISTS "skipping", …) on stderr by default; a
        // command's output is its own.
        PQsetNoticeProcessor(conn, { _, _ in }, nil)
    }

    public convenience init(url: String, settings: PGSettings = PGSettings()) throws {
        try self.init(try PGURL(url), settings: settings)
    }

    deinit { close() }

    /// Closes the connection (an open transaction is rolled back by the server). Idempotent.
    public func close() {
        if let raw { PQfinish(raw) }
        raw = nil
        if closedBecause == nil { closedBecause = PGError(.lost, "the connection to PostgreSQL at \(url) was closed") }
    }

    public var isOpen: Bool { raw.map { PQstatus($0) == CONNECTION_OK } ?? false }

    /// Whether an idle connection is still of use, asked before it is used again: a server that
    /// restarted, or ended it (`pg_terminate_backend`), closed its socket while it idled, which
    /// libpq learns only once it reads it. Between transactions the server sends nothing unasked
    /// (streakd listens for no notifications): anything to read is its goodbye, or the end.
    public var stillOpen: Bool {
        guard let raw, PQstatus(raw) == CONNECTION_OK, !inTransaction else { return false }
        var ready = pollfd(fd: PQsocket(raw), events: Int16(POLLIN), revents: 0)
        return poll(&ready, 1, 0) == 0
    }

    /// The server process serving this connection (for `pg_terminate_backend`, logs).
    public var backendPID: Int32 { raw.map { PQbackendPID($0) } ?? 0 }

    /// The server's version as a number: 150018 for 15.18.
    public var serverVersion: Int32 { raw.map { PQserverVersion($0) } ?? 0 }

    /// Whether a transaction block is open (BEGIN without COMMIT/ROLLBACK yet), failed or not.
    public var inTransaction: Bool {
        guard let raw else { return false }
        let status = PQtransactionStatus(raw)
        return status == PQTRANS_INTRANS || status == PQTRANS_INERROR
    }

    private func finishConnecting(_ conn: OpaquePointer, _ deadline: Deadline) throws {
        // Per libpq: start as if PQconnectPoll had asked to write.
        var state = PGRES_POLLING_WRITING
        if PQstatus(conn) == CONNECTION_BAD { state = PGRES_POLLING_FAILED }
        while state != PGRES_POLLING_OK {
            if state == PGRES_POLLING_FAILED {
                let reason = trimmed(String(cString: PQerrorMessage(conn)))
                // No connection slot left (53300: "too many clients" or connections, or the slots left reserved):
                // a busy server, not a wrong URL; the next run tries again (75).
                if reason.contains("too many c") || reason.contains("connection slots are reserved") {
                    throw PGError(
                        .other,
                        "cannot connect to PostgreSQL at \(url): \(reason); the server has no connection left for "
                            + "streakd: raise its max_connections, or run fewer streakd processes (serve keeps a "
                            + "connection for each request thread)")
                }
                // libpq's own hint ("Is the server running …?") says it better when it gives one.
                let check =
                    reason.firstRange(of: "Is the server running") != nil
                    ? "" : "; check the URL's host, port, user and database"
                throw PGError(.unreachable, "cannot connect to PostgreSQL at \(url): \(reason)\(check)")
            }
            // The socket may change between calls (libpq tries each address of a host name).
            let fd = PQsocket(conn)
            let events = Int16(state == PGRES_POLLING_READING ? POLLIN : POLLOUT)
            if fd < 0 || waitForSocket(fd, events, until: deadline) == nil {
                let what =
                    PQstatus(conn) == CONNECTION_STARTED
                    ? "the connection was not accepted (is the host up, or a firewall dropping packets?)"
                    : "the server took the connection but did not answer (is it stopped or overloaded?)"
                throw PGError(
                    .unreachable,
                    "cannot connect to PostgreSQL at \(url): no answer within \(describe(deadline.allowed)): \(what)")
            }
            state = PQconnectPoll(conn)
        }
    }
}

/// Calls `body` with two NULL-terminated C string arrays, the keywords and values of `pairs`.
func withCStringPairs<T>(
    _ pairs: [(String, String)],
    _ body: (UnsafePointer<UnsafePointer<CChar>?>, UnsafePointer<UnsafePointer<CChar>?>) -> T
) -> T {
    let keys = pairs.map { strdup($0.0) }
    let values = pairs.map { strdup($0.1) }
    defer { (keys + values).forEach { free($0) } }
    let keyPointers = keys.map { UnsafePointer($0) } + [nil]
    let valuePointers = values.map { UnsafePointer($0) } + [nil]
    return keyPointers.withUnsafeBufferPointer { k in
        valuePointers.withUnsafeBufferPointer { v in body(k.baseAddress!, v.baseAddress!) }
    }
}
