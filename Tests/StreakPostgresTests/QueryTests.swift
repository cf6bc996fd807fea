import Foundation
import StreakCore
import StreakPostgres
import StreakStore
import StreakTestKit
import Testing

@Suite(.fastTier, .requires(.postgres)) struct QueryTests {
    static let awkward = [
        "", "plain", "tab\there", "new\nline", "cr\rlf\r\n", "back\\slash", "\\N", "\\.", "quote\"d", "'single'",
        "{braces}", "a,b", "NULL", " spaced ", "ünïcödé ✓ 🐢", String(repeating: "x", count: 10_000),
    ]

    @Test func valuesRoundTrip() throws {
        let c = try freshConnection()
        let row = try c.query(
            """
            SELECT $1::bigint, $2::bigint, $3::bigint, $4::text, $5::boolean, $6::boolean, $7::bytea,
                $8::bigint, $9::text
            """,
            Int64.max, Int64.min, -42, "héllo", true, false, [UInt8]([0, 1, 0x7f, 0x80, 0xff]), Int64?.none,
            String?.none
        )[0]
        #expect(try row.int64(0) == Int64.max)
        #expect(try row.int64(1) == Int64.min)
        #expect(try row.get(2) as Int == -42)
        #expect(try row.string(3) == "héllo")
        #expect(try row.bool(4) == true)
        #expect(try row.bool(5) == false)
        #expect(try row.bytes(6) == [0, 1, 0x7f, 0x80, 0xff])
        #expect(try row.get(7) as Int64? == nil)
        #expect(row.isNull(8))
        #expect(try row.get(3) as String? == "héllo")
        #expect(try c.query("SELECT $1::bytea", [UInt8]())[0].bytes(0) == [])
        #expect(
            try c.query("SELECT $1::bigint", Instant(seconds: 1_700_000_000))[0].get(0) as Instant
                == Instant(seconds: 1_700_000_000))
        for text in Self.awkward {
            #expect(try c.query("SELECT $1::text", text)[0].string(0) == text)
        }
    }

    /// `binaryResults`: the same values from their binary forms (integers of each width by their
    /// length, sign-extended), and a value of another type named in the error.
    @Test func binaryResultsReadTheSameValues() throws {
        let c = try freshConnection()
        var p = PGParameters()
        p.append(-42 as Int64)
        let row = try c.query(
            """
            SELECT 9223372036854775807::bigint, (-9223372036854775808)::bigint, $1::integer, (-7)::smallint,
                2147483647::integer, 'héllo'::text, true, false, '\\x00017f80ff'::bytea, NULL::bigint, ''::bytea
            """, parameters: p, binaryResults: true)[0]
        #expect(try row.int64(0) == Int64.max)
        #expect(try row.int64(1) == Int64.min)
        #expect(try row.get(2) as Int == -42)
        #expect(try row.int64(3) == -7)
        #expect(try row.get(4) as Instant == Instant(seconds: 2_147_483_647))
        #expect(try row.string(5) == "héllo")
        #expect(try row.bool(6) == true)
        #expect(try row.bool(7) == false)
        #expect(try row.bytes(8) == [0, 1, 0x7f, 0x80, 0xff])
        #expect(try row.get(9) as Int64? == nil)
        #expect(try row.bytes(10) == [])
        let wrong = try c.query("SELECT 1.5::float8", parameters: PGParameters(), binaryResults: true)
        #expect(throws: PGError.self) { try wrong.get(0, 0, as: Bool.self) }
        do {
            _ = try wrong.get(0, 0, as: Bool.self)
        } catch let error as PGError {
            #expect(error.message.contains("holds 8 bytes, which streakd cannot read as a boolean"), "\(error)")
        }
    }

    /// Texts read through `InternedStrings` are the texts, repeated or not, clashing in its table or not.
    @Test func internedTextsAreTheTexts() throws {
        let c = try freshConnection()
        let texts = (0..<2000).map { "zone/\($0 % 700)/" + String(repeating: "x", count: $0 % 40) } + Self.awkward
        let back = try c.query(
            "SELECT x FROM unnest($1::text[]) WITH ORDINALITY AS u(x, i) ORDER BY i", parameters: PGParameters([texts]),
            binaryResults: true)
        var strings = InternedStrings()
        #expect(try back.rows.map { try $0.string(0, interning: &strings) } == texts)
        let nulls = try c.query("SELECT NULL::text, ''::text")[0]
        #expect(try nulls.optionalString(0, interning: &strings) == nil)
        #expect(try nulls.optionalString(1, interning: &strings) == "")
    }

    @Test func arraysGoAsArrayLiterals() throws {
        let c = try freshConnection()
        let numbers: [Int64] = [3, -1, Int64.max, Int64.min, 0]
        let back = try c.query("SELECT x FROM unnest($1::bigint[]) WITH ORDINALITY AS u(x, i) ORDER BY i", numbers)
        #expect(try back.rows.map { try $0.int64(0) } == numbers)
        let texts = try c.query("SELECT x FROM unnest($1::text[]) WITH ORDINALITY AS u(x, i) ORDER BY i", Self.awkward)
        #expect(try texts.rows.map { try $0.string(0) } == Self.awkward)
        let optional: [String?] = ["a", nil, "NULL", ""]
        let withNull = try c.query("SELECT x FROM unnest($1::text[]) WITH ORDINALITY AS u(x, i) ORDER BY i", optional)
        #expect(try withNull.rows.map { try $0.get(0) as String? } == optional)
        #expect(try c.query("SELECT cardinality($1::bigint[])", [Int64]())[0].int64(0) == 0)
        #expect(try c.query("SELECT 2 = ANY($1::bigint[])", [1, 2, 3] as [Int64])[0].bool(0))
    }

    @Test func preparedStatementsAndCounts() throws {
        let c = try freshConnection()
        try c.execute("CREATE TABLE t (id bigint PRIMARY KEY, name text NOT NULL)")
        let insert = try c.prepare("INSERT INTO t VALUES ($1, $2)")
        for i in 1...5 { try c.query(insert, Int64(i), "n\(i)") }
        #expect(try c.query("UPDATE t SET name = name || '!' WHERE id > $1", 2).affectedRows == 3)
        #expect(try c.query("SELECT id FROM t ORDER BY id").count == 5)
        #expect(try c.execute("SELECT 1; SELECT 2, 3")?.get(0, 1) as Int64? == 3)
    }

    @Test func serverErrorsSaySQLStateAndKind() throws {
        let c = try freshConnection()
        let missing = pgError { try c.query("SELECT * FROM nowhere") }
        #expect(missing?.kind == .other && missing?.sqlState == "42P01")
        #expect(missing?.message.contains("relation \"nowhere\" does not exist") == true)
        #expect(missing?.message.contains("SELECT * FROM nowhere") == true)
        try c.execute("CREATE TABLE u (k text CONSTRAINT u_key PRIMARY KEY)")
        try c.query("INSERT INTO u VALUES ($1)", "a")
        let duplicate = pgError { try c.query("INSERT INTO u VALUES ($1)", "a") }
        #expect(duplicate?.kind == .uniqueViolation && duplicate?.constraint == "u_key")
        // The connection is still usable after an error.
        #expect(try c.query("SELECT count(*) FROM u")[0].int64(0) == 1)
        let nul = pgError { try c.query("SELECT $1::text", "a\u{0}b") }
        #expect(nul?.message.contains("NUL") == true)
        let notANumber = pgError { _ = try c.query("SELECT 'abc'")[0].int64(0) }
        #expect(notANumber?.message.contains("\"abc\"") == true)
        let null = pgError { _ = try c.query("SELECT NULL::bigint")[0].int64(0) }
        #expect(null?.message.contains("NULL") == true)
    }

    @Test func theDatabaseClockIsInWholeSeconds() throws {
        let c = try freshConnection()
        let now = try c.databaseNow()
        let host = Int64(Date().timeIntervalSince1970)
        #expect(abs(now.seconds - host) <= 2)
    }
}
