/// Something that went wrong talking to PostgreSQL, sorted into the kinds the store turns into
/// exit codes, with a message for people: which server (never the password), what happened,
/// what to check.
public struct PGError: Error, CustomStringConvertible, Sendable {
    public enum Kind: Sendable, Equatable {
        /// The URL cannot be used: unparsable, an unknown parameter, a host list (exit 64).
        case badURL
        /// No connection could be made at the start: no server, no socket, no such database,
        /// refused, or no answer within the connect deadline (exit 69).
        case unreachable
        /// An open connection ended: the server closed it, shut down or restarted (exit 75).
        case lost
        /// A deadline passed: the client's own, or the server's statement, lock or
        /// idle-in-transaction timeout (exit 75).
        case timedOut
        /// A serialization failure or deadlock (40001, 40P01): the transaction was rolled back
        /// and may be run again.
        case conflict
        /// A unique constraint refused a row (23505); `constraint` names it.
        case uniqueViolation
        /// The database has migrations this streakd does not know: a newer streakd wrote them.
        case newerSchema
        /// Anything else: a bad statement, a value the code could not read, a refused COPY row.
        case other
    }

    public var kind: Kind
    /// The five-character SQLSTATE the server sent, if the error came from the server.
    public var sqlState: String?
    /// The constraint the server named (unique violations), if any.
    public var constraint: String?
    public var message: String

    public init(_ kind: Kind, _ message: String, sqlState: String? = nil, constraint: String? = nil) {
        self.kind = kind
        self.message = message
        self.sqlState = sqlState
        self.constraint = constraint
    }

    public var description: String { message }

    /// Whether running the whole transaction again may succeed (40001, 40P01).
    public var isRetryable: Bool { kind == .conflict }

    /// The kind an SQLSTATE implies, if it implies one; nil for the rest (`.other`, or `.lost`
    /// when the connection is gone afterwards).
    static func kind(ofSQLState state: String) -> Kind? {
        switch state {
        case "40001", "40P01": return .conflict
        case "23505": return .uniqueViolation
        // query_canceled (statement_timeout, or our own cancel), lock_not_available
        // (lock_timeout), idle_in_transaction_session_timeout.
        case "57014", "55P03", "25P03": return .timedOut
        // admin_shutdown (pg_terminate_backend, a fast or smart shutdown), crash_shutdown,
        // cannot_connect_now (starting up or shutting down).
        case "57P01", "57P02", "57P03": return .lost
        default: return state.hasPrefix("08") ? .lost : nil
        }
    }
}

/// Shortens SQL for a message: its first line, at most 100 characters.
func sqlExcerpt(_ sql: String) -> String {
    let firstLine = sql.split(separator: "\n", omittingEmptySubsequences: true).first.map(String.init) ?? ""
    let trimmed = firstLine.drop { $0 == " " }
    let shown = trimmed.count > 100 ? trimmed.prefix(97) + "..." : trimmed
    return String(shown) + (sql.contains(Character("\n")) && trimmed.count <= 100 ? " ..." : "")
}
