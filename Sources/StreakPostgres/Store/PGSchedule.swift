import StreakCore
import StreakStore

/// The schedule, in PostgreSQL: a row per (user, streak) with its version, its change mark and its
/// planned run; claims lock rows `FOR UPDATE SKIP LOCKED`, so concurrent runs split the due streaks.
extension PGAccess {
    func dueStreaks(through: Instant?) throws -> DueList {
        // An integer in the text: DECLARE is sent as a simple query.
        let condition = through.map { "WHERE changed OR next_at <= \($0.seconds)" } ?? ""
        // Through a cursor, a slice at a time: a million rows are not held as one result beside
        // the list made of them (the first tick after a large import lists every streak).
        try pg.execute(
            """
            DECLARE streakd_due NO SCROLL CURSOR FOR
            SELECT user_id, streak, handled_through, version, id, changed FROM schedule \(condition)
            ORDER BY user_id COLLATE "C", streak COLLATE "C"
            """)
        defer { _ = try? pg.execute("CLOSE streakd_due") }
        var streaks: [DueStreak] = []
        while true {
            let slice = try pg.query("FETCH 50000 FROM streakd_due")
            guard slice.count > 0 else { break }
            streaks.reserveCapacity(streaks.count + slice.count)
            for r in slice.rows {
                streaks.append(
                    DueStreak(
                        user: try r.string(0), streak: try r.string(1), handledThrough: try r.get(2),
                        version: try r.get(3), row: try r.get(4), marked: try r.bool(5)))
            }
        }
        return DueList(streaks)
    }

    /// What a planned run is read as (`plannedRun`).
    static let plannedColumns = """
        user_id, streak, handled_through, version, id, next_at, remind_at, remind, language,
            CASE WHEN history_version = version AND zone IS NOT NULL THEN history END
        """

    /// The queue: schedule rows in the order of the index (next_at, id), with a run at the
    /// streak's version (migration 6).
    static func queue(through: Instant) -> String {
        """
        SELECT \(plannedColumns) FROM schedule
        WHERE next_at IS NOT NULL AND next_at <= \(through.seconds) AND run_version = version ORDER BY next_at, id
        """
    }

    func eachPlannedRun(through: Instant, _ body: (PlannedRuns) throws -> Void) throws {
        // One COPY streams the runs in the index's order, in binary (a history is its bytes, not
        // twice as many hex digits), on a second connection at this transaction's snapshot, so
        // `body` reads the ledger and histories on this one meanwhile.
        guard let store else {
            // No second connection to be had (a store opened on one connection): a cursor here.
            return try eachPlannedRunHere(through: through, body)
        }
        let snapshot = try pg.query("SELECT pg_export_snapshot()").get(0, 0, as: String.self)
        guard snapshot.utf8.allSatisfy({ $0 == 45 || (48...57).contains($0) || (65...70).contains($0) }) else {
            throw PGError(.other, "PostgreSQL exported a snapshot named \(snapshot), not hexadecimal digits and dashes")
        }
        // Read on a thread of its own, a batch or two ahead: the server streams on while `body`
        // works (a COPY left unread waits for this side once the socket's buffer is full).
        let batches = Handoff<Result<PlannedRuns, any Error>>(capacity: 2)
        let reading = try Background {
            defer { batches.finish() }
            do {
                try Self.copyPlanned(store, snapshot: snapshot, through: through) {
                    guard batches.put(.success($0)) else { throw PlannedRunsStopped() }
                }
            } catch is PlannedRunsStopped {
            } catch {
                _ = batches.put(.failure(error))
            }
        }
        defer {
            batches.close()
            _ = try? reading.wait()
        }
        while let batch = batches.take() {
            // This transaction may have sent nothing for a while: it is kept from being ended
            // as idle (a failure closes the connection, and the next statement says why).
            try? pg.keepAlive()
            try body(try batch.get())
        }
    }

