import CLibpq

#if canImport(Glibc)
    import Glibc
#endif

/// The asynchronous round trip every statement makes: send, flush, wait for results, each wait
/// bounded by the statement's deadline.
extension PGConnection {
    /// What the server answered to one sent query.
    enum Answer {
        /// Every result was read; the last one (nil for an empty query string).
        case done(PGResult?)
        /// The server waits for COPY data (`PQputCopyData`).
        case copyIn
        /// The server sends COPY data (`PQgetCopyData`; only when asked for: `copyOut`).
        case copyOut
    }

    /// The open libpq connection, or the error that closed it.
    func live() throws -> OpaquePointer {
        if let raw, PQstatus(raw) == CONNECTION_OK { return raw }
        if let raw {  // the server went away since the last call
            let error = lost(raw, "before the statement was sent")
            drop(because: error)
        }
        throw closedBecause ?? PGError(.lost, "the connection to PostgreSQL at \(url) is closed")
    }

    /// Closes the connection after an error that leaves it unusable; later calls fail with it.
    func drop(because error: PGError) {
        if let raw { PQfinish(raw) }
        raw = nil
        var later = error
        later.message = "an earlier error closed this connection: " + error.message
        closedBecause = later
    }

    /// Sends a query with `start` (one of the PQsend… functions), then flushes it.
    func send(_ sql: String, _ deadline: Deadline, _ start: (OpaquePointer) -> Int32) throws {
        let conn = try live()
        lastSent = .now
        guard start(conn) == 1 else {
            let reason = trimmed(String(cString: PQerrorMessage(conn)))
            if PQstatus(conn) != CONNECTION_OK {
                let error = lost(conn, "while sending \(sqlExcerpt(sql))")
                drop(because: error)
                throw error
            }
            throw PGError(.other, "cannot send a statement to PostgreSQL at \(url): \(reason) (in: \(sqlExcerpt(sql)))")
        }
        try flush(conn, sql, deadline)
    }

    /// Waits until libpq has handed everything queued to the kernel.
    func flush(_ conn: OpaquePointer, _ sql: String, _ deadline: Deadline) throws {
        while true {
            let pending = PQflush(conn)
            if pending == 0 { return }
            if pending < 0 { throw dropLost(conn, "while sending \(sqlExcerpt(sql))") }
            try waitForServer(conn, Int16(POLLIN | POLLOUT), sql, deadline)
        }
    }

    /// Waits for the socket; a readable socket is read into libpq at once (as libpq requires
    /// while flushing, and so a server's error or closing is seen).
    func waitForServer(_ conn: OpaquePointer, _ events: Int16, _ sql: String, _ deadline: Deadline) throws {
        let fd = PQsocket(conn)
        guard fd >= 0 else { throw dropLost(conn, "while waiting for \(sqlExcerpt(sql))") }
        guard let ready = waitForSocket(fd, events, until: deadline) else {
            throw timedOut(conn, sql, deadline)
        }
        if ready & Int16(POLLIN | POLLERR | POLLHUP) != 0, PQconsumeInput(conn) == 0, PQisBusy(conn) != 0 {
            // Nothing left to read as a result: the connection broke without a message.
            throw dropLost(conn, "while waiting for \(sqlExcerpt(sql))")
        }
    }

    /// Reads every result of the query in flight; throws the first error among them (after
    /// reading the rest, so the connection stays usable when the server keeps it).
    func answer(_ sql: String, _ deadline: Deadline, copyOut: Bool = false) throws -> Answer {
        // Not live(): the connection may have broken after the server's answer was read, and
        // that answer (57P01, …) says more than "lost".
        guard let conn = raw else {
            throw closedBecause ?? PGError(.lost, "the connection to PostgreSQL at \(url) is closed")
        }
        var last: PGResult?
        var failure: PGError?
        while true {
            if PQisBusy(conn) != 0 {
                try waitForServer(conn, Int16(POLLIN), sql, deadline)
                continue
            }
            guard let result = PQgetResult(conn) else { break }
            switch PQresultStatus(result) {
            case PGRES_COMMAND_OK, PGRES_TUPLES_OK, PGRES_EMPTY_QUERY:
                last = PGResult(result)
            case PGRES_COPY_IN:
                PQclear(result)
                return .copyIn
            case PGRES_COPY_OUT where copyOut && failure == nil:
                PQclear(result)
                return .copyOut
            case PGRES_COPY_OUT, PGRES_COPY_BOTH:
                PQclear(result)
                let error = PGError(.other, "COPY TO STDOUT is run only through copyOut (in: \(sqlExcerpt(sql)))")
                drop(because: error)
                throw error
            default:
                if failure == nil { failure = serverError(conn, result, sql) }
                PQclear(result)
            }
        }
        if PQstatus(conn) != CONNECTION_OK {
            var error = failure ?? lost(conn, "while waiting for \(sqlExcerpt(sql))")
            if error.kind == .other { error.kind = .lost }
            drop(because: error)
            throw error
        }
        if let failure { throw failure }
        return .done(last)
    }

