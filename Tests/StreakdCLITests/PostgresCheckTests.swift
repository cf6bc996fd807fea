import Foundation
import StreakTestKit
import Testing

/// Issue 31, item 8, on PostgreSQL: `store check` compares each packed copy a reader would take
/// (a schedule row's at its version) with the tables' history, as on SQLite.
@Suite(.fastTier, .requires(.postgres))
struct PostgresCheckTests {
    @Test func storeCheckFindsADamagedPackedHistory() throws {
        // The tick delivers to the journal (the default sink): without a journald it ends 75.
        try Journal.ensureRunning()
        let s = try Sandbox()
        let url = try TestPostgres.freshDatabase()
        #expect(s.runBare(["user", "add", "u1", "--tz", "Europe/Berlin", "--store", url]).code == 0)
        let rows = sevenDays.joined(separator: "\n") + "\n"
        #expect(s.runBare(["import", try s.file("week.jsonl", rows), "--store", url]).code == 0)
        #expect(s.runBare(["tick", "--store", url]).code == 0)
        let copies = try TestPostgres.psql(
            url, "SELECT count(*) FROM schedule WHERE history IS NOT NULL AND history_version = version")
        try #require(copies == "1", "the tick left no current packed copy: \(copies)")
        let ok = s.runBare(["store", "check", "--store", url])
        #expect(ok.code == 0 && ok.out.contains("packed histories"), "\(ok)")
        // One byte of the copy changed, as a bad disk or a stray UPDATE would.
        try TestPostgres.psql(url, "UPDATE schedule SET history = set_byte(history, 3, get_byte(history, 3) # 85)")
        let damaged = s.runBare(["store", "check", "--store", url])
        #expect(damaged.code == 74, "\(damaged)")
        #expect(damaged.out.contains("(u1/daily): its packed history"), "\(damaged)")
        // Readers go on from the tables.
        #expect(s.runBare(["status", "u1", "--store", url]).code == 0)
    }
}
