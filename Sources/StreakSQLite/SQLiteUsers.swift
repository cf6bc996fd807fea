import GRDB
import StreakCore
import StreakStore

/// Users in SQLite: read, added, changed and removed one at a time, read all at once for a
/// bulk import's checks (`userZones`), and added or updated in bulk (`SQLiteUserImport`).
extension SQLiteAccess {
    static let userColumns = "id, zone, remind_at, remind, language, remind_usual"

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
        user(s, id: s.text(0), zone: s.text(1), language: s.optionalText(4))
    }

    /// A user from the columns `userColumns`, with its texts made already (a range read takes the
    /// id its streaks have and the zone and language interned).
    static func user(_ s: RawStatement, id: String, zone: String, language: String?) -> User {
        User(
            id: id, zone: zone, remindAt: s.int(2), remind: s.int64(3) != 0, language: language,
            remindUsual: s.int64(5) != 0)
    }

    func usualUsers() throws -> [String] {
        try String.fetchAll(db, sql: "SELECT id FROM users INDEXED BY users_usual WHERE remind_usual = 1 ORDER BY id")
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
                """
                INSERT INTO users (id, zone, remind_at, remind, language, created_at, remind_usual)
                VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING
                """,
            arguments: [user.id, user.zone, user.remindAt, user.remind, user.language, at.seconds, user.remindUsual])
        guard db.changesCount == 1 else { return false }
        try db.execute(
            sql: "INSERT INTO user_zones (user_id, since, zone) VALUES (?, ?, ?)",
            arguments: [user.id, at.seconds, user.zone])
        return true
    }

    func updateUser(_ user: User, at: Instant) throws {
        let old = try self.user(user.id)
        try db.execute(
            sql: "UPDATE users SET zone = ?, remind_at = ?, remind = ?, language = ?, remind_usual = ? WHERE id = ?",
            arguments: [user.zone, user.remindAt, user.remind, user.language, user.remindUsual, user.id])
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

    /// The one writer excludes every other already.
    func lockUser(_ id: String) throws {}

    func lockUsers(_ ids: [String]) throws -> [User] { try Set(ids).sorted().compactMap { try user($0) } }

    func removeUser(_ id: String) throws -> Bool {
        // Runs name their schedule row by rowid, which no foreign key can follow.
        try db.execute(
            sql: "DELETE FROM runs WHERE row IN (SELECT rowid FROM schedule WHERE user_id = ?)", arguments: [id])
        // The user's notifications leave the ledger; their counts stay (`notificationCounts`).
        try db.execute(
            sql: """
                INSERT INTO meta (key, value)
                SELECT '\(MetaKey.removedNotifications)' || kind || ':' || state, count(*) FROM notifications
                WHERE user_id = ? AND state IN ('sent', 'expired') GROUP BY kind, state
                ON CONFLICT (key) DO UPDATE SET value = CAST(value AS INTEGER) + CAST(excluded.value AS INTEGER)
                """, arguments: [id])
        try db.execute(sql: "DELETE FROM users WHERE id = ?", arguments: [id])
        return db.changesCount == 1
    }

    /// Read a batch of `UserZones.batch` at a time, straight from the statement's columns.
    func userZones(_ body: (UserZones) throws -> Void) throws {
        let users = try RawStatement(db, "SELECT id, zone FROM users")
        defer { users.reset() }
        var batch = UserZones()
        while try users.step() {
            batch.append(id: users.bytes(0), zone: users.bytes(1))
            if batch.count == UserZones.batch {
                try body(batch)
                batch.removeAll()
            }
        }
        if batch.count > 0 { try body(batch) }
    }

    func checkinImport(storedAt: Instant, expectedRows: Int?) throws -> any CheckinImport {
        try SQLiteCheckinImport(db: db, storedAt: storedAt, expectedRows: expectedRows)
    }

    func userImport(at: Instant) throws -> any UserImport { try SQLiteUserImport(db: db, at: at) }
}

/// Users added or updated through prepared statements: the same writes as
/// `addUser` and `updateUser`, with no statement built per user.
final class SQLiteUserImport: UserImport {
    let at: Int64
    let add: RawStatement
    let old: RawStatement
    let update: RawStatement
    let reschedule: RawStatement
    let zoneChange: RawStatement
    var added = 0
    var updated = 0

    init(db: Database, at: Instant) throws {
        self.at = at.seconds
        add = try RawStatement(
            db,
            """
            INSERT INTO users (id, zone, remind_at, remind, created_at, language, remind_usual)
            VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING
            """)
        old = try RawStatement(db, "SELECT zone, remind_at, remind, language, remind_usual FROM users WHERE id = ?")
        // A record without a language keeps the stored one (`user set` without --lang).
        update = try RawStatement(
            db,
            """
            UPDATE users SET zone = ?, remind_at = ?, remind = ?, language = coalesce(?, language), remind_usual = ?
            WHERE id = ?
            """)
        reschedule = try RawStatement(
            db, "UPDATE schedule SET next_at = 0, version = version + 1 WHERE user_id = ?")
        zoneChange = try RawStatement(
            db,
            """
            INSERT INTO user_zones (user_id, since, zone) VALUES (?, ?, ?)
            ON CONFLICT (user_id, since) DO UPDATE SET zone = excluded.zone
            """)
    }

    func put(_ user: User) throws {
        if try add(user) { added += 1 } else { updated += 1 }
    }

    func finish() throws -> (added: Int, updated: Int) { (added, updated) }

    /// True when added.
    private func add(_ user: User) throws -> Bool {
        var (id, zone) = (user.id, user.zone)
        return try id.withUTF8 { id in
            try zone.withUTF8 { zone in
                add.bind(1, id)
                add.bind(2, zone)
                add.bind(3, Int64(user.remindAt))
                add.bind(4, user.remind ? 1 : 0)
                add.bind(5, at)
                add.bind(6, user.language)
                add.bind(7, user.remindUsual ? 1 : 0)
                if try add.run() == 1 {
                    try recordZone(id, zone)
                    return true
                }
                old.bind(1, id)
                guard try old.step() else {  // cannot happen: the id is taken
                    old.reset()
                    return false
                }
                let sameZone = old.bytes(0).elementsEqual(zone)
                let sameReminders =
                    old.int64(1) == Int64(user.remindAt) && (old.int64(2) != 0) == user.remind
                    && (old.int64(4) != 0) == user.remindUsual
                let same = sameZone && sameReminders && (user.language == nil || old.optionalText(3) == user.language)
                old.reset()
                guard !same else { return false }
                update.bind(1, zone)
                update.bind(2, Int64(user.remindAt))
                update.bind(3, user.remind ? 1 : 0)
                update.bind(4, user.language)
                update.bind(5, user.remindUsual ? 1 : 0)
                update.bind(6, id)
                _ = try update.run()
                reschedule.bind(1, id)
                _ = try reschedule.run()
                if !sameZone { try recordZone(id, zone) }
                return false
            }
        }
    }

    private func recordZone(_ id: UnsafeBufferPointer<UInt8>, _ zone: UnsafeBufferPointer<UInt8>) throws {
        zoneChange.bind(1, id)
        zoneChange.bind(2, at)
        zoneChange.bind(3, zone)
        _ = try zoneChange.run()
    }
}
