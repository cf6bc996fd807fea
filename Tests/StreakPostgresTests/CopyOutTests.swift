import Foundation
import StreakPostgres
import StreakTestKit
import Synchronization
import Testing

/// `copyOut`: a query's rows streamed by one `COPY … TO STDOUT (FORMAT binary)`, each row's
/// fields as the binary format has them; a failure on either side ends in a typed error and a
/// connection that is either usable or closed, never a hang.
@Suite(.fastTier, .requires(.postgres)) struct CopyOutTests {
    struct Row: Equatable {
        var n: Int64?
        var small: Int64?
        var flag: Bool?
        var text: String?
        var bytes: [UInt8]?
    }

    func rows(_ c: PGConnection, _ query: String) throws -> [Row] {
        var found: [Row] = []
        let count = try c.copyOut("COPY (\(query)) TO STDOUT (FORMAT binary)") { row in
            #expect(row.fields == 5)
            found.append(
                Row(
                    n: try row.integer(), small: try row.integer(), flag: try row.bool(),
                    text: try row.next().map { String(decoding: $0, as: UTF8.self) }, bytes: try row.next().map { Array($0) }))
        }
        #expect(count == found.count)
        return found
    }

    @Test func rowsComeAsTheQueryAnswersThem() throws {
        let c = try freshConnection()
        let awkward = QueryTests.awkward
        let found = try rows(
            c,
            """
            SELECT g::bigint * (CASE WHEN g % 2 = 0 THEN -1 ELSE 1 END) * 4294967296,
                (CASE WHEN g % 3 = 0 THEN NULL ELSE g - 50 END)::integer, g % 2 = 0,
                (ARRAY[\(awkward.map { "'\($0.replacingOccurrences(of: "'", with: "''"))'" }.joined(separator: ","))])[g % \(awkward.count) + 1],
                CASE WHEN g % 5 = 0 THEN NULL ELSE decode(lpad(to_hex(g), 8, '0'), 'hex') END
            FROM generate_series(1, 3000) AS g ORDER BY g
            """)
        #expect(found.count == 3000)
        for (i, r) in found.enumerated() {
            let g = Int64(i + 1)
            #expect(r.n == g * (g % 2 == 0 ? -1 : 1) * 4_294_967_296)
            #expect(r.small == (g % 3 == 0 ? nil : g - 50))
            #expect(r.flag == (g % 2 == 0))
            #expect(r.text == awkward[Int(g) % awkward.count])
            #expect(r.bytes == (g % 5 == 0 ? nil : withUnsafeBytes(of: UInt32(g).bigEndian) { Array($0) }))
        }
        // No rows: nothing handed over; the connection goes on.
        #expect(try rows(c, "SELECT 1::bigint, 1, true, 'x', '\\x00'::bytea WHERE false").isEmpty)
        #expect(try c.query("SELECT 2")[0].int64(0) == 2)
    }

    @Test func aFailureEndsTheCopyWithATypedError() throws {
        let c = try freshConnection()
        // The server fails halfway: its error, and the connection still usable.
        var seen = 0
        let failed = pgError {
            try c.copyOut("COPY (SELECT 10 / (5000 - g) FROM generate_series(1, 10000) AS g) TO STDOUT (FORMAT binary)") { _ in
                seen += 1
            }
        }
        #expect(failed?.sqlState == "22012", "\(failed?.message ?? "")")
        #expect(try c.query("SELECT 3")[0].int64(0) == 3)
        // Not a COPY TO STDOUT, and a COPY TO STDOUT run as a query: errors, not hangs.
        #expect(pgError { try c.copyOut("SELECT 1") { _ in } } != nil)
        #expect(pgError { try c.query("COPY (SELECT 1) TO STDOUT") } != nil)
        // The reader stops: its error, and the connection closed (a COPY cannot be left halfway).
        struct Stop: Error {}
        let d = try freshConnection()
        #expect(throws: Stop.self) {
            try d.copyOut("COPY (SELECT g FROM generate_series(1, 100000) AS g) TO STDOUT (FORMAT binary)") { _ in
                throw Stop()
            }
        }
        #expect(!d.isOpen)
        #expect(pgError { try d.query("SELECT 1") }?.message.contains("closed this connection") == true)
        // The backend ends mid-COPY: lost, within seconds.
        let url = try TestPostgres.freshDatabase()
        let e = try PGConnection(url: url)
        let pid = e.backendPID
        Thread.detachNewThread {
            Thread.sleep(forTimeInterval: 0.5)
            _ = try? TestPostgres.psql(url, "SELECT pg_terminate_backend(\(pid))")
        }
        let (lost, seconds) = timed {
            pgError {
                try e.copyOut(
                    "COPY (SELECT g, pg_sleep(CASE WHEN g = 2 THEN 30 ELSE 0 END) FROM generate_series(1, 3) AS g) TO STDOUT (FORMAT binary)"
                ) { _ in }
            }
        }
        #expect(lost?.kind == .lost, "\(lost?.message ?? "")")
        #expect(seconds < 10)
    }
}
