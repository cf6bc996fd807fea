import GRDB
import StreakCore

/// The delivery ledger, the run schedule and small settings, in SQLite.
extension SQLiteAccess {
    func ledgerStates(keys: [String]) throws -> [String: LedgerState] {
        let s = try RawStatement(db, "SELECT state FROM notifications WHERE \(LedgerKey.match(from: 1))")
        var result: [String: LedgerState] = [:]
        for key in keys {
            guard let k = LedgerKey(key) else { continue }
            k.bind(s, from: 1)
            try s.rows { result[key] = LedgerState(rawValue: s.text(0)) }
        }
        return result
    }

    func pendingDeliveries() throws -> [PendingDelivery] {
        try Row.fetchAll(
            db,
            sql: """
                SELECT n.*, d.sink, d.attempts, d.last_attempt, d.owner FROM deliveries d
                JOIN notifications n ON n.id = d.notification WHERE d.state = 'pending' ORDER BY n.due, n.key, d.sink
                """
        ).map { row in
            PendingDelivery(
                id: row["id"], entry: Self.entry(row), sink: row["sink"], attempts: row["attempts"],
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
        guard let k = LedgerKey(key) else { return [:] }
        let s = try RawStatement(
            db,
            "SELECT sink, state FROM deliveries WHERE notification = (SELECT id FROM notifications WHERE \(LedgerKey.match(from: 1)))"
        )
        k.bind(s, from: 1)
        var result: [String: DeliveryState] = [:]
        try s.rows { result[s.text(0)] = DeliveryState(rawValue: s.text(1)) }
        return result
    }

    func waitingDeliveries() throws -> Int {
        try Int.fetchOne(db, sql: "SELECT count(*) FROM deliveries WHERE state = 'pending' AND owner IS NULL") ?? 0
    }

    func dueStreaks(through: Instant?) throws -> [DueStreak] {
        var due: [DueStreak] = []
        // Changed streaks (every streak when `through` is nil), and since when they were handled:
        // the later of their row's mark and their runs'.
        let changed = try RawStatement(
            db,
            """
            SELECT user_id, streak, handled_through, version, rowid,
                (SELECT max(handled_through) FROM runs WHERE row = schedule.rowid), next_at IS NOT NULL
            FROM schedule \(through == nil ? "" : "WHERE next_at IS NOT NULL AND next_at <= ?")
            """)
        if let through { changed.bind(1, through.seconds) }
        try changed.rows {
            let (row, runs) = (changed.optionalInt64(2), changed.optionalInt64(5))
            due.append(
                Self.dueStreak(changed, handled: row.map { max($0, runs ?? $0) } ?? runs, marked: changed.int(6) != 0))
        }
        if let through {
            // Planned runs from the front of the queue, read alone. A run made stale by a change
            // since is planned for nothing: its version is not the streak's (the packed history
            // and the recording check), and the change made the streak due above.
            let runs = try RawStatement(
                db, "SELECT user_id, streak, handled_through, version, row FROM runs WHERE next_at <= ?")
            runs.bind(1, through.seconds)
            try runs.rows { due.append(Self.dueStreak(runs, handled: runs.optionalInt64(2), marked: false)) }
        }
        // Sorted here, not by SQLite: after an import every streak is due, and SQLite's sorter
        // would hold as much again as the list (ids are ASCII: String order is byte order).
        due.sort {
            $0.user != $1.user
                ? $0.user < $1.user
                : $0.streak != $1.streak
                    ? $0.streak < $1.streak
                    : $0.version != $1.version ? $0.version > $1.version : $0.marked && !$1.marked
        }
        // A streak both changed and with a stale run comes once, at its newest version.
        var last: (String, String)?
        due.removeAll { d in
            defer { last = (d.user, d.streak) }
            return last.map { $0 == (d.user, d.streak) } ?? false
        }
        return due
    }

    /// A due streak from the columns `user_id, streak, _, version, row`.
    private static func dueStreak(_ s: RawStatement, handled: Int64?, marked: Bool) -> DueStreak {
        DueStreak(
            user: s.text(0), streak: s.text(1), handledThrough: handled.map(Instant.init(seconds:)), version: s.int(3),
            row: s.int64(4), marked: marked)
    }

    func packedHistory(of streak: DueStreak) throws -> StoredStreak? {
        // By the ids: a run reads a due streak's by its row, with its user (`userAndPackedHistory`).
        let s = try RawStatement(
            db,
            "SELECT history FROM schedule WHERE user_id = ?1 AND streak = ?2 AND history_version = ?3 AND version = ?3")
        s.bind(1, streak.user)
        s.bind(2, streak.streak)
        s.bind(3, streak.version)
        var found: StoredStreak?
        try s.rows {
            if !s.isNull(0) { found = PackedHistory.unpack(s.blob(0), user: streak.user, streak: streak.streak) }
        }
        return found
    }

    /// Built once: a run reads one for each due streak, by its schedule row.
    static let userAndPacked = """
        SELECT u.id, u.zone, u.remind_at, u.remind, s.history, s.history_version = ?3 AND s.version = ?3
        FROM schedule s JOIN users u INDEXED BY users_lookup ON u.id = s.user_id
        WHERE s.rowid = ?4 AND s.user_id = ?1 AND s.streak = ?2
        """

    func userAndPackedHistory(of streak: DueStreak) throws -> (user: User, packed: StoredStreak?)? {
        guard let row = streak.row else { return nil }
        let s = try RawStatement(db, Self.userAndPacked)
        s.bind(1, streak.user)
        s.bind(2, streak.streak)
        s.bind(3, streak.version)
        s.bind(4, row)
        var found: (User, StoredStreak?)?
        try s.rows {
            let current = !s.isNull(4) && s.int(5) == 1
            found = (
                Self.user(s),
                current ? PackedHistory.unpack(s.blob(4), user: streak.user, streak: streak.streak) : nil
            )
        }
        return found
    }

    func meta(_ key: String) throws -> String? {
        try String.fetchOne(db, sql: "SELECT value FROM meta WHERE key = ?", arguments: [key])
    }

    func othersWrites() throws -> Int64 {
        try Int64.fetchOne(db, sql: "PRAGMA data_version") ?? 0
    }

    func record(_ e: LedgerEntry, state: LedgerState, sinks: [String], owner: String?, at: Instant) throws -> Int64? {
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
        guard try s.run() == 1 else { return nil }
        let id = db.lastInsertedRowID
        let deliveryState: DeliveryState = state == .sent ? .pending : .expired
        let d = try RawStatement(db, "INSERT INTO deliveries (notification, sink, state, owner) VALUES (?, ?, ?, ?)")
        for sink in sinks {
            d.bind(1, id)
            d.bind(2, sink)
            d.bind(3, deliveryState.rawValue)
            d.bind(4, state == .sent ? owner : nil)
            try d.run()
        }
        return id
    }

    func claim(id: Int64, sink: String, from: String?, to owner: String) throws -> Bool {
        let s = try RawStatement(
            db,
            "UPDATE deliveries SET owner = ? WHERE notification = ? AND sink = ? AND state = 'pending' AND owner IS ?")
        s.bind(1, owner)
        s.bind(2, id)
        s.bind(3, sink)
        s.bind(4, from)
        return try s.run() == 1
    }

    func finish(
        ids: ClosedRange<Int64>, sink: String, state: DeliveryState, attempts: Int, at: Instant, error: String?
    ) throws {
        let s = try RawStatement(
            db,
            """
            UPDATE deliveries SET state = ?, attempts = ?, last_attempt = ?, last_error = ?, owner = NULL
            WHERE notification BETWEEN ?5 AND ?7 AND sink = ?6
            """)
        s.bind(1, state.rawValue)
        s.bind(2, attempts)
        s.bind(3, at.seconds)
        s.bind(4, error)
        s.bind(5, ids.lowerBound)
        s.bind(6, sink)
        s.bind(7, ids.upperBound)
        try s.run()
    }

    @discardableResult
    func schedule(
        _ streak: DueStreak, nextAt: Instant?, handledThrough: Instant, read: StoredStreak?, unchanged: Bool
    ) throws -> Bool {
        // Nothing written since the streak was read but this run's own recording (which writes
        // each streak once): its row is as read, no lookup needed.
        if unchanged, let row = streak.row {
            return try schedule(
                (row, streak.version, streak.marked), streak, nextAt: nextAt, handledThrough: handledThrough, read: read
            )
        }
        // Its row by rowid when known (one lookup), if still that streak's; else by the ids. A
        // streak removed meanwhile has nothing to plan.
        let find = try RawStatement(
            db,
            "SELECT rowid, version, next_at IS NOT NULL FROM schedule WHERE "
                + (streak.row == nil ? "" : "rowid = ?3 AND ") + "user_id = ?1 AND streak = ?2")
        find.bind(1, streak.user)
        find.bind(2, streak.streak)
        if let row = streak.row { find.bind(3, row) }
        var found: (row: Int64, version: Int, changed: Bool)?
        try find.rows { found = (find.int64(0), find.int(1), find.int(2) != 0) }
        if found == nil, streak.row != nil {
            return try schedule(
                DueStreak(
                    user: streak.user, streak: streak.streak, handledThrough: streak.handledThrough,
                    version: streak.version), nextAt: nextAt, handledThrough: handledThrough, read: read,
                unchanged: false)
        }
        // A change since the run read the streak (a newer version) keeps it marked, so due.
        guard let found, found.version == streak.version else { return false }
        return try schedule(found, streak, nextAt: nextAt, handledThrough: handledThrough, read: read)
    }

    /// Plans the run of the streak in schedule row `found` (at the streak's version).
    private func schedule(
        _ found: (row: Int64, version: Int, changed: Bool), _ streak: DueStreak, nextAt: Instant?,
        handledThrough: Instant, read: StoredStreak?
    ) throws -> Bool {
        let drop = try RawStatement(db, "DELETE FROM runs WHERE row = ?")
        drop.bind(1, found.row)
        try drop.run()
        if let nextAt {
            let add = try RawStatement(
                db,
                "INSERT INTO runs (next_at, row, version, handled_through, user_id, streak) VALUES (?, ?, ?, ?, ?, ?)")
            add.bind(1, nextAt.seconds)
            add.bind(2, found.row)
            add.bind(3, streak.version)
            add.bind(4, handledThrough.seconds)
            add.bind(5, streak.user)
            add.bind(6, streak.streak)
            try add.run()
        }
        // The row itself only when its mark goes or a history read from the tables is packed: an
        // unchanged streak's run writes no page of the schedule.
        guard found.changed || read != nil else { return true }
        func write(_ blob: UnsafeBufferPointer<UInt8>?) throws {
            let s = try RawStatement(
                db,
                """
                UPDATE schedule SET next_at = NULL, handled_through = max(coalesce(handled_through, ?1), ?1),
                    history = coalesce(?2, history),
                    history_version = CASE WHEN ?2 IS NOT NULL THEN ?3 ELSE history_version END
                WHERE rowid = ?4
                """)
            s.bind(1, handledThrough.seconds)
            s.bind(2, blob: blob)
            s.bind(3, streak.version)
            s.bind(4, found.row)
            try s.run()
        }
        if let read { try PackedHistory.pack(read).withUnsafeBufferPointer { try write($0) } } else { try write(nil) }
        return true
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
