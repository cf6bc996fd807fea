import StreakCore

#if canImport(Glibc)
    import Glibc
#endif

public enum PGIsolation: String, Sendable {
    case readCommitted = "READ COMMITTED"
    case repeatableRead = "REPEATABLE READ"
    case serializable = "SERIALIZABLE"
}

extension PGConnection {
    /// Runs `body` in a transaction: BEGIN, then COMMIT when it returns, ROLLBACK when it throws
    /// (and the error is rethrown). Transactions do not nest.
    ///
    /// A COMMIT that fails because the connection was lost or timed out leaves the outcome
    /// unknown; the error says so.
    @discardableResult
    public func transaction<T>(
        isolation: PGIsolation = .readCommitted, readOnly: Bool = false, _ body: (PGConnection) throws -> T
    ) throws -> T {
        guard !inTransaction else {
            throw PGError(.other, "a transaction is already open on this connection; transactions do not nest")
        }
        try execute("BEGIN ISOLATION LEVEL \(isolation.rawValue)\(readOnly ? " READ ONLY" : "")")
        let value: T
        do {
            value = try body(self)
        } catch {
            rollBack()
            throw error
        }
        let committed: PGResult?
        do {
            committed = try execute("COMMIT")
        } catch var error as PGError where error.kind == .lost || error.kind == .timedOut {
            error.message += "; whether the transaction was committed is not known"
            throw error
        }
        // COMMIT of a transaction that already failed answers ROLLBACK, not an error: a failed
        // statement's error was caught inside `body` and not rethrown.
        if committed?.commandTag == "ROLLBACK" {
            throw PGError(
                .other,
                "a statement in the transaction failed (its error was caught and not rethrown), "
                    + "so COMMIT rolled the transaction back")
        }
        return value
    }

    /// `transaction` run again (up to `attempts` times in all, after a short random pause) when it
    /// fails with a serialization failure or deadlock (40001, 40P01). Only for a `body` that is
    /// safe to run again: one whose effects outside the database, if any, may happen twice.
    @discardableResult
    public func retryingTransaction<T>(
        attempts: Int = 5, isolation: PGIsolation = .readCommitted, readOnly: Bool = false,
        _ body: (PGConnection) throws -> T
    ) throws -> T {
        var attempt = 1
        while true {
            do {
                return try transaction(isolation: isolation, readOnly: readOnly, body)
            } catch let error as PGError where error.isRetryable && attempt < attempts {
                // Up to 10, 20, 40, … ms (at most 250), at random, so the two sides of a
                // conflict do not meet again at once.
                let ceiling = min(10_000 << (attempt - 1), 250_000)
                usleep(UInt32(Int.random(in: 1...ceiling)))
                attempt += 1
            }
        }
    }

    /// The database's clock: `statement_timestamp()` in whole seconds since 1970 (fractions
    /// dropped toward the past), so hosts whose clocks disagree decide alike.
    public func databaseNow(timeout: Duration? = nil) throws -> Instant {
        try query("SELECT floor(extract(epoch FROM statement_timestamp()))::bigint", timeout: timeout).get(0, 0)
    }

    /// Rolls back after a failed body. Errors are left out: the body's error is the one to report,
    /// and a connection that cannot roll back is dropped, which rolls back on the server.
    private func rollBack() {
        guard inTransaction else { return }
        _ = try? execute("ROLLBACK", timeout: min(settings.statementDeadline, .seconds(5)))
    }
}
