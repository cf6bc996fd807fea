import GRDB
import StreakCore
import StreakStore

/// Users in SQLite: read, added, changed and removed one at a time.
extension SQLiteAccess {
    static let userColumns = "id, zone, remind_at, remind, language"

    /// Built once: a run looks up a user for each due streak.
    static let userByID = "SELECT \(userColumns) FROM users INDEXED BY users_lookup WHERE id = ?"

    func user(_ id: String) throws -> User? {
        let s = try RawStatement(db, Self.userByID)
        s.bind(1, id)
        var found: User?
        try s.rows { found = Self.user(s) }
        return found
    }

    func users() throws -> [User] {
        let s = try RawStatement(db, "SELECT \(Self.userColumns) FROM users ORDER BY id")
        var users: [User] = []
        try s.rows { users.append(Self.user(s)) }
        return users
    }

    static func user(_ s: RawStatement) -> User {
        User(id: s.text(0), zone: s.text(1), remindAt: s.int(2), remind: s.int64(3) != 0, language: s.optionalText(4))
    }

    func zoneHistory(of user: String) throws -> [StoredZoneChange] {
        let s = try RawStatement(db, "SELECT since, zone FROM user_zones WHERE user_id = ? ORDER BY since")
        s.bind(1, user)
        var changes: [StoredZoneChange] = []
        try s.rows { changes.append(StoredZoneChange(since: Instant(seconds: s.int64(0)), zone: s.text(1))) }
        return changes
    }

    func addUser(_ user: User, at: Instant) throws -> Bool {
        try db.execute(
            sql:
                "INSERT INTO users (id, zone, remind_at, remind, language, created_at) VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING",
            arguments: [user.id, user.zone, user.remindAt, user.remind, user.language, at.seconds])
        guard db.changesCount == 1 else { return false }
        try db.execute(
            sql: "INSERT INTO user_zones (user_id, since, zone) VALUES (?, ?, ?)",
            arguments: [user.id, at.seconds, user.zone])
        return true
    }

    func updateUser(_ user: User, at: Instant) throws {
        let old = try self.user(user.id)
        try db.execute(
            sql: "UPDATE users SET zone = ?, remind_at = ?, remind = ?, language = ? WHERE id = ?",
            arguments: [user.zone, user.remindAt, user.remind, user.language, user.id])
        if let old, old != user {
            try db.execute(
                sql: "UPDATE schedule SET next_at = 0, version = version + 1 WHERE user_id = ?", arguments: [user.id])
        }
        if let old, old.zone != user.zone {
            try db.execute(
                sql: """
                    INSERT INTO user_zones (user_id, since, zone) VALUES (?, ?, ?)
                    ON CONFLICT (user_id, since) DO UPDATE SET zone = excluded.zone
                    """, arguments: [user.id, at.seconds, user.zone])
        }
    }

    func removeUser(_ id: String) throws -> Bool {
        // Runs name their schedule row by rowid, which no foreign key can follow.
        try db.execute(
            sql: "DELETE FROM runs WHERE row IN (SELECT rowid FROM schedule WHERE user_id = ?)", arguments: [id])
        try db.execute(sql: "DELETE FROM users WHERE id = ?", arguments: [id])
        return db.changesCount == 1
    }
}
