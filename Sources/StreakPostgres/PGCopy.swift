import CLibpq

/// Rows for `COPY … FROM STDIN` in text format. Fields are escaped as COPY requires (backslash,
/// tab, newline, carriage return); rows are sent in chunks of `chunkSize` bytes as they are made,
/// each chunk handed to the kernel before the next is built, so memory does not grow with the
/// number of rows.
///
/// Or in binary format (`binary`, for `COPY … WITH (FORMAT binary)`): each field its length and
/// its bytes, numbers as 8 bytes; nothing to escape, and the server parses no text (7M rows of
/// seven columns: 3.6-3.8 s of the server's time, not 4.0-4.1 s). Texts, bytea, `Int64`, `Bool` and NULL only.
public struct PGCopyWriter {
    static let chunkSize = 256 * 1024

    let connection: PGConnection
    let conn: OpaquePointer
    let sql: String
    let deadline: Deadline
    var buffer: [UInt8] = []
    var scratch: [UInt8] = []
    var fieldsInRow = 0
    var problem: String?
    /// Binary format: where the row's field count goes.
    let binary: Bool
    var rowStart = 0
    /// Rows ended so far.
    public private(set) var rowCount = 0

    init(connection: PGConnection, conn: OpaquePointer, sql: String, deadline: Deadline, binary: Bool = false) {
        self.connection = connection
        self.conn = conn
        self.sql = sql
        self.deadline = deadline
        self.binary = binary
        buffer.reserveCapacity(Self.chunkSize + 4096)
        // The signature, no flags, no header extension.
        if binary { buffer.append(contentsOf: Array("PGCOPY\n".utf8) + [0xFF, 0x0D, 0x0A, 0, 0, 0, 0, 0, 0, 0, 0, 0]) }
    }

    public mutating func append(_ value: Int64) {
        separate()
        if binary {
            appendLength(8)
            withUnsafeBytes(of: UInt64(bitPattern: value).bigEndian) { buffer.append(contentsOf: $0) }
            return
        }
        appendDecimal(value, to: &buffer)
    }

    public mutating func append(_ value: String) {
        separate()
        if binary {
            var value = value
            value.withUTF8 { raw($0) }
            return
        }
        escape(value.utf8)
    }

