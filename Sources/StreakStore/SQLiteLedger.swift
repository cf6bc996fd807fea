import GRDB
import StreakCore

/// The delivery ledger, the run schedule and small settings, in SQLite.
extension SQLiteAccess {
    func ledgerStates(user: String, streak: String) throws -> [String: LedgerState] {
        let s = try RawStatement(db, "SELECT key, state FROM notifications WHERE user_id = ? AND streak = ?")
        s.bind(1, user)
        s.bind(2, streak)
        var result: [String: LedgerState] = [:]
        try s.rows { result[s.text(0)] = LedgerState(rawValue: s.text(1)) }
        return result
    }

    func ledgerStates(keys: [String]) throws -> [String: LedgerState] {
        let s = try RawStatement(db, "SELECT state FROM notifications WHERE key = ?")
        var result: [String: LedgerState] = [:]
        for key in keys {
            s.bind(1, key)
            try s.rows { result[key] = LedgerState(rawValue: s.text(0)) }
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
        // Sorted here, not by SQLite: after an import every streak is due, and SQLite's sorter
        // would hold as much again as the list (ids are ASCII: String order is byte order).
        let s = try RawStatement(db, "SELECT user_id, streak, handled_through, version FROM schedule \(filter)")
        if let through { s.bind(1, through.seconds) }
        var due: [DueStreak] = []
        try s.rows {
            due.append(
                DueStreak(
                    user: s.text(0), streak: s.text(1), handledThrough: s.optionalInt64(2).map(Instant.init(seconds:)),
                    version: s.int(3)))
        }
        due.sort { $0.user != $1.user ? $0.user < $1.user : $0.streak < $1.streak }
        return due
    }

    func packedHistory(of streak: DueStreak) throws -> StoredStreak? {
        let s = try RawStatement(
            db, "SELECT history FROM schedule WHERE user_id = ? AND streak = ? AND history_version = ? AND version = ?")
        s.bind(1, streak.user)
        s.bind(2, streak.streak)
        s.bind(3, streak.version)
        s.bind(4, streak.version)
        var found: StoredStreak?
        try s.rows {
            if !s.isNull(0) { found = PackedHistory.unpack(s.blob(0), user: streak.user, streak: streak.streak) }
        }
        return found
    }

    func meta(_ key: String) throws -> String? {
        try String.fetchOne(db, sql: "SELECT value FROM meta WHERE key = ?", arguments: [key])
    }

    func record(_ e: LedgerEntry, state: LedgerState, sinks: [String], owner: String?, at: Instant) throws -> Bool {
        let s = try RawStatement(
            db,
            """
            INSERT INTO notifications (key, user_id, streak, kind, local_date, due, timezone, local_due,
                streak_length, message, state, recorded_at)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING
            """)
        s.bind(1, e.key)
        s.bind(2, e.user)
        s.bind(3, e.streak)
        s.bind(4, e.kind)
        s.bind(5, e.localDate.day)
        s.bind(6, e.due.seconds)
        s.bind(7, e.timezone)
        s.bind(8, e.localDue)
        s.bind(9, e.length)
        s.bind(10, e.message)
        s.bind(11, state.rawValue)
        s.bind(12, at.seconds)
        try s.run()
        guard db.changesCount == 1 else { return false }
        let deliveryState: DeliveryState = state == .sent ? .pending : .expired
        let d = try RawStatement(db, "INSERT INTO deliveries (key, sink, state, owner) VALUES (?, ?, ?, ?)")
        for sink in sinks {
            d.bind(1, e.key)
            d.bind(2, sink)
            d.bind(3, deliveryState.rawValue)
            d.bind(4, state == .sent ? owner : nil)
            try d.run()
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
        let s = try RawStatement(
            db,
            """
            UPDATE deliveries SET state = ?, attempts = ?, last_attempt = ?, last_error = ?, owner = NULL
            WHERE key = ? AND sink = ?
            """)
        s.bind(1, state.rawValue)
        s.bind(2, attempts)
        s.bind(3, at.seconds)
        s.bind(4, error)
        s.bind(5, key)
        s.bind(6, sink)
        try s.run()
    }

    func schedule(_ streak: DueStreak, nextAt: Instant?, handledThrough: Instant, read: StoredStreak?) throws {
        // A change made since the run read the streak (a newer version) keeps it due, and
        // leaves the history packed here stale: it was packed at the version the run read
        // before reading the history.
        let s = try RawStatement(
            db,
            """
            INSERT INTO schedule (user_id, streak, next_at, handled_through, version, history, history_version)
            VALUES (?1, ?2, ?3, ?4, ?5, ?6, CASE WHEN ?6 IS NOT NULL THEN ?5 END)
            ON CONFLICT (user_id, streak) DO UPDATE SET
                next_at = CASE WHEN schedule.version = ?5 THEN ?3 ELSE 0 END,
                handled_through = max(coalesce(schedule.handled_through, ?4), ?4),
                history = coalesce(?6, schedule.history),
                history_version = CASE WHEN ?6 IS NOT NULL THEN ?5 ELSE schedule.history_version END
            """)
        s.bind(1, streak.user)
        s.bind(2, streak.streak)
        s.bind(3, nextAt?.seconds)
        s.bind(4, handledThrough.seconds)
        s.bind(5, streak.version)
        if let read {
            let packed = PackedHistory.pack(read)
            try packed.withUnsafeBufferPointer {
                s.bind(6, blob: $0)
                try s.run()
            }
        } else {
            s.bind(6, blob: nil)
            try s.run()
        }
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
