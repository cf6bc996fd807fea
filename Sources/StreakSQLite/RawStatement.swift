import GRDB
import GRDBSQLite
import StreakStore

/// A cached statement stepped through the SQLite C API: binds and column reads
/// without GRDB's per-row `Row` and argument arrays. For the hot paths of a run
/// at a million users (a tick's reads and ledger writes, bulk loads).
struct RawStatement {
    let db: Database
    /// Keeps the statement alive: GRDB empties its cache when the schema changes
    /// (an import sets an index aside), and finalizes statements no one holds.
    private let statement: Statement
    var handle: SQLiteStatement { statement.sqliteStatement }

    init(_ db: Database, _ sql: String) throws {
        self.db = db
        statement = try db.cachedStatement(sql: sql)
        sqlite3_reset(handle)
        sqlite3_clear_bindings(handle)
    }

    private static let transient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)

    /// Binds text, copied by SQLite straight from the string's UTF-8 (a short string's too,
    /// which passing it as a C string would copy to the heap first).
    func bind(_ index: Int32, _ value: String) {
        var value = value
        value.withUTF8 { bind(index, $0, copy: true) }
    }
    func bind(_ index: Int32, _ value: String?) {
        if let value { bind(index, value) } else { sqlite3_bind_null(handle, index) }
    }
    /// Binds UTF-8 text, or NULL for nil, without a copy: SQLite reads the bytes in place,
    /// so they must stay as they are until the statement has run (bulk imports).
    func bind(_ index: Int32, _ text: UnsafeBufferPointer<UInt8>?) {
        guard let text else {
            sqlite3_bind_null(handle, index)
            return
        }
        bind(index, text, copy: false)
    }

    /// `copy`: SQLite copies the bytes (else they must stay until the statement has run).
    private func bind(_ index: Int32, _ text: UnsafeBufferPointer<UInt8>, copy: Bool) {
        guard let start = text.baseAddress, !text.isEmpty else {
            // Not a NULL pointer: SQLite reads that as NULL, not ''. SQLite copies this one.
            sqlite3_bind_text(handle, index, "", 0, Self.transient)
            return
        }
        let pointer = UnsafeRawPointer(start).assumingMemoryBound(to: CChar.self)
        sqlite3_bind_text(handle, index, pointer, Int32(text.count), copy ? Self.transient : nil)  // nil: SQLITE_STATIC
    }
    /// Binds a blob, copied by SQLite, or NULL for nil.
    func bind(_ index: Int32, blob: UnsafeBufferPointer<UInt8>?) {
        guard let blob else {
            sqlite3_bind_null(handle, index)
            return
        }
        sqlite3_bind_blob(handle, index, blob.baseAddress, Int32(blob.count), Self.transient)
    }
    func bind(_ index: Int32, _ value: Int64) { sqlite3_bind_int64(handle, index, value) }
    func bind(_ index: Int32, _ value: Int64?) {
        if let value { bind(index, value) } else { sqlite3_bind_null(handle, index) }
    }
    func bind(_ index: Int32, _ value: Int) { bind(index, Int64(value)) }

    /// Steps once: true with a row to read, false when done.
    func step() throws -> Bool {
        switch sqlite3_step(handle) {
        case SQLITE_ROW: return true
        case SQLITE_DONE: return false
        case let code:
            let message = String(cString: sqlite3_errmsg(db.sqliteConnection))
            sqlite3_reset(handle)
            throw DatabaseError(resultCode: ResultCode(rawValue: code), message: message)
        }
    }

    /// Runs a statement that returns no rows; resets it for the next use. Answers the rows it changed.
    @discardableResult
    func run() throws -> Int {
        while try step() {}
        sqlite3_reset(handle)
        return Int(sqlite3_changes(db.sqliteConnection))
    }

    /// Calls `body` for each row, then resets the statement.
    func rows(_ body: () throws -> Void) throws {
        defer { sqlite3_reset(handle) }
        while try step() { try body() }
    }

    /// Ready for the next use: rows done, bindings kept.
    func reset() { sqlite3_reset(handle) }

    /// A text column's bytes, valid until the next step.
    func bytes(_ column: Int32) -> UnsafeBufferPointer<UInt8> {
        guard let bytes = sqlite3_column_text(handle, column) else { return UnsafeBufferPointer(start: nil, count: 0) }
        return UnsafeBufferPointer(start: bytes, count: Int(sqlite3_column_bytes(handle, column)))
    }

    /// A blob column's bytes, valid until the next step.
    func blob(_ column: Int32) -> UnsafeBufferPointer<UInt8> {
        guard let bytes = sqlite3_column_blob(handle, column) else { return UnsafeBufferPointer(start: nil, count: 0) }
        let count = Int(sqlite3_column_bytes(handle, column))
        return UnsafeBufferPointer(start: bytes.assumingMemoryBound(to: UInt8.self), count: count)
    }

    func int64(_ column: Int32) -> Int64 { sqlite3_column_int64(handle, column) }
    func int(_ column: Int32) -> Int { Int(sqlite3_column_int64(handle, column)) }
    func isNull(_ column: Int32) -> Bool { sqlite3_column_type(handle, column) == SQLITE_NULL }
    func optionalInt64(_ column: Int32) -> Int64? { isNull(column) ? nil : int64(column) }

    func text(_ column: Int32) -> String { String(decoding: bytes(column), as: UTF8.self) }
    func optionalText(_ column: Int32) -> String? { isNull(column) ? nil : text(column) }
    /// A text a long read repeats, through `strings`.
    func text(_ column: Int32, interning strings: inout InternedStrings) -> String { strings.string(bytes(column)) }
    func optionalText(_ column: Int32, interning strings: inout InternedStrings) -> String? {
        isNull(column) ? nil : text(column, interning: &strings)
    }
}
