import StreakCore
import StreakStore

/// Check-ins imported with COPY into a table of the transaction's own, then moved into `checkins`
/// in one statement that leaves out stored event ids (and an id twice in the import) and marks
/// every (user, streak) with a new row changed, as `touch` does.
final class PGCheckinImport: CheckinImport {
    let pg: PGConnection
    let storedAt: Instant
    let copy: PGCopyStream

    init(pg: PGConnection, storedAt: Instant) throws {
        self.pg = pg
        self.storedAt = storedAt
        try pg.execute(
            """
            CREATE TEMP TABLE import_checkins (
                user_id text, streak text, at bigint, zone text, event_id text, meta text, n bigint
                GENERATED ALWAYS AS IDENTITY
            ) ON COMMIT DROP
            """)
        copy = try pg.startCopy(
            "COPY import_checkins (user_id, streak, at, zone, event_id, meta) FROM STDIN", timeout: .seconds(3600))
    }

    func insert(
        user: UnsafeBufferPointer<UInt8>, streak: UnsafeBufferPointer<UInt8>, at: Instant,
        zone: UnsafeBufferPointer<UInt8>, eventID: UnsafeBufferPointer<UInt8>?, meta: String?
    ) throws {
        copy.writer.append(text: user)
        copy.writer.append(text: streak)
        copy.writer.append(at.seconds)
        copy.writer.append(text: zone)
        if let eventID { copy.writer.append(text: eventID) } else { copy.writer.appendNull() }
        if let meta { copy.writer.append(meta) } else { copy.writer.appendNull() }
        try copy.writer.endRow()
    }

    func finish() throws -> InsertResult {
        let copied = try copy.finish()
        let inserted: Int64 = try pg.query(
            """
            WITH ins AS (
                INSERT INTO checkins (user_id, streak, at, zone, event_id, meta, stored_at)
                SELECT user_id, streak, at, zone, event_id, meta, $1 FROM import_checkins ORDER BY n
                ON CONFLICT (user_id, event_id) WHERE event_id IS NOT NULL DO NOTHING
                RETURNING user_id, streak
            ), touched AS (
                SELECT user_id, streak, count(*) AS rows FROM ins GROUP BY user_id, streak
            ), marked AS (
                INSERT INTO schedule (user_id, streak) SELECT user_id, streak FROM touched
                ORDER BY user_id, streak
                ON CONFLICT (user_id, streak) DO UPDATE SET changed = true, version = schedule.version + 1
                RETURNING 1
            )
            SELECT coalesce(sum(rows), 0)::bigint FROM touched
            """, storedAt, timeout: .seconds(3600)
        ).get(0, 0)
        var result = InsertResult()
        result.inserted = Int(inserted)
        result.duplicates = copied - Int(inserted)
        return result
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
            "SELECT \(PGAccess.userColumns) FROM users WHERE id = ANY($1::text[]) ORDER BY id FOR UPDATE",
            batch.map(\.id)
        ).rows {
            let u = try PGAccess.user(r)
            old[u.id] = u
        }
        let new = batch.filter { old[$0.id] == nil }
        // A user import carries no language: the stored one stays, and does not count as a change.
        let changed = batch.filter { user in
            old[user.id].map { o in
                var user = user
                user.language = o.language
                return o != user
            } ?? false
        }
        added += new.count
        updated += batch.count - new.count
        if !new.isEmpty {
            try pg.query(
                """
                INSERT INTO users (id, zone, remind_at, remind, created_at)
                SELECT i, z, r, b <> 0, $5 FROM unnest($1::text[], $2::text[], $3::int[], $4::int[]) AS v(i, z, r, b)
                """, new.map(\.id), new.map(\.zone), new.map(\.remindAt), new.map { $0.remind ? 1 : 0 }, at)
        }
        if !changed.isEmpty {
            try pg.query(
                """
                UPDATE users u SET zone = v.z, remind_at = v.r, remind = v.b <> 0
                FROM unnest($1::text[], $2::text[], $3::int[], $4::int[]) AS v(i, z, r, b) WHERE u.id = v.i
                """, changed.map(\.id), changed.map(\.zone), changed.map(\.remindAt), changed.map { $0.remind ? 1 : 0 })
            try access.reschedule(users: changed.map(\.id))
        }
        let zones = new + changed.filter { old[$0.id]?.zone != $0.zone }
        if !zones.isEmpty { try access.recordZones(zones.map { ($0.id, $0.zone) }, at: at) }
    }
}

extension PGAccess {
    func checkinImport(storedAt: Instant, expectedRows: Int?, inIndexOrder: Bool) throws -> any CheckinImport {
        try PGCheckinImport(pg: pg, storedAt: storedAt)
    }

    func userImport(at: Instant) throws -> any UserImport { PGUserImport(access: self, at: at) }
}
