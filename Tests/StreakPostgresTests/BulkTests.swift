import Foundation
import StreakPostgres
import StreakTestKit
import Testing

/// Batches (one statement over `unnest` arrays) and COPY, the paths that move many rows.
@Suite(.fastTier, .requires(.postgres)) struct BulkTests {
    static let rowCount = 10_000

    @Test func oneUnnestInsertAgainstSingleInserts() throws {
        let c = try freshConnection()
        try c.execute("CREATE TABLE batch (id bigint PRIMARY KEY, user_id text NOT NULL, at bigint)")
        try c.execute("CREATE TABLE single (id bigint PRIMARY KEY, user_id text NOT NULL, at bigint)")
        let ids = (0..<Int64(Self.rowCount)).map { $0 }
        let users = ids.map { "user-\($0 % 977)" }
        let ats: [Int64?] = ids.map { $0 % 10 == 0 ? nil : 1_700_000_000 + $0 }

        let inserted = try c.transaction { c in
            var parameters = PGParameters(reservingBytes: Self.rowCount * 40)
            parameters.append(ids)
            parameters.append(users)
            parameters.append(ats)
            return try c.query(
                "INSERT INTO batch SELECT * FROM unnest($1::bigint[], $2::text[], $3::bigint[])",
                parameters: parameters
            ).affectedRows
        }
        #expect(inserted == Self.rowCount)

        try c.transaction { c in
            let insert = try c.prepare("INSERT INTO single VALUES ($1, $2, $3)")
            for i in 0..<Self.rowCount { try c.query(insert, ids[i], users[i], ats[i]) }
        }
        let differing = try c.query(
            "SELECT count(*) FROM (SELECT * FROM batch EXCEPT SELECT * FROM single) AS d")[0].int64(0)
        #expect(differing == 0)
        #expect(try c.query("SELECT count(*) FROM single")[0].int64(0) == Int64(Self.rowCount))
    }

    @Test func copyOf100000RowsWithAwkwardText() throws {
        let c = try freshConnection()
        try c.execute("CREATE TABLE imported (id bigint PRIMARY KEY, label text, data bytea, flag boolean)")
        let awkward = QueryTests.awkward.filter { $0.count < 1000 }
        let total = 100_000
        let copied = try c.copy("COPY imported (id, label, data, flag) FROM STDIN") { rows in
            for i in 0..<total {
                rows.append(Int64(i))
                if i % 50 == 7 {
                    rows.appendNull()
                } else {
                    rows.append(awkward[i % awkward.count] + (i % 3 == 0 ? "" : "\t\(i)"))
                }
                rows.append(i % 1000 == 0 ? [UInt8]([0, 9, 10, 92, 255]) : [UInt8]?.none)
                rows.append(i % 2 == 0)
                try rows.endRow()
            }
        }
        #expect(copied == total)
        let back = try c.query("SELECT id, label, data, flag FROM imported ORDER BY id")
        #expect(back.count == total)
        var mismatches = 0
        for row in back.rows {
            let i = Int(try row.int64(0))
            let label: String? = i % 50 == 7 ? nil : awkward[i % awkward.count] + (i % 3 == 0 ? "" : "\t\(i)")
            let data: [UInt8]? = i % 1000 == 0 ? [0, 9, 10, 92, 255] : nil
            if try row.get(1) as String? != label || row.get(2) as [UInt8]? != data || row.bool(3) != (i % 2 == 0) {
                mismatches += 1
            }
        }
        #expect(mismatches == 0)
    }

    struct Stop: Error {}

    @Test func aCopyIsAbortedWhenItsRowsThrow() throws {
        let c = try freshConnection()
        try c.execute("CREATE TABLE imported (id bigint PRIMARY KEY)")
        #expect(throws: Stop.self) {
            try c.copy("COPY imported FROM STDIN") { rows in
                for i in 0..<300_000 {  // more than one chunk is sent before the error
                    rows.append(Int64(i))
                    try rows.endRow()
                }
                throw Stop()
            }
        }
        #expect(try c.query("SELECT count(*) FROM imported")[0].int64(0) == 0)
        // A row the server refuses ends the COPY with the server's error; the connection stays usable.
        let duplicate = pgError {
            try c.copy("COPY imported FROM STDIN") { rows in
                for i in [1, 2, 1] as [Int64] {
                    rows.append(i)
                    try rows.endRow()
                }
            }
        }
        #expect(duplicate?.kind == .uniqueViolation, "\(duplicate?.message ?? "")")
        #expect(try c.query("SELECT count(*) FROM imported")[0].int64(0) == 0)
        let nul = pgError {
            try c.copy("COPY imported FROM STDIN") { rows in
                rows.append("1\u{0}")
                try rows.endRow()
            }
        }
        #expect(nul?.message.contains("NUL") == true)
        #expect(
            try c.copy("COPY imported FROM STDIN") { rows in
                rows.append(Int64(5))
                try rows.endRow()
            } == 1)
    }
}
