import StreakCore
import StreakStore

/// Users and what decides a streak, in PostgreSQL.
extension PGAccess {
    static let userColumns = "id, zone, remind_at, remind, language, remind_usual"

    /// A user from `userColumns` at column `c`; `usual`: false where a row has the first five
    /// alone (a run's copy in the schedule, which needs the time in force, not where it came from).
    static func user(_ row: PGRow, from c: Int = 0, usual: Bool = true) throws -> User {
        let remindUsual = try usual ? row.bool(c + 5) : false
        return User(
            id: try row.string(c), zone: try row.string(c + 1), remindAt: try row.get(c + 2),
            remind: try row.bool(c + 3), language: try row.get(c + 4), remindUsual: remindUsual)
    }

    func usualUsers() throws -> [String] {
        try pg.query("SELECT id FROM users WHERE remind_usual ORDER BY id COLLATE \"C\"").rows.map { try $0.string(0) }
    }

    func user(_ id: String) throws -> User? {
        let r = try pg.query(reusing: "SELECT \(Self.userColumns) FROM users WHERE id = $1", id)
        return r.count == 0 ? nil : try Self.user(r[0])
    }

    func users() throws -> [User] {
        try pg.query("SELECT \(Self.userColumns) FROM users ORDER BY id COLLATE \"C\"").rows.map { try Self.user($0) }
    }

    /// Read through a cursor, a slice at a time: a million users' ids are not held twice.
    func userZones(_ body: (UserZones) throws -> Void) throws {
        try pg.execute("DECLARE streakd_users NO SCROLL CURSOR FOR SELECT id, zone FROM users")
        defer { _ = try? pg.execute("CLOSE streakd_users") }
        var batch = UserZones()
        while true {
            let slice = try pg.query("FETCH 50000 FROM streakd_users")
            guard slice.count > 0 else { return }
            for row in slice.rows {
                batch.append(id: try row.string(0), zone: try row.string(1))
                if batch.count == UserZones.batch {
                    try body(batch)
                    batch.removeAll()
                }
            }
            if batch.count > 0 { try body(batch) }
            batch.removeAll()
        }
    }

    func userImport(at: Instant) throws -> any UserImport { PGUserImport(access: self, at: at) }

    func addUser(_ user: User, at: Instant) throws -> Bool {
        let added =
            try pg.query(
                """
                INSERT INTO users (id, zone, remind_at, remind, language, created_at, remind_usual)
                VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT DO NOTHING
                """, user.id, user.zone, user.remindAt, user.remind, user.language, at, user.remindUsual
            ).affectedRows == 1
        if added {
            try pg.query("INSERT INTO user_zones (user_id, since, zone) VALUES ($1, $2, $3)", user.id, at, user.zone)
        }
        return added
    }

    func lockUser(_ id: String) throws {
        try pg.query(reusing: "SELECT 1 FROM users WHERE id = $1 FOR UPDATE", id)
    }

    /// `FOR NO KEY UPDATE`: it excludes `lockUser`'s lock and itself, not the key share lock
    /// an insert referring to the user takes.
    func lockUsers(_ ids: [String]) throws -> [User] {
        guard !ids.isEmpty else { return [] }
        return try pg.query(
            reusing:
                "SELECT \(Self.userColumns) FROM users WHERE id = \(Self.anyOf(1)) ORDER BY id FOR NO KEY UPDATE",
            Array(Set(ids))
        ).rows.map { try Self.user($0) }
    }

    func updateUser(_ user: User, at: Instant) throws {
        let found = try pg.query(
            "SELECT \(Self.userColumns) FROM users WHERE id = $1 FOR UPDATE", user.id)
        guard found.count == 1 else { return }
        let old = try Self.user(found[0])
        try pg.query(
            "UPDATE users SET zone = $1, remind_at = $2, remind = $3, language = $4, remind_usual = $6 WHERE id = $5",
            user.zone, user.remindAt, user.remind, user.language, user.id, user.remindUsual)
        if old != user { try reschedule(users: [user.id]) }
        if old.zone != user.zone { try recordZones([(user.id, user.zone)], at: at) }
    }