    /// Runs one query to its end: sends it with `start`, reads its answer.
    func run(_ sql: String, timeout: Duration?, _ start: (OpaquePointer) -> Int32) throws -> PGResult? {
        let deadline = Deadline(after: timeout ?? settings.statementDeadline)
        try send(sql, deadline, start)
        switch try answer(sql, deadline) {
        case .done(let result): return result
        case .copyOut: throw PGError(.other, "COPY TO STDOUT is run only through copyOut (in: \(sqlExcerpt(sql)))")
        case .copyIn:
            // Only copy(_:) may start a COPY: end this one, and read the error it leaves.
            let conn = try live()
            _ = PQputCopyEnd(conn, "COPY FROM STDIN is run only through PGConnection.copy")
            try flush(conn, sql, deadline)
            _ = try? answer(sql, deadline)
            throw PGError(.other, "COPY FROM STDIN must be run with copy(_:), not query (in: \(sqlExcerpt(sql)))")
        }
    }

    // MARK: Errors

    /// The connection ended under a statement; `when` says when ("while sending …").
    func lost(_ conn: OpaquePointer, _ when: String) -> PGError {
        let reason = trimmed(String(cString: PQerrorMessage(conn)))
        return PGError(
            .lost,
            "the connection to PostgreSQL at \(url) was lost \(when): "
                + (reason.isEmpty ? "the server closed it" : reason)
                + " (the server may have restarted or shut down, or the session was ended)")
    }

    func dropLost(_ conn: OpaquePointer, _ when: String) -> PGError {
        let error = lost(conn, when)
        drop(because: error)
        return error
    }

    /// The deadline passed: asks the server to cancel the statement, then closes the connection
    /// (its state is unknown; the server rolls back what was open).
    func timedOut(_ conn: OpaquePointer, _ sql: String, _ deadline: Deadline) -> PGError {
        let cancelled = CancelRequest.send(for: conn, patience: .seconds(1))
        let error = PGError(
            .timedOut,
            "PostgreSQL at \(url) did not answer within \(describe(deadline.allowed)) "
                + "(in: \(sqlExcerpt(sql))): timed out; streakd "
                + (cancelled ? "cancelled the statement" : "asked the server to cancel the statement (no answer)")
                + " and closed the connection, which rolls back an open transaction "
                + "(a statement outside one may still complete): is the server stopped or overloaded?")
        drop(because: error)
        return error
    }

    /// An error the server reported in a result.
    func serverError(_ conn: OpaquePointer, _ result: OpaquePointer, _ sql: String) -> PGError {
        func field(_ code: Character) -> String? {
            PQresultErrorField(result, Int32(code.asciiValue!)).map { String(cString: $0) }
        }
        let state = field("C")
        let primary = field("M") ?? trimmed(String(cString: PQresultErrorMessage(result)))
        var kind = state.flatMap(PGError.kind(ofSQLState:)) ?? .other
        if kind == .other && PQstatus(conn) != CONNECTION_OK { kind = .lost }
        var message = "PostgreSQL at \(url): \(field("S") ?? "ERROR"): \(primary)"
        if let state { message += " (SQLSTATE \(state))" }
        if let detail = field("D") { message += "; \(detail)" }
        if let hint = field("H") { message += "; hint: \(hint)" }
        message += " (in: \(sqlExcerpt(sql)))"
        switch (kind, state) {
        case (.timedOut, "57014"):
            message +=
                "; the statement ran longer than statement_timeout "
                + "(\(describe(settings.statementTimeout))) or was cancelled"
        case (.timedOut, "55P03"):
            message += "; it waited longer than lock_timeout (\(describe(settings.lockTimeout))) for a lock"
        case (.timedOut, "25P03"):
            message +=
                "; the transaction was idle longer than idle_in_transaction_session_timeout "
                + "(\(describe(settings.idleInTransactionTimeout))), so the server ended the session"
        case (.lost, _): message += "; the server ended the connection"
        case (.conflict, _): message += "; the transaction was rolled back and may be run again"
        default: break
        }
        return PGError(kind, message, sqlState: state, constraint: field("n"))
    }
}
