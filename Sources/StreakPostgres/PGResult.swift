import CLibpq
import StreakStore

#if canImport(Glibc)
    import Glibc
#endif

/// The rows a statement returned (text format, or binary when asked for), read in place from
/// libpq's buffer: a typed accessor parses one value without copying it first.
public final class PGResult {
    let raw: OpaquePointer
    /// The number of rows.
    public let count: Int
    public let columnCount: Int

    init(_ raw: OpaquePointer) {
        self.raw = raw
        count = Int(PQntuples(raw))
        columnCount = Int(PQnfields(raw))
    }

    deinit { PQclear(raw) }

    /// The rows an INSERT, UPDATE, DELETE, MERGE, COPY or SELECT handled (0 for other commands).
    public var affectedRows: Int {
        var n = 0
        var digit = PQcmdTuples(raw)!
        while digit.pointee >= 48 && digit.pointee <= 57 {
            n = n * 10 + Int(digit.pointee - 48)
            digit += 1
        }
        return n
    }

    /// The command tag: "INSERT 0 3", "COMMIT", "ROLLBACK", …
    public var commandTag: String { String(cString: PQcmdStatus(raw)) }

    public func columnName(_ column: Int) -> String { String(cString: PQfname(raw, Int32(column))) }

    public subscript(row: Int) -> PGRow { PGRow(result: self, index: row) }

    public var rows: PGRows { PGRows(result: self) }

    /// The value at (`row`, `column`) as `T`; throws when it is NULL and `T` is not optional, or
    /// when its text is not a `T`.
    public func get<T: PGDecodable>(_ row: Int, _ column: Int, as type: T.Type = T.self) throws -> T {
        guard row >= 0 && row < count && column >= 0 && column < columnCount else {
            throw PGError(
                .other,
                "the code asked for row \(row + 1), column \(column + 1) of a result of \(count) rows "
                    + "and \(columnCount) columns")
        }
        let r = Int32(row)
        let c = Int32(column)
        let text: UnsafeBufferPointer<UInt8>? =
            PQgetisnull(raw, r, c) != 0
            ? nil
            : UnsafeBufferPointer(
                start: UnsafeRawPointer(PQgetvalue(raw, r, c)!).assumingMemoryBound(to: UInt8.self),
                count: Int(PQgetlength(raw, r, c)))
        let binary = PQfformat(raw, c) == 1
        if let value = binary ? T(pgBinary: text) : T(pgText: text) { return value }
        let found =
            text.map {
                binary ? "\($0.count) bytes" : "\"\(String(decoding: $0.prefix(40), as: UTF8.self))\""
            } ?? "NULL"
        throw PGError(
            .other,
            "column \"\(columnName(column))\" of row \(row + 1) holds \(found), which streakd cannot read as "
                + T.pgTypeName)
    }
}

/// One row of a result.
public struct PGRow {
    public let result: PGResult
    public let index: Int

    public func get<T: PGDecodable>(_ column: Int, as type: T.Type = T.self) throws -> T {
        try result.get(index, column)
    }
    public func isNull(_ column: Int) -> Bool { PQgetisnull(result.raw, Int32(index), Int32(column)) != 0 }
    public func int64(_ column: Int) throws -> Int64 { try get(column) }
    public func string(_ column: Int) throws -> String { try get(column) }
    public func bool(_ column: Int) throws -> Bool { try get(column) }
    public func bytes(_ column: Int) throws -> [UInt8] { try get(column) }
}

public struct PGRows: RandomAccessCollection {
    let result: PGResult
    public var startIndex: Int { 0 }
    public var endIndex: Int { result.count }
    public subscript(position: Int) -> PGRow { PGRow(result: result, index: position) }
}

extension PGRow {
    /// A text value (not NULL), through `strings`.
    public func string(_ column: Int, interning strings: inout InternedStrings) throws -> String {
        let (r, c) = (Int32(index), Int32(column))
        guard column < result.columnCount, PQgetisnull(result.raw, r, c) == 0, PQgetlength(result.raw, r, c) > 0 else {
            return try string(column)
        }
        let bytes = UnsafeBufferPointer(
            start: UnsafeRawPointer(PQgetvalue(result.raw, r, c)!).assumingMemoryBound(to: UInt8.self),
            count: Int(PQgetlength(result.raw, r, c)))
        return strings.string(bytes)
    }

    /// A text value or NULL, through `strings`.
    public func optionalString(_ column: Int, interning strings: inout InternedStrings) throws -> String? {
        isNull(column) ? nil : try string(column, interning: &strings)
    }
}