    func removeUser(_ id: String) throws -> Bool {
        // The user's notifications leave the ledger; their counts stay (`notificationCounts`).
        try pg.query(
            """
            INSERT INTO meta (key, value)
            SELECT '\(MetaKey.removedNotifications)' || kind || ':' || state, count(*)::text FROM notifications
            WHERE user_id = $1 AND state IN ('sent', 'expired') GROUP BY kind, state
            ON CONFLICT (key) DO UPDATE SET value = (meta.value::bigint + excluded.value::bigint)::text
            """, id)
        return try pg.query("DELETE FROM users WHERE id = $1", id).affectedRows == 1
    }

    /// `ANY` of the text array parameter `$n`, for a table's key: through a subquery, which the
    /// planner takes for a few values and so looks each up in the index. Given the array itself,
    /// it counts its values, and for thousands of them over a table whose statistics are old (a
    /// large import grows it in one transaction) read the whole table each time: a million users'
    /// import spent 10 s so.
    static func anyOf(_ n: Int) -> String { "ANY(ARRAY(SELECT unnest($\(n)::text[])))" }

    /// Moves on the version of every streak of these users (their settings changed).
    func reschedule(users: [String]) throws {
        try pg.query(
            "UPDATE schedule SET changed = true, version = version + 1 WHERE user_id = \(Self.anyOf(1))", users)
    }

    /// Records zones taken on at `at` (the same instant twice: the later zone).
    func recordZones(_ changes: [(user: String, zone: String)], at: Instant) throws {
        try pg.query(
            """
            INSERT INTO user_zones (user_id, since, zone) SELECT u, $3, z FROM unnest($1::text[], $2::text[]) AS v(u, z)
            ON CONFLICT (user_id, since) DO UPDATE SET zone = excluded.zone
            """, changes.map(\.user), changes.map(\.zone), at)
    }

    func zoneHistory(of user: String) throws -> [StoredZoneChange] {
        try pg.query(reusing: "SELECT since, zone FROM user_zones WHERE user_id = $1 ORDER BY since", user).rows.map {
            StoredZoneChange(since: try $0.get(0), zone: try $0.string(1))
        }
    }

    func streaks(of user: String) throws -> [String] {
        try pg.query(
            """
            SELECT streak FROM checkin_lists WHERE user_id = $1
            UNION SELECT streak FROM freeze_events WHERE user_id = $1 ORDER BY 1
            """, user
        ).rows.map { try $0.string(0) }.sorted()
    }

    func checkins(of user: String, streak: String) throws -> [StoredCheckin] {
        let rows = try pg.query(
            reusing: "SELECT checkins FROM checkin_lists WHERE user_id = $1 AND streak = $2", user, streak
        ).rows
        return try rows.first.map { try PackedCheckins.checkins($0.bytes(0), user: user, streak: streak) } ?? []
    }

    func freezeEvents(of user: String, streak: String) throws -> [FreezeEvent] {
        try pg.query(
            reusing: """
                SELECT at, kind, date, until_date, author FROM freeze_events WHERE user_id = $1 AND streak = $2
                ORDER BY at, id
                """, user, streak
        ).rows.map { try Self.freezeEvent($0, from: 0) }
    }

    static func freezeEvent(_ row: PGRow, from c: Int) throws -> FreezeEvent {
        try FreezeEvent(
            at: row.get(c), stored: row.string(c + 1), date: { try row.get(c + 2) },
            until: { row.isNull(c + 3) ? nil : try row.get(c + 3) as Int },
            author: { row.isNull(c + 4) ? nil : try row.string(c + 4) })
    }