    /// `eachPlannedRun`'s COPY on a connection of its own at `snapshot`, in batches.
    private static func copyPlanned(
        _ store: PostgresStore, snapshot: String, through: Instant, _ body: (PlannedRuns) throws -> Void
    ) throws {
        try store.withConnection { side in
            try side.transaction(isolation: .repeatableRead, readOnly: true) { side in
                try side.execute("SET TRANSACTION SNAPSHOT '\(snapshot)'")
                // The planner would sort a whole window's runs rather than read them in the
                // index's order (at a million runs 2.1 s against 1.1 s).
                try side.execute("SET LOCAL enable_sort = off")
                var batch = PlannedRuns()
                var size = PlannedRunBatches.first
                try side.copyOut("COPY (\(queue(through: through))) TO STDOUT (FORMAT binary)") { row in
                    try plannedRun(&row, into: &batch)
                    guard batch.count == size else { return }
                    try body(batch)
                    batch = PlannedRuns()
                    size = PlannedRunBatches.next(after: size)
                }
                if !batch.isEmpty { try body(batch) }
            }
        }
    }

    /// `eachPlannedRun` on this connection alone, a page at a time from just after the last.
    private func eachPlannedRunHere(through: Instant, _ body: (PlannedRuns) throws -> Void) throws {
        var (after, size) = (RunPosition(at: Instant(seconds: .min), row: .min), PlannedRunBatches.first)
        while true {
            let rows = try pg.query(
                """
                SELECT \(Self.plannedColumns) FROM schedule
                WHERE next_at IS NOT NULL AND (next_at, id) > ($2, $3) AND next_at <= $1 AND run_version = version
                ORDER BY next_at, id LIMIT $4
                """, parameters: PGParameters([through, after.at.seconds, after.row, Int64(size)]),
                binaryResults: true)
            guard rows.count > 0 else { return }
            var batch = PlannedRuns()
            for r in rows.rows {
                let carries = !r.isNull(9) && !r.isNull(6)
                let run = PlannedRuns.Run(
                    position: RunPosition(at: try r.get(5), row: try r.get(4)), version: try r.get(3),
                    handledThrough: try r.get(2), remindAt: carries ? try r.get(6) : 0, remind: carries ? try r.bool(7) : false)
                batch.append(
                    run, user: try r.string(0), streak: try r.string(1), language: r.isNull(8) ? nil : try r.string(8),
                    history: carries ? try r.bytes(9) : nil)
            }
            try body(batch)
            after = batch.last!
            size = PlannedRunBatches.next(after: size)
        }
    }

    /// A row of `eachPlannedRun`'s COPY, its columns `plannedColumns`, appended to `batch`.
    private static func plannedRun(_ row: inout PGCopyRow, into batch: inout PlannedRuns) throws {
        func key<T>(_ value: T?) throws -> T {
            guard let value else { throw PGError(.other, "the schedule's COPY answered NULL for a key column") }
            return value
        }
        guard row.fields == 10 else { throw PGError(.other, "the schedule's COPY answered \(row.fields) columns, not 10") }
        let user = try key(try row.next())
        let streak = try key(try row.next())
        let handled = try row.integer()
        let version = try key(try row.integer())
        let id = try key(try row.integer())
        let at = try key(try row.integer())
        let remindAt = try row.integer()
        let remind = try row.bool()
        let language = try row.next()
        let history = try row.next()
        let carries = history != nil && remindAt != nil && remind != nil
        batch.append(
            PlannedRuns.Run(
                position: RunPosition(at: Instant(seconds: at), row: id), version: Int(version),
                handledThrough: handled.map(Instant.init(seconds:)), remindAt: carries ? Int(remindAt!) : 0,
                remind: carries && remind!),
            user: user, streak: streak, language: language, history: carries ? history : nil)
    }

    func eachUnplannedStreak(every: Bool, _ body: ([DueStreak]) throws -> Void) throws {
        var after = Int64.min
        while true {
            let rows = try pg.query(
                """
                SELECT user_id, streak, handled_through, version, id, changed FROM schedule
                WHERE id > $1 \(every ? "" : "AND changed AND run_version IS DISTINCT FROM version") ORDER BY id LIMIT $2
                """, after, Int64(PlannedRunBatches.most))
            guard rows.count > 0 else { return }
            let batch = try rows.rows.map { r in
                DueStreak(
                    user: try r.string(0), streak: try r.string(1), handledThrough: try r.get(2), version: try r.get(3),
                    row: try r.get(4), marked: try r.bool(5))
            }
            after = batch.last!.row!
            try body(batch)
        }
    }

