import GRDB
import StreakCore
import StreakStore

/// The store at a glance, for `status` without an ID: plain counts and scans (a rare command).
extension SQLiteAccess {
    func userCounts() throws -> UserCounts {
        let row = try Row.fetchOne(db, sql: "SELECT count(*), coalesce(sum(remind != 0), 0) FROM users")
        return UserCounts(users: row?[0] ?? 0, reminded: row?[1] ?? 0)
    }

    func streakCount() throws -> Int {
        try Int.fetchOne(db, sql: "SELECT count(*) FROM schedule") ?? 0
    }

    func deliveryCount(_ state: DeliveryState) throws -> Int {
        try Int.fetchOne(db, sql: "SELECT count(*) FROM deliveries WHERE state = ?", arguments: [state.rawValue]) ?? 0
    }

    func deliveries(_ state: DeliveryState, limit: Int) throws -> [DeliveryRecord] {
        try Row.fetchAll(
            db,
            sql: """
                SELECT n.*, d.sink, d.state AS delivery_state, d.attempts, d.last_attempt, d.last_error
                FROM deliveries d JOIN notifications n ON n.id = d.notification
                WHERE d.state = ? ORDER BY d.last_attempt IS NULL, d.last_attempt DESC, n.due, n.id, d.sink LIMIT ?
                """, arguments: [state.rawValue, limit]
        ).map { row in
            DeliveryRecord(
                notification: try Self.notification(row), sink: row["sink"], state: state, attempts: row["attempts"],
                lastAttempt: (row["last_attempt"] as Int64?).map(Instant.init(seconds:)), lastError: row["last_error"])
        }
    }

    func pendingDeliveries(dueBefore instant: Instant) throws -> Int {
        try Int.fetchOne(
            db,
            sql: """
                SELECT count(*) FROM deliveries d JOIN notifications n ON n.id = d.notification
                WHERE d.state = 'pending' AND n.due < ?
                """, arguments: [instant.seconds]) ?? 0
    }

    func notificationCounts() throws -> [PairCount] {
        let removed = MetaKey.removedNotifications
        return try Row.fetchAll(
            db,
            sql: """
                SELECT kind, state, sum(n) FROM (
                    SELECT kind, state, count(*) AS n FROM notifications GROUP BY kind, state
                    UNION ALL
                    SELECT substr(key, \(removed.count + 1), instr(substr(key, \(removed.count + 1)), ':') - 1),
                        substr(substr(key, \(removed.count + 1)), instr(substr(key, \(removed.count + 1)), ':') + 1),
                        CAST(value AS INTEGER)
                    FROM meta WHERE key LIKE '\(removed)%'
                ) GROUP BY 1, 2
                """
        ).map { PairCount($0[0], $0[1], count: $0[2]) }
    }

    func deliveryCounts() throws -> [PairCount] {
        try Row.fetchAll(db, sql: "SELECT sink, state, count(*) FROM deliveries GROUP BY sink, state").map {
            PairCount($0[0], $0[1], count: $0[2])
        }
    }
}