    func achievementFacts(of users: [String]) throws -> [AchievementFacts] {
        guard !users.isEmpty else { return [] }
        var slot: [String: Int] = [:]
        for (i, u) in users.enumerated() { slot[u] = i }
        var result = [AchievementFacts](repeating: AchievementFacts(), count: users.count)
        // The users' schedule rows (part 0), and their check-in lists that are tagged (1): a list
        // is tagged when one of its check-ins has metadata, and only those are unpacked.
        for r in try query(
            overArrays: """
                SELECT * FROM (
                    SELECT 0 AS part, v.u, s.streak, s.handled_through, s.version, s.id, NULL::bytea AS checkins
                    FROM unnest($1::text[]) AS v(u)
                    CROSS JOIN LATERAL (
                        SELECT streak, handled_through, version, id FROM schedule WHERE user_id = v.u OFFSET 0) s
                    UNION ALL
                    SELECT 1, v.u, c.streak, NULL, NULL, NULL, c.checkins FROM unnest($1::text[]) AS v(u)
                    CROSS JOIN LATERAL (
                        SELECT streak, checkins FROM checkin_lists WHERE user_id = v.u AND tagged OFFSET 0) c
                ) t ORDER BY part, u, streak COLLATE "C"
                """, rows: users.count, Array(Set(users))
        ).rows {
            let user = try r.string(1)
            guard let i = slot[user] else { continue }
            let streak = try r.string(2)
            guard try r.get(0, as: Int.self) == 1 else {
                result[i].streaks.append(
                    DueStreak(
                        user: users[i], streak: streak, handledThrough: try r.get(3), version: try r.get(4),
                        row: try r.get(5)))
                continue
            }
            for record in PackedCheckins.byInstant(
                try PackedCheckins.records(try r.bytes(6), user: user, streak: streak))
            {
                guard let meta = record.meta else { continue }
                result[i].tagged.append(TaggedCheckin(streak: streak, instant: Instant(seconds: record.at), meta: meta))
            }
        }
        return result
    }

    func settingsEpochs(of streak: String) throws -> [SettingsEpoch] {
        if let read = epochs.byStreak[streak] { return read }
        let read = try pg.query(
            reusing:
                "SELECT since, goal, leeway_hours, rest_days FROM settings_epochs WHERE streak = $1 ORDER BY since",
            streak
        ).rows.map {
            SettingsEpoch(
                since: try $0.get(0), goal: try $0.get(1), leewayHours: try $0.get(2),
                restDays: RestDays(bits: UInt8(truncatingIfNeeded: try $0.get(3) as Int)))
        }
        epochs.byStreak[streak] = read
        return read
    }

    func insertCheckins(_ checkins: [NewCheckin], storedAt: Instant) throws -> InsertResult {
        var result = InsertResult()
        guard !checkins.isEmpty else { return result }
        let row = try query(
            overArrays: PackedCheckins.mergeSQL(
                source: """
                    SELECT u AS user_id, s AS streak, a AS at, z AS zone, e AS event_id, m AS meta, n
                    FROM unnest($1::text[], $2::text[], $3::bigint[], $4::text[], $5::text[], $6::text[])
                        WITH ORDINALITY AS v(u, s, a, z, e, m, n)
                    """, storedAt: "$7::bigint", duplicateRows: true), rows: checkins.count,
            checkins.map(\.user), checkins.map(\.streak), checkins.map(\.instant.seconds), checkins.map(\.zone),
            checkins.map(\.eventID), checkins.map(\.meta), storedAt
        ).rows[0]
        let inserted = Int(try row.get(0, as: Int64.self))
        result.inserted = inserted
        result.duplicates = checkins.count - inserted
        if !row.isNull(1) { result.duplicateRows = try row.string(1).split(separator: ",").compactMap { Int($0) } }
        return result
    }

    func addFreezeEvent(_ event: FreezeEvent, user: String, streak: String) throws {
        let (kind, date, until) = event.stored
        try pg.query(
            """
            INSERT INTO freeze_events (user_id, streak, at, kind, date, until_date, author)
            VALUES ($1, $2, $3, $4, $5, $6, $7)
            """, user, streak, event.at, kind, date, until, event.author)
        try touch([(user, streak)])
    }

    func removeFreezeEvent(_ event: FreezeEvent, user: String, streak: String) throws {
        let (kind, date, until) = event.stored
        try pg.query(
            """
            DELETE FROM freeze_events WHERE user_id = $1 AND streak = $2 AND at = $3 AND kind = $4
            AND date IS NOT DISTINCT FROM $5 AND until_date IS NOT DISTINCT FROM $6
            """, user, streak, event.at, kind, date, until)
        try touch([(user, streak)])
    }

