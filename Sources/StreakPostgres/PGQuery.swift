import CLibpq

/// A statement prepared on one connection (`PQsendPrepare`): parsed and planned once, run many times.
public struct PGStatement: Sendable {
    public let name: String
    public let sql: String
}

/// Statements. Each waits at most `timeout` (default: `settings.statementDeadline`) for the
/// server; past it the statement is cancelled, the connection closed, and `.timedOut` thrown.
extension PGConnection {
    /// Runs SQL without parameters, one statement or several separated by `;` (DDL, SET, a
    /// migration); returns the last statement's result.
    @discardableResult
    public func execute(_ sql: String, timeout: Duration? = nil) throws -> PGResult? {
        try run(sql, timeout: timeout) { PQsendQuery($0, sql) }
    }

    /// Runs one statement with parameters `$1`, `$2`, … in text format. Give PostgreSQL the types
    /// it cannot infer in the SQL: `$1::bigint[]`.
    @discardableResult
    public func query(_ sql: String, _ values: any PGEncodable..., timeout: Duration? = nil) throws -> PGResult {
        try query(sql, parameters: PGParameters(values), timeout: timeout)
    }

    /// `binaryResults`: the values come in PostgreSQL's binary forms, which `PGDecodable` reads
    /// for bigint, integer, smallint, text, boolean and bytea columns only (a bytea is its bytes,
    /// not twice as many hex digits for both sides to write and read).
    @discardableResult
    public func query(
        _ sql: String, parameters: PGParameters, binaryResults: Bool = false, timeout: Duration? = nil
    ) throws -> PGResult {
        try checked(parameters, sql)
        let result = try run(sql, timeout: timeout) { conn in
            parameters.withValuePointers { values in
                PQsendQueryParams(conn, sql, Int32(parameters.count), nil, values, nil, nil, binaryResults ? 1 : 0)
            }
        }
        return try one(result, sql)
    }

    /// Sends a statement that does nothing when none was sent for a third of the server's idle
    /// timeout inside an open transaction: a read that works elsewhere meanwhile (preview, while
    /// a second connection streams) keeps its transaction from being ended as idle.
    public func keepAlive() throws {
        guard inTransaction, lastSent.duration(to: .now) > settings.idleInTransactionTimeout / 3 else {
            return
        }
        try execute("SELECT 1")
    }

    /// Prepares a statement for this connection.
    public func prepare(_ sql: String, timeout: Duration? = nil) throws -> PGStatement {
        preparedCount += 1
        let statement = PGStatement(name: "streakd_\(preparedCount)", sql: sql)
        _ = try run(sql, timeout: timeout) { PQsendPrepare($0, statement.name, sql, 0, nil) }
        return statement
    }

    /// Runs one statement as `query` does, prepared on this connection the first time and run
    /// as prepared after (parsed and planned once per connection, not at each run: most of the
    /// server's work for the short statements a request makes, issue 32). Only for statements
    /// whose best plan does not depend on their values: a prepared statement's plan may become
    /// generic (a few rows), wrong for a batch of thousands. `reuse` false runs it as `query`.
    @discardableResult
    public func query(reusing sql: String, when reuse: Bool = true, _ values: any PGEncodable...) throws -> PGResult {
        try query(reusing: sql, when: reuse, parameters: PGParameters(values))
    }

    @discardableResult
    public func query(reusing sql: String, when reuse: Bool = true, parameters: PGParameters) throws -> PGResult {
        guard reuse else { return try query(sql, parameters: parameters) }
        let statement: PGStatement
        if let known = reused[sql] {
            statement = known
        } else {
            statement = try prepare(sql)
            reused[sql] = statement
        }
        return try query(statement, parameters: parameters)
    }

    @discardableResult
    public func query(_ statement: PGStatement, _ values: any PGEncodable..., timeout: Duration? = nil) throws
        -> PGResult
    {
        try query(statement, parameters: PGParameters(values), timeout: timeout)
    }

    @discardableResult
    public func query(_ statement: PGStatement, parameters: PGParameters, timeout: Duration? = nil) throws
        -> PGResult
    {
        try checked(parameters, statement.sql)
        let result = try run(statement.sql, timeout: timeout) { conn in
            parameters.withValuePointers { values in
                PQsendQueryPrepared(conn, statement.name, Int32(parameters.count), values, nil, nil, 0)
            }
        }
        return try one(result, statement.sql)
    }

    private func checked(_ parameters: PGParameters, _ sql: String) throws {
        if let problem = parameters.problem {
            throw PGError(.other, "cannot send a statement to PostgreSQL: \(problem) (in: \(sqlExcerpt(sql)))")
        }
    }

    /// The extended protocol answers one statement with one result.
    private func one(_ result: PGResult?, _ sql: String) throws -> PGResult {
        guard let result else {
            throw PGError(.other, "PostgreSQL returned no result for an empty statement (in: \(sqlExcerpt(sql)))")
        }
        return result
    }
}