    func dueHistories(of streaks: [DueStreak]) throws -> [DueHistory?] {
        guard !streaks.isEmpty else { return [] }
        // Each streak's user, and its packed history when still at the version listed. While it
        // is, the user the last run carried in the row is the user now (every change of theirs
        // moves the version on; migration 4): the users table is read only for the others.
        let found = try query(
            overArrays: """
                SELECT v.n, coalesce(u.id, v.u), coalesce(u.zone, s.zone), coalesce(u.remind_at, s.remind_at),
                    coalesce(u.remind, s.remind), CASE WHEN u.id IS NULL THEN s.language ELSE u.language END,
                    CASE WHEN s.current THEN s.history END
                FROM unnest($1::text[], $2::text[], $3::bigint[]) WITH ORDINALITY AS v(u, s, version, n)
                LEFT JOIN LATERAL (
                    SELECT zone, remind_at, remind, language, history,
                        history_version = version AND version = v.version AND history IS NOT NULL AS current
                    FROM schedule WHERE user_id = v.u AND streak = v.s OFFSET 0) s ON true
                LEFT JOIN LATERAL (
                    SELECT id, zone, remind_at, remind, language FROM users
                    WHERE id = v.u AND NOT (coalesce(s.current, false) AND s.zone IS NOT NULL) OFFSET 0) u ON true
                WHERE u.id IS NOT NULL OR (s.current AND s.zone IS NOT NULL)
                """, rows: streaks.count, streaks.map(\.user), streaks.map(\.streak),
            streaks.map { Int64($0.version) })
        var result = [DueHistory?](repeating: nil, count: streaks.count)
        var stale: [Int] = []
        for row in found.rows {
            let i = Int(try row.get(0, as: Int64.self)) - 1
            let user = try Self.user(row, from: 1, usual: false)
            if !row.isNull(6),
                let packed = try row.bytes(6).withUnsafeBufferPointer({
                    PackedHistory.unpack($0, user: user.id, streak: streaks[i].streak)
                })
            {
                result[i] = DueHistory(user: user, stored: packed, fromCopy: true)
            } else {
                result[i] = DueHistory(
                    user: user, stored: StoredStreak(user: user, zones: [], streak: streaks[i].streak), fromCopy: false)
                stale.append(i)
            }
        }
        try readTables(into: &result, for: stale, of: streaks)
        return result
    }