    func recordSettings(_ epoch: SettingsEpoch, streak: String) throws {
        let last = try settingsEpochs(of: streak).last
        guard last?.goal != epoch.goal || last?.leewayHours != epoch.leewayHours || last?.restDays != epoch.restDays
        else { return }
        try pg.query(
            """
            INSERT INTO settings_epochs (streak, since, goal, leeway_hours, rest_days) VALUES ($1, $2, $3, $4, $5)
            ON CONFLICT (streak, since) DO UPDATE SET goal = excluded.goal, leeway_hours = excluded.leeway_hours,
                rest_days = excluded.rest_days
            """, streak, epoch.since, epoch.goal, epoch.leewayHours, Int(epoch.restDays.bits))
        epochs.byStreak[streak] = nil
    }

    /// Marks streaks changed (moving their version on), creating their schedule rows when new.
    /// Sorted first, so two writers lock rows in one order.
    func touch(_ streaks: [(user: String, streak: String)]) throws {
        guard !streaks.isEmpty else { return }
        let sorted = streaks.sorted { ($0.user, $0.streak) < ($1.user, $1.streak) }
        try pg.query(
            """
            INSERT INTO schedule (user_id, streak) SELECT u, s FROM unnest($1::text[], $2::text[]) AS v(u, s)
            ON CONFLICT (user_id, streak) DO UPDATE SET changed = true, version = schedule.version + 1
            """, sorted.map(\.user), sorted.map(\.streak))
    }
}

/// Users added or updated in batches: each batch's old rows are read at once, then the new ones
/// inserted, the changed ones updated (their streaks rescheduled) and new zones recorded, a
/// statement each.
final class PGUserImport: UserImport {
    let access: PGAccess
    let at: Instant
    var waiting: [User] = []
    var added = 0
    var updated = 0
    static let batch = 4096

    init(access: PGAccess, at: Instant) {
        self.access = access
        self.at = at
    }

    func put(_ user: User) throws {
        waiting.append(user)
        if waiting.count >= Self.batch { try flush() }
    }

    func finish() throws -> (added: Int, updated: Int) {
        try flush()
        return (added, updated)
    }

    private func flush() throws {
        guard !waiting.isEmpty else { return }
        let batch = waiting
        waiting = []
        let pg = access.pg
        var old: [String: User] = [:]
        for r in try pg.query(
            "SELECT \(PGAccess.userColumns) FROM users WHERE id = \(PGAccess.anyOf(1)) ORDER BY id FOR UPDATE",
            batch.map(\.id)
        ).rows {
            let u = try PGAccess.user(r)
            old[u.id] = u
        }
        let new = batch.filter { old[$0.id] == nil }
        // A record without a language keeps the stored one, and that is no change.
        let changed = batch.filter { user in
            old[user.id].map { o in
                var user = user
                if user.language == nil { user.language = o.language }
                return o != user
            } ?? false
        }
        added += new.count
        updated += batch.count - new.count
        if !new.isEmpty {
            try pg.query(
                """
                INSERT INTO users (id, zone, remind_at, remind, created_at, language, remind_usual)
                SELECT i, z, r, b <> 0, $5, l, n <> 0
                FROM unnest($1::text[], $2::text[], $3::int[], $4::int[], $6::text[], $7::int[]) AS v(i, z, r, b, l, n)
                """, new.map(\.id), new.map(\.zone), new.map(\.remindAt), new.map { $0.remind ? 1 : 0 }, at,
                new.map(\.language), new.map { $0.remindUsual ? 1 : 0 })
        }
        if !changed.isEmpty {
            try pg.query(
                """
                UPDATE users u SET zone = v.z, remind_at = v.r, remind = v.b <> 0, language = coalesce(v.l, u.language),
                    remind_usual = v.n <> 0
                FROM unnest($1::text[], $2::text[], $3::int[], $4::int[], $5::text[], $6::int[]) AS v(i, z, r, b, l, n)
                WHERE u.id = v.i AND u.id = \(PGAccess.anyOf(1))
                """, changed.map(\.id), changed.map(\.zone), changed.map(\.remindAt), changed.map { $0.remind ? 1 : 0 },
                changed.map(\.language), changed.map { $0.remindUsual ? 1 : 0 })
            try access.reschedule(users: changed.map(\.id))
        }
        let zones = new + changed.filter { old[$0.id]?.zone != $0.zone }
        if !zones.isEmpty { try access.recordZones(zones.map { ($0.id, $0.zone) }, at: at) }
    }
}
