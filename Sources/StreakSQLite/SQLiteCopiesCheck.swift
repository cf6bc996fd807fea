import Foundation
import GRDB
import StreakStore

/// `store check`'s look at the packed copies of histories (docs/RULES.md "Faults"): SQLite's
/// integrity_check sees a damaged blob as a well-formed value, and a copy that decodes to
/// nonsense sent `preview` and `status` walking dates for ever (issue 31). A copy the readers
/// would take (schedule: `history_version = version`; a planned run: its version the row's) must
/// decode and be the tables' history.
extension SQLiteAccess {
    /// One line per copy that does not decode or is not the tables' history, at most `limit`.
    func packedCopyProblems(limit: Int) throws -> [String] {
        var problems: [String] = []
        // A store from before the copies (migrations 4 and 11) has none: `store check` takes any version.
        func has(_ table: String, _ column: String) throws -> Bool {
            try Row.fetchAll(db, sql: "PRAGMA table_info(\(table))").contains { ($0["name"] as String?) == column }
        }
        guard try has("schedule", "history_version") else { return [] }
        func look(_ sql: String, _ place: (Row) -> String) throws {
            let rows = try Row.fetchCursor(db, sql: sql)
            while problems.count < limit, let row = try rows.next() {
                // Optional reads: GRDB's plain subscript traps on a value of another type.
                let (userID, streak) = ((row["user_id"] as String?) ?? "", (row["streak"] as String?) ?? "")
                let bytes: [UInt8] = (row["history"] as Data?).map { [UInt8]($0) } ?? []
                let copy = bytes.withUnsafeBufferPointer { PackedHistory.unpack($0, user: userID, streak: streak) }
                guard let copy else {
                    problems.append("\(place(row)) (\(userID)/\(streak)): its packed history does not decode")
                    continue
                }
                guard let user = try self.user(userID) else { continue }  // foreign_key_check says it
                if try copy != storedStreak(of: user, streak: streak) {
                    problems.append(
                        "\(place(row)) (\(userID)/\(streak)): its packed history is not the tables' at its version")
                }
            }
        }
        try look(
            """
            SELECT rowid AS row_id, user_id, streak, history FROM schedule
            WHERE history IS NOT NULL AND history_version = version
            """
        ) { "schedule row \(($0["row_id"] as Int64?) ?? -1)" }
        guard try has("runs", "history") else { return problems }
        try look(
            """
            SELECT r.next_at, r.row, r.user_id, r.streak, r.history FROM runs r
            JOIN schedule s ON s.rowid = r.row AND s.version = r.version WHERE r.history IS NOT NULL
            """
        ) { "the run of schedule row \(($0["row"] as Int64?) ?? -1) at \(($0["next_at"] as Int64?) ?? -1)" }
        return problems
    }
}