    /// The histories of `stale` streaks from the tables, one statement for them all: the users'
    /// zones (part 0, each user once), the streaks' check-in lists (1) and freeze events (2), each
    /// part in its order (zones by instant, events by instant and id). Each row names its user or
    /// streak by its place in the arrays sent (`WITH ORDINALITY`): no id is read back, and nothing
    /// is looked up by text.
    private func readTables(into result: inout [DueHistory?], for stale: [Int], of streaks: [DueStreak]) throws {
        guard !stale.isEmpty else { return }
        let users = stale.map { streaks[$0].user }
        let names = stale.map { streaks[$0].streak }
        // Each user once (a user's streaks are next to each other in the order streaks come).
        var distinct: [String] = []
        var userOf: [Int] = []
        userOf.reserveCapacity(stale.count)
        for u in users {
            if distinct.last != u { distinct.append(u) }
            userOf.append(distinct.count - 1)
        }
        var strings = InternedStrings()  // zones repeat
        var zones = [[StoredZoneChange]](repeating: [], count: distinct.count)
        // Columns: part, place in `stale` (1 for the first), at (a zone's since), kind (a zone's
        // name), date, until_date, author (as `freezeEvent` reads them from column 2), check-ins,
        // an event's id.
        for r in try query(
            overArrays: """
                SELECT * FROM (
                    SELECT 0 AS part, v.n, z.since AS at, z.zone AS kind, NULL::integer AS date,
                        NULL::integer AS until_date, NULL::text AS author, NULL::bytea AS checkins, NULL::bigint AS id
                    FROM unnest($3::text[]) WITH ORDINALITY AS v(u, n)
                    CROSS JOIN LATERAL (SELECT since, zone FROM user_zones WHERE user_id = v.u OFFSET 0) z
                    UNION ALL
                    SELECT 1, v.n, NULL, NULL, NULL, NULL, NULL, c.checkins, NULL
                    FROM unnest($1::text[], $2::text[]) WITH ORDINALITY AS v(u, s, n)
                    CROSS JOIN LATERAL (
                        SELECT checkins FROM checkin_lists WHERE user_id = v.u AND streak = v.s OFFSET 0) c
                    UNION ALL
                    SELECT 2, v.n, f.at, f.kind, f.date, f.until_date, f.author, NULL, f.id
                    FROM unnest($1::text[], $2::text[]) WITH ORDINALITY AS v(u, s, n)
                    CROSS JOIN LATERAL (
                        SELECT id, at, kind, date, until_date, author FROM freeze_events
                        WHERE user_id = v.u AND streak = v.s OFFSET 0) f
                ) t ORDER BY part, n, at, id
                """, rows: stale.count, users, names, distinct
        ).rows {
            let k = Int(try r.get(1, as: Int64.self)) - 1
            switch try r.get(0, as: Int.self) {
            case 0: zones[k].append(StoredZoneChange(since: try r.get(2), zone: try r.string(3, interning: &strings)))
            case 1:
                let i = stale[k]
                result[i]!.stored.checkins = try PackedCheckins.checkins(
                    try r.bytes(7), user: streaks[i].user, streak: streaks[i].streak)
            default: result[stale[k]]!.stored.freezeEvents.append(try Self.freezeEvent(r, from: 2))
            }
        }
        for (k, i) in stale.enumerated() {
            let user = result[i]!.user
            result[i]!.stored = StoredStreak(
                user: user, zones: zones[userOf[k]], streak: streaks[i].streak,
                checkins: result[i]!.stored.checkins, freezeEvents: result[i]!.stored.freezeEvents)
        }
    }

    func claim(_ streaks: [DueStreak], listed: DueList.Mark?, now: Instant) throws -> [DueStreak?] {
        guard !streaks.isEmpty else { return [] }
        var ids = streaks.map(\.row)
        if ids.contains(nil) {
            var byIDs: [String: Int64] = [:]
            for r in try pg.query(
                """
                SELECT v.u, v.s, s.id FROM unnest($1::text[], $2::text[]) AS v(u, s)
                CROSS JOIN LATERAL (SELECT id FROM schedule WHERE user_id = v.u AND streak = v.s OFFSET 0) s
                """, streaks.map(\.user), streaks.map(\.streak)
            ).rows {
                byIDs[try r.string(0) + "\u{0}" + r.string(1)] = try r.get(2)
            }
            ids = streaks.map { $0.row ?? byIDs[$0.user + "\u{0}" + $0.streak] }
        }
        // Locked in id order, skipping rows another run holds: no waiting, and no deadlock. A row
        // changed since the list was read is checked again as it is now (READ COMMITTED).
        var found: [Int64: (version: Int, changed: Bool)] = [:]
        for r in try pg.query(
            """
            SELECT id, version, changed FROM schedule WHERE id = ANY($1::bigint[]) AND (changed OR next_at <= $2)
            ORDER BY id FOR UPDATE SKIP LOCKED
            """, ids.compactMap { $0 }, now
        ).rows {
            found[try r.get(0)] = (try r.get(1), try r.bool(2))
        }
        return zip(streaks, ids).map { s, id in
            guard let id, let f = found[id], f.version == s.version else { return nil }
            var claimed = s
            claimed.row = id
            claimed.marked = f.changed
            return claimed
        }
    }

