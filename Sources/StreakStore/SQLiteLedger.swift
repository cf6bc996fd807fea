import GRDB
import StreakCore

/// The delivery ledger, the run schedule and small settings, in SQLite.
extension SQLiteAccess {
    func ledgerStates(user: String, streak: String) throws -> [String: LedgerState] {
        var result: [String: LedgerState] = [:]
        for row in try Row.fetchAll(
            db, sql: "SELECT key, state FROM notifications WHERE user_id = ? AND streak = ?", arguments: [user, streak])
        {
            result[row["key"]] = LedgerState(rawValue: row["state"])
        }
        return result
    }

    func pendingDeliveries() throws -> [PendingDelivery] {
        try Row.fetchAll(
            db,
            sql: """
                SELECT n.*, d.sink, d.attempts, d.last_attempt, d.owner FROM deliveries d
                JOIN notifications n ON n.key = d.key WHERE d.state = 'pending' ORDER BY n.due, n.key, d.sink
                """
        ).map { row in
            PendingDelivery(
                entry: Self.entry(row), sink: row["sink"], attempts: row["attempts"],
                lastAttempt: (row["last_attempt"] as Int64?).map(Instant.init(seconds:)), owner: row["owner"])
        }
    }

    static func entry(_ row: Row) -> LedgerEntry {
        LedgerEntry(
            key: row["key"], kind: row["kind"], user: row["user_id"], streak: row["streak"],
            localDate: LocalDate(day: row["local_date"]), due: Instant(seconds: row["due"]),
            timezone: row["timezone"], localDue: row["local_due"], length: row["streak_length"],
            message: row["message"])
    }

    func deliveryStates(key: String) throws -> [String: DeliveryState] {
        var result: [String: DeliveryState] = [:]
        for row in try Row.fetchAll(db, sql: "SELECT sink, state FROM deliveries WHERE key = ?", arguments: [key]) {
            result[row["sink"]] = DeliveryState(rawValue: row["state"])
        }
        return result
    }

    func waitingDeliveries() throws -> Int {
        try Int.fetchOne(db, sql: "SELECT count(*) FROM deliveries WHERE state = 'pending' AND owner IS NULL") ?? 0
    }

    func dueStreaks(through: Instant?) throws -> [DueStreak] {
        let filter = through == nil ? "" : "WHERE next_at IS NOT NULL AND next_at <= ?"
        return try Row.fetchAll(
            db,
            sql: "SELECT user_id, streak, handled_through, version FROM schedule \(filter) ORDER BY user_id, streak",
            arguments: StatementArguments(through.map { [$0.seconds] } ?? [])
        ).map {
            DueStreak(
                user: $0["user_id"], streak: $0["streak"],
                handledThrough: ($0["handled_through"] as Int64?).map(Instant.init(seconds:)), version: $0["version"])
        }
    }

    func meta(_ key: String) throws -> String? {
        try String.fetchOne(db, sql: "SELECT value FROM meta WHERE key = ?", arguments: [key])
    }

    func record(_ e: LedgerEntry, state: LedgerState, sinks: [String], owner: String?, at: Instant) throws -> Bool {
        try db.execute(
            sql: """
                INSERT INTO notifications (key, user_id, streak, kind, local_date, due, timezone, local_due,
                    streak_length, message, state, recorded_at)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING
                """,
            arguments: [
                e.key, e.user, e.streak, e.kind, e.localDate.day, e.due.seconds, e.timezone, e.localDue, e.length,
                e.message, state.rawValue, at.seconds,
            ])
        guard db.changesCount == 1 else { return false }
        let deliveryState: DeliveryState = state == .sent ? .pending : .expired
        for sink in sinks {
            try db.execute(
                sql: "INSERT INTO deliveries (key, sink, state, owner) VALUES (?, ?, ?, ?)",
                arguments: [e.key, sink, deliveryState.rawValue, state == .sent ? owner : nil])
        }
        return true
    }

    func claim(key: String, sink: String, from: String?, to owner: String) throws -> Bool {
        try db.execute(
            sql: """
                UPDATE deliveries SET owner = ? WHERE key = ? AND sink = ? AND state = 'pending' AND owner IS ?
                """, arguments: [owner, key, sink, from])
        return db.changesCount == 1
    }

    func finish(key: String, sink: String, state: DeliveryState, attempts: Int, at: Instant, error: String?) throws {
        try db.execute(
            sql: """
                UPDATE deliveries SET state = ?, attempts = ?, last_attempt = ?, last_error = ?, owner = NULL
                WHERE key = ? AND sink = ?
                """, arguments: [state.rawValue, attempts, at.seconds, error, key, sink])
    }

    func schedule(_ streak: DueStreak, nextAt: Instant?, handledThrough: Instant) throws {
        // A change made since the run read the streak (a newer version) keeps it due.
        try db.execute(
            sql: """
                INSERT INTO schedule (user_id, streak, next_at, handled_through, version) VALUES (?1, ?2, ?3, ?4, ?5)
                ON CONFLICT (user_id, streak) DO UPDATE SET
                    next_at = CASE WHEN schedule.version = ?5 THEN ?3 ELSE 0 END,
                    handled_through = max(coalesce(schedule.handled_through, ?4), ?4)
                """,
            arguments: [streak.user, streak.streak, nextAt?.seconds, handledThrough.seconds, streak.version])
    }

    /// Marks a streak changed: the next run looks at it afresh.
    func touch(user: String, streak: String) throws {
        try db.execute(
            sql: """
                INSERT INTO schedule (user_id, streak, next_at, version) VALUES (?, ?, 0, 1)
                ON CONFLICT (user_id, streak) DO UPDATE SET next_at = 0, version = version + 1
                """, arguments: [user, streak])
    }

    func rescheduleAll() throws {
        try db.execute(sql: "UPDATE schedule SET next_at = 0, version = version + 1")
    }

    func setMeta(_ key: String, _ value: String) throws {
        try db.execute(
            sql: "INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value",
            arguments: [key, value])
    }
}
