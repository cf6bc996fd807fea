import StreakCore
import StreakStore

/// The delivery ledger, the runs delivering it, and small settings, in PostgreSQL. Leases are
/// measured on the server's clock (`statement_timestamp()`), never a host's.
extension PGAccess {
    func ledgerStates(keys: [String]) throws -> [String: LedgerState] {
        let parts = keys.compactMap { key in LedgerKey(key).map { (key, $0) } }
        guard !parts.isEmpty else { return [:] }
        var result: [String: LedgerState] = [:]
        for r in try pg.query(
            """
            SELECT v.key, n.state FROM unnest($1::text[], $2::int[], $3::text[], $4::text[], $5::text[])
                AS v(key, d, k, u, s)
            JOIN notifications n ON n.local_date = v.d AND n.kind = v.k AND n.user_id = v.u AND n.streak = v.s
            """, parts.map(\.0), parts.map { $0.1.localDate.day }, parts.map { String($0.1.kind) },
            parts.map { String($0.1.user) }, parts.map { String($0.1.streak) }
        ).rows {
            result[try r.string(0)] = LedgerState(rawValue: try r.string(1))
        }
        return result
    }

    func eachLedgerKey(
        dates: ClosedRange<LocalDate>, _ body: (String, String, String, LocalDate) throws -> Void
    ) throws {
        for r in try pg.query(
            "SELECT kind, user_id, streak, local_date FROM notifications WHERE local_date BETWEEN $1 AND $2",
            dates.lowerBound.day, dates.upperBound.day
        ).rows {
            try body(try r.string(0), try r.string(1), try r.string(2), LocalDate(day: try r.get(3)))
        }
    }

    static let notificationColumns =
        "n.id, n.kind, n.user_id, n.streak, n.local_date, n.due, n.timezone, n.local_due, n.streak_length, n.message, n.title"

    func pendingDeliveries() throws -> [PendingDelivery] {
        try pg.query(
            """
            SELECT \(Self.notificationColumns), d.sink, d.attempts, d.last_attempt, d.owner, d.retry_at
            FROM deliveries d JOIN notifications n ON n.id = d.notification
            WHERE d.state = 'pending' ORDER BY n.due, n.key COLLATE "C", d.sink COLLATE "C"
            """
        ).rows.map { r in
            PendingDelivery(
                id: try r.get(0), notification: try Self.notification(r), sink: try r.string(11),
                attempts: try r.get(12), lastAttempt: try r.get(13), owner: try r.get(14), retryAt: try r.get(15))
        }
    }

    /// A recorded notification from `notificationColumns`; a kind this streakd does not know (a
    /// newer one wrote it) is an error.
    static func notification(_ r: PGRow) throws -> Notification {
        let name = try r.string(1)
        guard let kind = NotificationKind(rawValue: name) else {
            throw StoreError(
                .damaged,
                "the ledger holds notification \(try r.get(0, as: Int64.self)) of an unknown kind \"\(name)\" (written by a newer streakd?)"
            )
        }
        return Notification.fromLedger(
            kind: kind, user: try r.string(2), streak: try r.string(3), localDate: LocalDate(day: try r.get(4)),
            due: try r.get(5), timezone: try r.string(6), localDue: try r.string(7), streakLength: try r.get(8),
            message: try r.string(9), title: try r.get(10))
    }

    func deliveryStates(key: String) throws -> [String: DeliveryState] {
        guard let k = LedgerKey(key) else { return [:] }
        var result: [String: DeliveryState] = [:]
        for r in try pg.query(
            """
            SELECT d.sink, d.state FROM deliveries d JOIN notifications n ON n.id = d.notification
            WHERE n.local_date = $1 AND n.kind = $2 AND n.user_id = $3 AND n.streak = $4
            """, k.localDate.day, String(k.kind), String(k.user), String(k.streak)
        ).rows {
            result[try r.string(0)] = DeliveryState(rawValue: try r.string(1))
        }
        return result
    }

    func waitingDeliveries() throws -> Int {
        try pg.query("SELECT count(*) FROM deliveries WHERE state = 'pending' AND owner IS NULL").get(0, 0)
    }