    func schedule(_ runs: [PlannedRun], handledThrough: Instant) throws {
        let runs = runs.filter { $0.streak.row != nil }
        guard !runs.isEmpty else { return }
        // A history read from the tables is kept, packed, for later runs (hex in a text array).
        let histories: [String?] = runs.map { run in
            guard let h = run.history, !h.fromCopy else { return nil }
            return hex(PackedHistory.pack(h.stored))
        }
        // The user as the run read them goes with the run (migration 2).
        try pg.query(
            """
            UPDATE schedule s SET next_at = v.next_at, changed = false, run_version = v.version,
                handled_through = greatest(coalesce(s.handled_through, $5), $5),
                history = coalesce(decode(v.history, 'hex'), s.history),
                history_version = CASE WHEN v.history IS NOT NULL THEN v.version ELSE s.history_version END,
                zone = v.zone, remind_at = v.remind_at, remind = v.remind <> 0, language = v.language
            FROM unnest(
                    $1::bigint[], $2::bigint[], $3::bigint[], $4::text[], $6::text[], $7::bigint[], $8::bigint[],
                    $9::text[])
                AS v(id, version, next_at, history, zone, remind_at, remind, language)
            WHERE s.id = v.id AND s.version = v.version
            """, runs.map { $0.streak.row! }, runs.map { Int64($0.streak.version) }, runs.map { $0.next?.seconds },
            histories, handledThrough, runs.map { $0.user?.zone }, runs.map { $0.user.map { Int64($0.remindAt) } },
            runs.map { $0.user.map { Int64($0.remind ? 1 : 0) } }, runs.map { $0.user?.language })
    }

    /// The streak's schedule row, locked (made first when it has none, which also moves nothing on).
    func planChanged(_ runs: [PlannedRun]) throws {
        guard !runs.isEmpty else { return }
        let histories: [String?] = runs.map { run in
            guard let h = run.history, !h.fromCopy else { return nil }
            return hex(PackedHistory.pack(h.stored))
        }
        // At the row's version now (this transaction changed it), still marked.
        try query(
            overArrays: """
                UPDATE schedule s SET next_at = v.next_at, run_version = s.version,
                    history = coalesce(decode(v.history, 'hex'), s.history),
                    history_version = CASE WHEN v.history IS NOT NULL THEN s.version ELSE s.history_version END,
                    zone = v.zone, remind_at = v.remind_at, remind = v.remind <> 0, language = v.language
                FROM unnest($1::text[], $2::text[], $3::bigint[], $4::text[], $5::text[], $6::bigint[], $7::bigint[], $8::text[])
                    AS v(u, st, next_at, history, zone, remind_at, remind, language)
                WHERE s.user_id = v.u AND s.streak = v.st AND s.changed
                """, rows: runs.count, runs.map(\.streak.user), runs.map(\.streak.streak),
            runs.map { $0.next?.seconds }, histories,
            runs.map { $0.user?.zone }, runs.map { $0.user.map { Int64($0.remindAt) } },
            runs.map { $0.user.map { Int64($0.remind ? 1 : 0) } }, runs.map { $0.user?.language })
    }

    func lockStreak(user: String, streak: String) throws {
        try pg.query(
            "INSERT INTO schedule (user_id, streak) VALUES ($1, $2) ON CONFLICT (user_id, streak) DO NOTHING", user,
            streak)
        try pg.query("SELECT 1 FROM schedule WHERE user_id = $1 AND streak = $2 FOR UPDATE", user, streak)
    }

    func rescheduleAll() throws {
        // One at a time across hosts: a configuration change seen by several at once.
        try pg.query("SELECT pg_advisory_xact_lock($1)", Self.rescheduleLock)
        try pg.query("UPDATE schedule SET changed = true, version = version + 1")
    }

    static let rescheduleLock: Int64 = 0x7374_7265_616B_0001
}

/// Bytes as lowercase hex digits (bytea's hex form without its `\x`).
func hex(_ bytes: [UInt8]) -> String {
    let digits = Array("0123456789abcdef".utf8)
    var out = [UInt8]()
    out.reserveCapacity(bytes.count * 2)
    for b in bytes {
        out.append(digits[Int(b >> 4)])
        out.append(digits[Int(b & 15)])
    }
    return String(decoding: out, as: UTF8.self)
}

/// The caller of `eachPlannedRun` stopped taking batches: the COPY ends.
private struct PlannedRunsStopped: Error {}
