import GRDB
import GRDBSQLite

/// A prepared statement driven through SQLite's C API: values are bound one
/// by one, with no argument arrays, for loops over millions of rows. Valid
/// only inside the transaction whose `Database` made it.
struct RawStatement {
    let db: Database
    let sql: String
    /// Keeps the statement alive; GRDB finalizes it.
    private let statement: Statement
    private var handle: OpaquePointer { statement.sqliteStatement }

    init(_ db: Database, _ sql: String) throws {
        self.db = db
        self.sql = sql
        statement = try db.makeStatement(sql: sql)
    }

    /// Binds UTF-8 text, or NULL for nil. SQLite reads the bytes in place: they must stay as
    /// they are until the statement has run, and every value is bound again before each run.
    func bind(_ index: Int32, _ text: UnsafeBufferPointer<UInt8>?) {
        guard let text else {
            sqlite3_bind_null(handle, index)
            return
        }
        guard let start = text.baseAddress, !text.isEmpty else {
            // Not a NULL pointer: SQLite reads that as NULL, not ''. SQLite copies this one.
            sqlite3_bind_text(handle, index, "", 0, Self.transient)
            return
        }
        let pointer = UnsafeRawPointer(start).assumingMemoryBound(to: CChar.self)
        sqlite3_bind_text(handle, index, pointer, Int32(text.count), nil)  // SQLITE_STATIC
    }

    func bind(_ index: Int32, _ value: Int64) { sqlite3_bind_int64(handle, index, value) }

    /// Runs the statement to its end; answers the rows it changed.
    func run() throws -> Int {
        defer { sqlite3_reset(handle) }
        var rc = sqlite3_step(handle)
        while rc == SQLITE_ROW { rc = sqlite3_step(handle) }
        guard rc == SQLITE_DONE else { throw error(rc) }
        return Int(sqlite3_changes(db.sqliteConnection))
    }

    /// Steps once: true with a row to read, false at the end (the statement is reset then).
    func step() throws -> Bool {
        let rc = sqlite3_step(handle)
        if rc == SQLITE_ROW { return true }
        sqlite3_reset(handle)
        guard rc == SQLITE_DONE else { throw error(rc) }
        return false
    }

    func reset() { sqlite3_reset(handle) }

    /// A text column of the current row as UTF-8; valid until the next step.
    func text(_ column: Int32) -> UnsafeBufferPointer<UInt8> {
        let count = Int(sqlite3_column_bytes(handle, column))
        guard let start = sqlite3_column_text(handle, column) else { return UnsafeBufferPointer(start: nil, count: 0) }
        return UnsafeBufferPointer(start: start, count: count)
    }

    func int(_ column: Int32) -> Int64 { sqlite3_column_int64(handle, column) }

    /// SQLITE_TRANSIENT: SQLite copies the text during the call.
    private static let transient = unsafeBitCast(OpaquePointer(bitPattern: -1), to: sqlite3_destructor_type.self)

    private func error(_ rc: Int32) -> DatabaseError {
        DatabaseError(
            resultCode: ResultCode(rawValue: rc), message: String(cString: sqlite3_errmsg(db.sqliteConnection)),
            sql: sql)
    }
}