    /// Any parameter type in its text form (`[UInt8]` as bytea, arrays as array literals, nil as NULL).
    public mutating func append<T: PGEncodable>(_ value: T) {
        separate()
        if binary {
            if problem == nil { problem = "field \(fieldsInRow) is of a type binary COPY here does not take" }
            return
        }
        scratch.removeAll(keepingCapacity: true)
        if value.appendPGText(to: &scratch) {
            escape(scratch)
        } else {
            buffer.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "N")])
        }
    }

    /// UTF-8 text given as bytes, read during the call only.
    public mutating func append(text: UnsafeBufferPointer<UInt8>) {
        separate()
        if binary { return raw(text) }
        escape(text)
    }

    /// Bytes for a bytea column, read during the call only.
    public mutating func append(bytea: UnsafeBufferPointer<UInt8>) {
        separate()
        if binary {
            appendLength(Int32(bytea.count))
            buffer.append(contentsOf: bytea)
            return
        }
        let digits: StaticString = "0123456789abcdef"
        var hex: [UInt8] = [UInt8(ascii: "\\"), UInt8(ascii: "x")]
        hex.reserveCapacity(2 + 2 * bytea.count)
        for b in bytea {
            hex.append(digits.utf8Start[Int(b >> 4)])
            hex.append(digits.utf8Start[Int(b & 15)])
        }
        escape(hex)
    }

    public mutating func append(_ value: Bool) {
        separate()
        if binary {
            appendLength(1)
            buffer.append(value ? 1 : 0)
            return
        }
        buffer.append(UInt8(ascii: value ? "t" : "f"))
    }

    public mutating func appendNull() {
        separate()
        if binary { return appendLength(-1) }
        buffer.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "N")])
    }

    /// Binary format: a text's length and bytes (a NUL byte refused, as in text format).
    private mutating func raw(_ bytes: UnsafeBufferPointer<UInt8>) {
        if problem == nil, bytes.contains(0) {
            problem = "field \(fieldsInRow) contains a NUL byte, which PostgreSQL text cannot hold"
        }
        appendLength(Int32(bytes.count))
        buffer.append(contentsOf: bytes)
    }

    private mutating func appendLength(_ n: Int32) {
        withUnsafeBytes(of: n.bigEndian) { buffer.append(contentsOf: $0) }
    }

    /// Binary format: the end of the rows (before the last flush).
    mutating func appendTrailer() {
        if binary { buffer.append(contentsOf: [0xFF, 0xFF]) }
    }

    /// Ends the row; sends a chunk when one is full.
    public mutating func endRow() throws {
        if let problem {
            throw PGError(.other, "row \(rowCount + 1) of the COPY \(problem) (in: \(sqlExcerpt(sql)))")
        }
        if binary {
            buffer[rowStart] = UInt8(truncatingIfNeeded: fieldsInRow >> 8)
            buffer[rowStart + 1] = UInt8(truncatingIfNeeded: fieldsInRow)
        } else {
            buffer.append(UInt8(ascii: "\n"))
        }
        fieldsInRow = 0
        rowCount += 1
        if buffer.count >= Self.chunkSize { try flush() }
    }

    /// Hands what is buffered to libpq and the kernel.
    mutating func flush() throws {
        guard !buffer.isEmpty else { return }
        try connection.putCopyData(conn, buffer, sql, deadline)
        buffer.removeAll(keepingCapacity: true)
    }

    private mutating func separate() {
        if binary {
            // A row begins with its field count, filled in at its end.
            if fieldsInRow == 0 {
                rowStart = buffer.count
                buffer.append(contentsOf: [0, 0])
            }
        } else if fieldsInRow > 0 {
            buffer.append(UInt8(ascii: "\t"))
        }
        fieldsInRow += 1
    }

    private mutating func escape<Bytes: Sequence<UInt8>>(_ bytes: Bytes) {
        for byte in bytes {
            switch byte {
            case UInt8(ascii: "\\"): buffer.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "\\")])
            case UInt8(ascii: "\n"): buffer.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "n")])
            case UInt8(ascii: "\r"): buffer.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "r")])
            case UInt8(ascii: "\t"): buffer.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "t")])
            case 0:
                if problem == nil {
                    problem = "field \(fieldsInRow) contains a NUL byte, which PostgreSQL text cannot hold"
                }
            default: buffer.append(byte)
            }
        }
    }
}

extension PGConnection {
    /// Runs `COPY table (columns) FROM STDIN` (text format) with the rows `rows` writes; returns
    /// the number of rows copied. When `rows` throws, the COPY is aborted (the server discards
    /// every row of it) and that error is rethrown; the connection stays usable.
    ///
    /// The whole COPY must finish within `timeout`; so must it within the server's
    /// `statement_timeout`, which a large import raises first (`SET LOCAL statement_timeout`).
    @discardableResult
    public func copy(_ sql: String, timeout: Duration? = nil, rows: (inout PGCopyWriter) throws -> Void) throws
        -> Int
    {
        let deadline = Deadline(after: timeout ?? settings.statementDeadline)
        try send(sql, deadline) { PQsendQuery($0, sql) }
        guard case .copyIn = try answer(sql, deadline) else {
            throw PGError(
                .other, "the statement given to copy(_:) is not a COPY … FROM STDIN (in: \(sqlExcerpt(sql)))")
        }
        let conn = try live()
        var writer = PGCopyWriter(connection: self, conn: conn, sql: sql, deadline: deadline)
        do {
            try rows(&writer)
            try writer.flush()
        } catch {
            abortCopy(error, sql, deadline)
            throw error
        }
        try endCopy(conn, nil, sql, deadline)
        guard case .done(let result) = try answer(sql, deadline), let result else {
            throw PGError(.other, "PostgreSQL did not answer the end of a COPY (in: \(sqlExcerpt(sql)))")
        }
        return result.affectedRows
    }

    /// Queues one chunk of COPY data and waits until the kernel has taken it, so libpq's buffer
    /// does not grow with a server slower than the rows.
    func putCopyData(_ conn: OpaquePointer, _ data: [UInt8], _ sql: String, _ deadline: Deadline) throws {
        while true {
            let queued = data.withUnsafeBytes { bytes in
                PQputCopyData(conn, bytes.baseAddress!.assumingMemoryBound(to: CChar.self), Int32(bytes.count))
            }
            if queued == 1 { break }
            if queued < 0 { throw copyFailed(conn, sql, deadline) }
            try waitForServer(conn, Int16(POLLIN | POLLOUT), sql, deadline)
        }
        try flush(conn, sql, deadline)
    }