    func heldDeliveries() throws -> Int {
        try pg.query("SELECT count(*) FROM deliveries WHERE state = 'pending' AND owner IS NOT NULL").get(0, 0)
    }

    func meta(_ key: String) throws -> String? {
        let r = try pg.query(reusing: "SELECT value FROM meta WHERE key = $1", key)
        return r.count == 0 ? nil : try r.get(0, 0)
    }

    func setMeta(_ key: String, _ value: String) throws {
        try pg.query(
            "INSERT INTO meta (key, value) VALUES ($1, $2) ON CONFLICT (key) DO UPDATE SET value = excluded.value", key,
            value)
    }

    func record(_ items: [NewRecord], owner: String?, at: Instant) throws -> [Int64?] {
        guard !items.isEmpty else { return [] }
        let n = items.map(\.notification)
        // In the items' order, so a run's new notifications have increasing ids; a key recorded
        // already (by this run or another, committed or not yet) is left out: the unique key decides.
        let inserted = try pg.query(
            """
            INSERT INTO notifications (key, user_id, streak, kind, local_date, due, timezone, local_due,
                streak_length, message, state, recorded_at, title)
            SELECT key, u, s, k, d, due, tz, ld, len, msg, st, $12, title
            FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::int[], $6::bigint[], $7::text[],
                $8::text[], $9::int[], $10::text[], $11::text[], $13::text[])
                WITH ORDINALITY AS v(key, u, s, k, d, due, tz, ld, len, msg, st, title, n)
            ORDER BY n
            ON CONFLICT DO NOTHING
            RETURNING id, key
            """, n.map(\.key), n.map(\.user), n.map(\.ledgerStreak), n.map(\.kind.rawValue), n.map(\.ledgerDate.day),
            n.map(\.due.seconds), n.map(\.timezone), n.map(\.localDue), n.map(\.streakLength), n.map(\.message),
            items.map(\.state.rawValue), at, n.map(\.title))
        var ids: [String: Int64] = [:]
        for r in inserted.rows { ids[try r.string(1)] = try r.get(0) }
        var (notification, sink, state, owners) = ([Int64](), [String](), [String](), [String?]())
        for item in items {
            guard let id = ids[item.notification.key] else { continue }
            for s in item.sinks {
                notification.append(id)
                sink.append(s)
                state.append(item.state == .sent ? DeliveryState.pending.rawValue : DeliveryState.expired.rawValue)
                owners.append(item.state == .sent ? owner : nil)
            }
        }
        if !notification.isEmpty {
            try pg.query(
                """
                INSERT INTO deliveries (notification, sink, state, owner)
                SELECT * FROM unnest($1::bigint[], $2::text[], $3::text[], $4::text[])
                """, notification, sink, state, owners)
        }
        return items.map { ids[$0.notification.key] }
    }

    func takeOver(id: Int64, sink: String, from: String?, fromGone: Bool, to owner: String) throws -> Bool {
        try pg.query(
            """
            UPDATE deliveries SET owner = $1 WHERE notification = $2 AND sink = $3 AND state = 'pending'
                AND owner IS NOT DISTINCT FROM $4
                AND ($4::text IS NULL OR $5 OR NOT EXISTS (
                    SELECT 1 FROM runners WHERE run = $4
                        AND beat_at + make_interval(secs => lease) > statement_timestamp()))
            """, owner, id, sink, from, fromGone
        ).affectedRows == 1
    }

    func finish(
        ids: ClosedRange<Int64>, sink: String, state: DeliveryState, attempts: Int, at: Instant, error: String?,
        owner: String?, retryAt: Instant?
    ) throws {
        try pg.query(
            """
            UPDATE deliveries SET state = $1, attempts = $2, last_attempt = $3, last_error = $4, owner = NULL,
                retry_at = $9
            WHERE notification BETWEEN $5 AND $6 AND sink = $7 AND ($8::text IS NULL OR owner = $8)
            """, state.rawValue, attempts, at, error, ids.lowerBound, ids.upperBound, sink, owner, retryAt)
    }

