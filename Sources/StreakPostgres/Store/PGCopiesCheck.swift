import StreakStore

/// `store check`'s look at the packed copies of histories in the schedule's rows, as SQLite's
/// (`SQLiteAccess.packedCopyProblems`): a copy a reader would take (`history_version = version`)
/// must decode and be the tables' history (issue 31).
extension PGAccess {
    /// One line per copy that does not decode or is not the tables' history, at most `limit`.
    func packedCopyProblems(limit: Int) throws -> [String] {
        var problems: [String] = []
        let rows = try pg.query(
            """
            SELECT id, user_id, streak, history FROM schedule
            WHERE history IS NOT NULL AND history_version = version ORDER BY id
            """, parameters: PGParameters([]), binaryResults: true
        ).rows
        for row in rows where problems.count < limit {
            let (id, userID, streak): (Int64, String, String) = (try row.get(0), try row.string(1), try row.string(2))
            let bytes = try row.bytes(3)
            let copy = bytes.withUnsafeBufferPointer { PackedHistory.unpack($0, user: userID, streak: streak) }
            guard let copy else {
                problems.append("schedule row \(id) (\(userID)/\(streak)): its packed history does not decode")
                continue
            }
            guard let user = try user(userID) else { continue }  // the references' check says it
            if try copy != storedStreak(of: user, streak: streak) {
                problems.append(
                    "schedule row \(id) (\(userID)/\(streak)): its packed history is not the tables' at its version")
            }
        }
        return problems
    }
}