    /// Sends the end of the COPY: success (nil) or an abort with `reason`.
    func endCopy(_ conn: OpaquePointer, _ reason: String?, _ sql: String, _ deadline: Deadline) throws {
        while true {
            let sent = PQputCopyEnd(conn, reason)
            if sent == 1 { break }
            if sent < 0 { throw copyFailed(conn, sql, deadline) }
            try waitForServer(conn, Int16(POLLIN | POLLOUT), sql, deadline)
        }
        try flush(conn, sql, deadline)
    }

    /// libpq refused COPY data: the server ended the COPY with an error, or the connection broke.
    private func copyFailed(_ conn: OpaquePointer, _ sql: String, _ deadline: Deadline) -> any Error {
        if PQstatus(conn) != CONNECTION_OK { return dropLost(conn, "during \(sqlExcerpt(sql))") }
        do {
            _ = try answer(sql, deadline)
            return PGError(.other, "PostgreSQL ended a COPY early without saying why (in: \(sqlExcerpt(sql)))")
        } catch {
            return error
        }
    }

    /// Tells the server to discard the COPY, and reads its answer (the error it reports for it).
    func abortCopy(_ error: any Error, _ sql: String, _ deadline: Deadline) {
        guard let conn = raw, PQstatus(conn) == CONNECTION_OK else { return }
        do {
            try endCopy(conn, "streakd stopped the COPY: \(error)", sql, deadline)
            _ = try answer(sql, deadline)
        } catch {
            // Expected: the server reports the aborted COPY as an error. A lost connection was
            // dropped; the caller's error is the one that matters.
        }
    }
}

/// A COPY … FROM STDIN left open while the caller produces rows at its own pace (an import that
/// reads its file a record at a time): `startCopy`, then `writer` for each row, then `finish` or
/// `abort`. Nothing else may run on the connection meanwhile.
public final class PGCopyStream {
    public var writer: PGCopyWriter
    let connection: PGConnection
    private var open = true

    init(connection: PGConnection, writer: PGCopyWriter) {
        self.connection = connection
        self.writer = writer
    }

    /// Sends what is left and ends the COPY; answers the rows copied.
    public func finish() throws -> Int {
        guard open else { throw PGError(.other, "this COPY has ended already") }
        open = false
        let (conn, sql, deadline) = (writer.conn, writer.sql, writer.deadline)
        do {
            writer.appendTrailer()
            try writer.flush()
        } catch {
            connection.abortCopy(error, sql, deadline)
            throw error
        }
        try connection.endCopy(conn, nil, sql, deadline)
        guard case .done(let result) = try connection.answer(sql, deadline), let result else {
            throw PGError(.other, "PostgreSQL did not answer the end of a COPY (in: \(sqlExcerpt(sql)))")
        }
        return result.affectedRows
    }

    /// Tells the server to discard every row of the COPY; the connection stays usable.
    public func abort(_ reason: any Error) {
        guard open else { return }
        open = false
        connection.abortCopy(reason, writer.sql, writer.deadline)
    }

    deinit { abort(PGError(.other, "the COPY was left unfinished")) }
}

extension PGConnection {
    /// Starts `COPY table (columns) FROM STDIN` (text format; `binary`: the statement says
    /// `FORMAT binary`) for rows written later through the stream's `writer`; the whole COPY must
    /// end within `timeout`.
    public func startCopy(_ sql: String, timeout: Duration, binary: Bool = false) throws -> PGCopyStream {
        let deadline = Deadline(after: timeout)
        try send(sql, deadline) { PQsendQuery($0, sql) }
        guard case .copyIn = try answer(sql, deadline) else {
            throw PGError(
                .other, "the statement given to startCopy(_:) is not a COPY … FROM STDIN (in: \(sqlExcerpt(sql)))")
        }
        let conn = try live()
        return PGCopyStream(
            connection: self,
            writer: PGCopyWriter(connection: self, conn: conn, sql: sql, deadline: deadline, binary: binary))
    }
}
