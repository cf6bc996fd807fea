import CLibpq

#if canImport(Glibc)
    import Glibc
#endif

extension PGConnection {
    /// Runs `COPY (query) TO STDOUT (FORMAT binary)` and hands each row to `row` as it arrives,
    /// its fields read with `PGCopyRow`: one statement streams what pages of a query would answer,
    /// without libpq building a result of each page. Each wait for the server is bounded by
    /// `timeout` (the statement's deadline). When `row` throws, the connection is closed (a COPY
    /// cannot be stopped halfway and the connection kept) and the error rethrown. Answers the rows.
    @discardableResult
    public func copyOut(_ sql: String, timeout: Duration? = nil, row: (inout PGCopyRow) throws -> Void) throws -> Int {
        let deadline = Deadline(after: timeout ?? settings.statementDeadline)
        try send(sql, deadline) { PQsendQuery($0, sql) }
        guard case .copyOut = try answer(sql, deadline, copyOut: true) else {
            throw PGError(.other, "the statement given to copyOut(_:) is not a COPY … TO STDOUT (in: \(sqlExcerpt(sql)))")
        }
        let conn = try live()
        var rows = 0
        var first = true
        while true {
            var buffer: UnsafeMutablePointer<CChar>?
            let n = PQgetCopyData(conn, &buffer, 1)
            if n == 0 {
                try waitForServer(conn, Int16(POLLIN), sql, deadline)
                continue
            }
            if n == -1 { break }  // the COPY's end; its result follows
            guard n > 0, let buffer else { throw dropLost(conn, "during \(sqlExcerpt(sql))") }
            defer { PQfreemem(buffer) }
            let bytes = UnsafeRawBufferPointer(start: buffer, count: Int(n))
            var tuple = PGCopyRow(bytes: bytes, at: 0)
            if first {
                // The binary format's header: its signature, flags, and an extension to skip.
                first = false
                guard n >= 19, bytes.prefix(11).elementsEqual(Self.copySignature) else {
                    throw protocolError("the COPY's data does not start with the binary format's header", sql)
                }
                tuple.at = 19 + Int(tuple.int32(at: 15))
            }
            guard tuple.at + 2 <= bytes.count else { continue }
            let fields = tuple.int16(at: tuple.at)
            if fields == -1 { continue }  // the trailer
            tuple.at += 2
            tuple.fields = Int(fields)
            do {
                try row(&tuple)
            } catch {
                drop(because: PGError(.other, "streakd stopped reading a COPY TO STDOUT: \(error)"))
                throw error
            }
            rows += 1
        }
        guard case .done = try answer(sql, deadline) else {
            throw PGError(.other, "PostgreSQL did not answer the end of a COPY (in: \(sqlExcerpt(sql)))")
        }
        return rows
    }

    /// The first bytes of a binary COPY: "PGCOPY\n\377\r\n\0".
    static let copySignature: [UInt8] = [0x50, 0x47, 0x43, 0x4F, 0x50, 0x59, 0x0A, 0xFF, 0x0D, 0x0A, 0x00]

    private func protocolError(_ what: String, _ sql: String) -> PGError {
        let error = PGError(.other, "PostgreSQL at \(url): \(what) (in: \(sqlExcerpt(sql)))")
        drop(because: error)
        return error
    }
}

/// One row of a binary COPY, its fields read in order: each is its length (-1: NULL) and its
/// bytes in the type's binary form. Valid only inside `copyOut`'s call of its `row`.
public struct PGCopyRow {
    let bytes: UnsafeRawBufferPointer
    var at: Int
    /// The fields in the row, and those read so far.
    public internal(set) var fields = 0
    var read = 0

    init(bytes: UnsafeRawBufferPointer, at: Int) {
        self.bytes = bytes
        self.at = at
    }

    func int16(at i: Int) -> Int16 { Int16(bigEndian: bytes.loadUnaligned(fromByteOffset: i, as: Int16.self)) }
    func int32(at i: Int) -> Int32 { Int32(bigEndian: bytes.loadUnaligned(fromByteOffset: i, as: Int32.self)) }

    /// The next field's bytes, nil for NULL.
    public mutating func next() throws -> UnsafeBufferPointer<UInt8>? {
        guard read < fields, at + 4 <= bytes.count else { throw Self.short }
        let length = Int(int32(at: at))
        at += 4
        read += 1
        guard length >= 0 else { return nil }
        guard at + length <= bytes.count else { throw Self.short }
        defer { at += length }
        return UnsafeBufferPointer(start: (bytes.baseAddress! + at).assumingMemoryBound(to: UInt8.self), count: length)
    }

    /// The next field as an `int8` (`int4`, `int2` too), nil for NULL.
    public mutating func integer() throws -> Int64? {
        guard let b = try next() else { return nil }
        guard b.count == 8 || b.count == 4 || b.count == 2 else { throw Self.short }
        var value: Int64 = b[0] >= 0x80 ? -1 : 0
        for byte in b { value = value << 8 | Int64(byte) }
        return value
    }

    /// The next field as a `bool`, nil for NULL.
    public mutating func bool() throws -> Bool? {
        guard let b = try next() else { return nil }
        guard b.count == 1 else { throw Self.short }
        return b[0] != 0
    }

    static let short = PGError(.other, "a row of a binary COPY is shorter than its fields say")
}