    func reviveDead(_ filter: DeadFilter) throws -> Int {
        try pg.query(
            """
            UPDATE deliveries SET state = 'pending', attempts = 0, retry_at = NULL, owner = NULL
            WHERE state = 'dead' AND ($1::text IS NULL OR sink = $1) AND ($4::bigint IS NULL OR last_attempt >= $4)
                AND ($2::text IS NULL AND $3::text IS NULL OR notification IN (
                    SELECT id FROM notifications WHERE ($2::text IS NULL OR kind = $2) AND ($3::text IS NULL OR user_id = $3)))
            """, filter.sink, filter.kind?.rawValue, filter.user, filter.since
        ).affectedRows
    }

    func release(owner: String) throws {
        try pg.query("UPDATE deliveries SET owner = NULL WHERE state = 'pending' AND owner = $1", owner)
    }

    func register(run: String, host: String, lease: Int64) throws {
        try pg.query(
            """
            INSERT INTO runners (run, host, lease, beat_at) VALUES ($1, $2, $3, statement_timestamp())
            ON CONFLICT (run) DO UPDATE SET lease = excluded.lease, beat_at = excluded.beat_at
            """, run, host, lease)
    }

    func heartbeat(run: String) throws -> Bool {
        try pg.query("UPDATE runners SET beat_at = statement_timestamp() WHERE run = $1", run).affectedRows == 1
    }

    func unregister(run: String) throws {
        try pg.query("DELETE FROM runners WHERE run = $1", run)
        // Runs whose lease ran out go too: killed, or stopped (it then fences itself on resuming).
        try pg.query("DELETE FROM runners WHERE beat_at + make_interval(secs => lease) < statement_timestamp()")
    }
}

/// The store at a glance, for `status` without an ID: counts and scans (a rare command).
extension PGAccess {
    func userCounts() throws -> UserCounts {
        let r = try pg.query("SELECT count(*), count(*) FILTER (WHERE remind) FROM users")
        return UserCounts(users: try r.get(0, 0), reminded: try r.get(0, 1))
    }

    func streakCount() throws -> Int {
        try pg.query("SELECT count(*) FROM schedule").get(0, 0)
    }

    func deliveryCount(_ state: DeliveryState) throws -> Int {
        try pg.query("SELECT count(*) FROM deliveries WHERE state = $1", state.rawValue).get(0, 0)
    }

    func deliveries(_ state: DeliveryState, limit: Int) throws -> [DeliveryRecord] {
        try pg.query(
            """
            SELECT \(Self.notificationColumns), d.sink, d.attempts, d.last_attempt, d.last_error
            FROM deliveries d JOIN notifications n ON n.id = d.notification
            WHERE d.state = $1 ORDER BY d.last_attempt DESC NULLS LAST, n.due, n.id, d.sink COLLATE "C" LIMIT $2
            """, state.rawValue, limit
        ).rows.map { r in
            DeliveryRecord(
                notification: try Self.notification(r), sink: try r.string(11), state: state, attempts: try r.get(12),
                lastAttempt: try r.get(13), lastError: try r.get(14))
        }
    }

    func pendingDeliveries(dueBefore instant: Instant) throws -> Int {
        try pg.query(
            """
            SELECT count(*) FROM deliveries d JOIN notifications n ON n.id = d.notification
            WHERE d.state = 'pending' AND n.due < $1
            """, instant
        ).get(0, 0)
    }

    func notificationCounts() throws -> [PairCount] {
        let removed = MetaKey.removedNotifications
        return try pg.query(
            """
            SELECT kind, state, sum(n)::bigint FROM (
                SELECT kind, state, count(*) AS n FROM notifications GROUP BY kind, state
                UNION ALL
                SELECT split_part(key, ':', 2), split_part(key, ':', 3), value::bigint FROM meta
                WHERE key LIKE '\(removed)%'
            ) AS counts GROUP BY 1, 2
            """
        ).rows.map { PairCount(try $0.string(0), try $0.string(1), count: try $0.get(2)) }
    }

    func deliveryCounts() throws -> [PairCount] {
        try pg.query("SELECT sink, state, count(*) FROM deliveries GROUP BY sink, state").rows.map {
            PairCount(try $0.string(0), try $0.string(1), count: try $0.get(2))
        }
    }
}
