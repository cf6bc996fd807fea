import GRDB
import StreakCore
import StreakStore

/// The delivery ledger and the runs delivering it, in SQLite.
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

    func eachLedgerKey(
        dates: ClosedRange<LocalDate>, _ body: (String, String, String, LocalDate) throws -> Void
    ) throws {
        // The unique index holds the key's parts, date first: a range of it, read alone.
        let s = try RawStatement(
            db,
            """
            SELECT kind, user_id, streak, local_date FROM notifications INDEXED BY notifications_key
            WHERE local_date BETWEEN ? AND ?
            """)
        s.bind(1, Int64(dates.lowerBound.day))
        s.bind(2, Int64(dates.upperBound.day))
        var strings = InternedStrings()  // kinds and streak ids repeat
        try s.rows {
            try body(s.text(0, interning: &strings), s.text(1), s.text(2, interning: &strings), LocalDate(day: s.int(3)))
        }
    }

    func pendingDeliveries() throws -> [PendingDelivery] {
        try Row.fetchAll(
            db,
            sql: """
                SELECT n.*, d.sink, d.attempts, d.last_attempt, d.owner, d.retry_at FROM deliveries d
                JOIN notifications n ON n.id = d.notification WHERE d.state = 'pending' ORDER BY n.due, n.key, d.sink
                """
        ).map { row in
            PendingDelivery(
                id: row["id"], notification: try Self.notification(row), sink: row["sink"],
                attempts: row["attempts"],
                lastAttempt: (row["last_attempt"] as Int64?).map(Instant.init(seconds:)), owner: row["owner"],
                retryAt: (row["retry_at"] as Int64?).map(Instant.init(seconds:)))
        }
    }

    /// A recorded notification; a kind this streakd does not know (a newer one wrote it) is an error.
    static func notification(_ row: Row) throws -> Notification {
        let name: String = row["kind"]
        guard let kind = NotificationKind(rawValue: name) else {
            throw StoreError(
                .damaged,
                "the ledger holds notification \(row["id"] as Int64) of an unknown kind \"\(name)\" (written by a newer streakd?)"
            )
        }
        return Notification.fromLedger(
            kind: kind, user: row["user_id"], streak: row["streak"], localDate: LocalDate(day: row["local_date"]),
            due: Instant(seconds: row["due"]), timezone: row["timezone"], localDue: row["local_due"],
            streakLength: row["streak_length"], message: row["message"], title: row["title"])
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

    func heldDeliveries() throws -> Int {
        try Int.fetchOne(db, sql: "SELECT count(*) FROM deliveries WHERE state = 'pending' AND owner IS NOT NULL") ?? 0
    }

    func meta(_ key: String) throws -> String? {
        try String.fetchOne(db, sql: "SELECT value FROM meta WHERE key = ?", arguments: [key])
    }

    func setMeta(_ key: String, _ value: String) throws {
        try db.execute(
            sql: "INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value",
            arguments: [key, value])
    }

    /// Built once: a busy run records thousands.
    static let insertNotification = """
        INSERT INTO notifications (key, user_id, streak, kind, local_date, due, timezone, local_due,
            streak_length, message, state, recorded_at, title)
        VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING
        """

    func record(_ items: [NewRecord], owner: String?, at: Instant) throws -> [Int64?] {
        guard !items.isEmpty else { return [] }
        let s = try RawStatement(db, Self.insertNotification)
        let d = try RawStatement(db, "INSERT INTO deliveries (notification, sink, state, owner) VALUES (?, ?, ?, ?)")
        return try items.map { item in
            let n = item.notification
            s.bind(1, n.key)
            s.bind(2, n.user)
            s.bind(3, n.ledgerStreak)
            s.bind(4, n.kind.rawValue)
            s.bind(5, n.ledgerDate.day)
            s.bind(6, n.due.seconds)
            s.bind(7, n.timezone)
            s.bind(8, n.localDue)
            s.bind(9, n.streakLength)
            s.bind(10, n.message)
            s.bind(11, item.state.rawValue)
            s.bind(12, at.seconds)
            s.bind(13, n.title)
            guard try s.run() == 1 else { return nil }
            let id = db.lastInsertedRowID
            let deliveryState: DeliveryState = item.state == .sent ? .pending : .expired
            for sink in item.sinks {
                d.bind(1, id)
                d.bind(2, sink)
                d.bind(3, deliveryState.rawValue)
                d.bind(4, item.state == .sent ? owner : nil)
                try d.run()
            }
            return id
        }
    }

    func takeOver(id: Int64, sink: String, from: String?, fromGone: Bool, to owner: String) throws -> Bool {
        // The lease is read on this host's clock: a SQLite file is shared by the processes of one host.
        let s = try RawStatement(
            db,
            """
            UPDATE deliveries SET owner = ?1 WHERE notification = ?2 AND sink = ?3 AND state = 'pending' AND owner IS ?4
                AND (?4 IS NULL OR ?5 OR NOT EXISTS (
                    SELECT 1 FROM runners WHERE run = ?4 AND beat_at + lease > unixepoch()))
            """)
        s.bind(1, owner)
        s.bind(2, id)
        s.bind(3, sink)
        s.bind(4, from)
        s.bind(5, fromGone ? 1 : 0)
        return try s.run() == 1
    }

    func finish(
        ids: ClosedRange<Int64>, sink: String, state: DeliveryState, attempts: Int, at: Instant, error: String?,
        owner: String?, retryAt: Instant?
    ) throws {
        let s = try RawStatement(
            db,
            """
            UPDATE deliveries SET state = ?, attempts = ?, last_attempt = ?, last_error = ?, owner = NULL,
                retry_at = ?9
            WHERE notification BETWEEN ?5 AND ?7 AND sink = ?6 AND (?8 IS NULL OR owner = ?8)
            """)
        s.bind(9, retryAt?.seconds)
        s.bind(1, state.rawValue)
        s.bind(2, attempts)
        s.bind(3, at.seconds)
        s.bind(4, error)
        s.bind(5, ids.lowerBound)
        s.bind(6, sink)
        s.bind(7, ids.upperBound)
        s.bind(8, owner)
        try s.run()
    }

    func reviveDead(_ filter: DeadFilter) throws -> Int {
        try db.execute(
            sql: """
                UPDATE deliveries SET state = 'pending', attempts = 0, retry_at = NULL, owner = NULL
                WHERE state = 'dead' AND (?1 IS NULL OR sink = ?1) AND (?4 IS NULL OR last_attempt >= ?4)
                    AND (?2 IS NULL AND ?3 IS NULL OR notification IN (
                        SELECT id FROM notifications WHERE (?2 IS NULL OR kind = ?2) AND (?3 IS NULL OR user_id = ?3)))
                """, arguments: [filter.sink, filter.kind?.rawValue, filter.user, filter.since?.seconds])
        return db.changesCount
    }

    func release(owner: String) throws {
        try db.execute(
            sql: "UPDATE deliveries SET owner = NULL WHERE state = 'pending' AND owner = ?", arguments: [owner])
    }

    func register(run: String, host: String, lease: Int64) throws {
        try db.execute(
            sql: """
                INSERT INTO runners (run, host, lease, beat_at) VALUES (?, ?, ?, unixepoch())
                ON CONFLICT (run) DO UPDATE SET lease = excluded.lease, beat_at = excluded.beat_at
                """, arguments: [run, host, lease])
    }

    func heartbeat(run: String) throws -> Bool {
        try db.execute(sql: "UPDATE runners SET beat_at = unixepoch() WHERE run = ?", arguments: [run])
        return db.changesCount == 1
    }

    func unregister(run: String) throws {
        try db.execute(sql: "DELETE FROM runners WHERE run = ?", arguments: [run])
        // Runs whose lease ran out go too: killed, or stopped (it then fences itself on resuming).
        try db.execute(sql: "DELETE FROM runners WHERE beat_at + lease < unixepoch()")
    }
}
