import StreakCore
import StreakStore

/// Check-ins imported in one of two ways (docs/POSTGRES.md, "Imports"):
///
/// - **Staged** (the usual): COPY into a table of the transaction's own, then one statement
///   moves them into `checkins`, leaving out stored event ids (and an id twice in the import),
///   and marks every (user, streak) with a new row changed, as `touch` does.
/// - **Large** (`expectedRows` at least `rebuildAfter`, and a sixteenth of the rows stored):
///   the tables an import writes are locked (`ACCESS EXCLUSIVE`), the foreign keys and the
///   indexes that enforce nothing on the way in are set aside, and the rows are copied straight
///   into `checkins`. Before the commit: the rows whose (user, event id) came earlier are
///   deleted, the indexes built again, the foreign keys added again (each checked over the
///   whole table in one scan), the touched streaks marked changed in one statement, and the
///   tables analysed (the next tick's plans). Per-row foreign-key checks and inserts into an
///   index far larger than memory were nearly all of the time (7M rows: 110 s and 67 s).
final class PGCheckinImport: CheckinImport {
    /// An import takes the large path from this many rows, or a sixteenth of the rows stored if
    /// that is more (the indexes are built again over the whole table).
    static let rebuildAfter = 100_000
    /// The indexes the large path sets aside and builds again, exactly as the migrations made
    /// them (`PostgresSchema`; a test compares `pg_indexes` before and after).
    static let rebuiltIndexes = [
        (
            name: "checkins_event",
            definition: "CREATE UNIQUE INDEX checkins_event ON checkins (user_id, event_id) WHERE event_id IS NOT NULL"
        ),
        (
            name: "checkins_streak",
            definition: "CREATE INDEX checkins_streak ON checkins (user_id, streak, at) INCLUDE (zone, stored_at, event_id)"
        ),
        (
            name: "checkins_tagged",
            definition: "CREATE INDEX checkins_tagged ON checkins (user_id) INCLUDE (streak, at, meta) WHERE meta IS NOT NULL"
        ),
    ]
    /// The partial ones among them (event ids, metadata): rows with neither add nothing to them,
    /// so they stay until a row that has one comes (each rebuilt by a scan of the whole table:
    /// 7M rows, about 0.5 s each). The others are set aside at once.
    static func isPartial(_ index: (name: String, definition: String)) -> Bool { index.definition.contains(" WHERE ") }
    /// What the large path also sets aside on a table it emptied (nothing to check on the way
    /// in, and each is built in one sorted pass after): the primary key of checkins, and every
    /// index of the schedule, exactly as the migrations made them.
    static let emptiedCheckinsConstraints = [
        (name: "checkins_pkey", definition: "PRIMARY KEY (id)"),
    ]
    static let emptiedScheduleConstraints = [
        (name: "schedule_pkey", definition: "PRIMARY KEY (id)"),
        (name: "schedule_user_id_streak_key", definition: "UNIQUE (user_id, streak)"),
    ]
    static let emptiedScheduleIndexes = [
        (name: "schedule_changed", definition: "CREATE INDEX schedule_changed ON schedule (id) WHERE changed"),
        (name: "schedule_runs", definition: "CREATE INDEX schedule_runs ON schedule (next_at, id) WHERE next_at IS NOT NULL"),
    ]
    /// The check-in ids' sequence caches this many values in the importing session while the
    /// rows go in (a `nextval` each, a buffer lock each with the default cache of 1: 7M rows,
    /// about 1.3 s of the COPY's 5 s); set back, and to the last id given, before the commit.
    static let idCache = 8192

    /// The foreign keys it sets aside and adds again (the names PostgreSQL gave them).
    static let foreignKeys = [
        (table: "checkins", name: "checkins_user_id_fkey"),
        (table: "schedule", name: "schedule_user_id_fkey"),
    ]

    let pg: PGConnection
    let storedAt: Instant
    var copy: PGCopyStream
    /// The large path: the COPY's statement (begun again when the partial indexes go).
    var copyStatement = ""
    /// The large path: the partial indexes are still there (no row so far had an event id or metadata).
    var partialKept = false
    /// Rows copied by the COPYs that ended already (the partial indexes went mid-way).
    var copiedBefore = 0
    /// The large path: the largest check-in id before the import (every new row's is above it).
    let lastID: Int64?
    /// A row carried an event id (the large path then looks for repeated ones).
    var eventIDs = false
    /// The large path found checkins, or the schedule, with no row, and truncated it.
    var emptied = (checkins: false, schedule: false)
    /// The large path: the check-in ids' sequence and the cache it had before the import.
    var idSequence: (name: String, cache: Int64)?
    /// Into an emptied schedule: each (user, streak) the rows carry, once, while they come in
    /// byte order (`SchedulePairs`); nil once they do not, or hold too much.
    var pairs: SchedulePairs?

    init(pg: PGConnection, storedAt: Instant, expectedRows: Int?) throws {
        self.pg = pg
        self.storedAt = storedAt
        let stored: Int64 = try pg.query("SELECT coalesce(max(id), 0)::bigint FROM checkins").get(0, 0)
        let threshold = max(Int64(Self.rebuildAfter), stored / 16)
        if let expectedRows, Int64(expectedRows) >= threshold, try Self.ownsTables(pg) {
            let (last, emptied) = try Self.setAside(pg)
            lastID = last
            self.emptied = emptied
            let sequence = try pg.query(
                """
                SELECT pg_get_serial_sequence('checkins', 'id'), seqcache FROM pg_sequence
                WHERE seqrelid = pg_get_serial_sequence('checkins', 'id')::regclass
                """)
            let name: String = try sequence.get(0, 0)
            let cache: Int64 = try sequence.get(0, 1)
            idSequence = (name, cache)
            try pg.execute("ALTER SEQUENCE \(name) CACHE \(max(cache, Int64(Self.idCache)))")
            // The schedule's rows are the rows' distinct (user, streak), in their order: the
            // database's, when it sorts text as bytes (C; glibc's C.UTF-8 sorts by code point,
            // the same order; not an ICU collation, PostgreSQL 15's `datlocprovider` 'i', whose
            // `datcollate` names only the C library's), as `SortedCheckins` does.
            if emptied.schedule,
                try pg.query(
                    """
                    SELECT datcollate IN ('C', 'POSIX', 'C.UTF-8', 'C.utf8')
                        AND coalesce(to_jsonb(d) ->> 'datlocprovider', 'c') = 'c'
                    FROM pg_database d WHERE datname = current_database()
                    """
                ).get(0, 0, as: Bool.self)
            {
                pairs = SchedulePairs()
            }
            // Into a table emptied in this transaction, the rows go in frozen, their pages marked
            // all-visible: the next tick's reads are index-only, and no vacuum rewrites them later.
            // In binary: the server parses no text (7M rows: 3.6-3.8 s of its time, not 4.0-4.1 s).
            copyStatement =
                "COPY checkins (user_id, streak, at, zone, event_id, meta, stored_at) FROM STDIN WITH (FORMAT binary"
                + (emptied.checkins ? ", FREEZE)" : ")")
            partialKept = true
            copy = try pg.startCopy(copyStatement, timeout: .seconds(3600), binary: true)
            return
        }
        lastID = nil
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

    /// Whether this role owns the tables a large import alters (the role that migrated the
    /// schema does): one that was only granted their rows takes the staged path.
    static func ownsTables(_ pg: PGConnection) throws -> Bool {
        try pg.query(
            """
            SELECT bool_and(pg_has_role(current_user, relowner, 'USAGE')) FROM pg_class
            WHERE oid IN ('users'::regclass, 'checkins'::regclass, 'schedule'::regclass)
            """
        ).get(0, 0, as: Bool.self)
    }

    /// Locks what a large import writes and sets its foreign keys and secondary indexes aside;
    /// answers the largest check-in id stored.
    ///
    /// `ACCESS EXCLUSIVE` on users, checkins and schedule (the lock `DROP INDEX` and dropping a
    /// foreign key take anyway, taken at once and in one order): no other transaction reads or
    /// writes them until the commit, so none sees the table without its indexes, none inserts a
    /// check-in the event-id key would have refused, and none removes a user the check-ins refer
    /// to. Others wait, up to their `lock_timeout` (45 s); a tick that gives up ends with 75 and
    /// the next one goes on. `checkins_pkey` stays: the new rows are the ids above the one answered.
    /// The partial indexes stay until a row needs them (`isPartial`).
    ///
    /// A table with no row yet (checkins and schedule at the first import into a store) is
    /// truncated, which changes nothing but its files: COPY may then freeze its rows, and with
    /// `wal_level = minimal` no WAL is written for either. (Frozen rows are seen by a REPEATABLE
    /// READ transaction begun before the commit, once the lock is gone: PostgreSQL's caveat of
    /// COPY FREEZE; for streakd's reads, harmless.)
    static func setAside(_ pg: PGConnection) throws -> (last: Int64, emptied: (checkins: Bool, schedule: Bool)) {
        try pg.execute(
            """
            SET LOCAL work_mem = '256MB';
            SET LOCAL maintenance_work_mem = '512MB';
            LOCK TABLE users, checkins, schedule IN ACCESS EXCLUSIVE MODE
            """)
        let last: Int64 = try pg.query("SELECT coalesce(max(id), 0)::bigint FROM checkins").get(0, 0)
        try pg.execute(
            Self.foreignKeys.map { "ALTER TABLE \($0.table) DROP CONSTRAINT \($0.name);" }.joined(separator: "\n")
                + "DROP INDEX " + Self.rebuiltIndexes.filter { !Self.isPartial($0) }.map(\.name).joined(separator: ", "))
        let checkins = last == 0
        let schedule = try pg.query("SELECT NOT EXISTS (SELECT FROM schedule)").get(0, 0, as: Bool.self)
        if checkins {
            try pg.execute(
                "TRUNCATE checkins;\n"
                    + Self.emptiedCheckinsConstraints.map { "ALTER TABLE checkins DROP CONSTRAINT \($0.name);" }
                    .joined(separator: "\n"))
        }
        if schedule {
            try pg.execute(
                "TRUNCATE schedule;\n"
                    + Self.emptiedScheduleConstraints.map { "ALTER TABLE schedule DROP CONSTRAINT \($0.name);" }
                    .joined(separator: "\n")
                    + "DROP INDEX " + Self.emptiedScheduleIndexes.map(\.name).joined(separator: ", "))
        }
        return (last, (checkins, schedule))
    }

    func insert(
        user: UnsafeBufferPointer<UInt8>, streak: UnsafeBufferPointer<UInt8>, at: Instant,
        zone: UnsafeBufferPointer<UInt8>, eventID: UnsafeBufferPointer<UInt8>?, meta: String?
    ) throws {
        if partialKept && (eventID != nil || meta != nil) { try dropPartialIndexes() }
        if pairs?.add(user: user, streak: streak) == false { pairs = nil }
        copy.writer.append(text: user)
        copy.writer.append(text: streak)
        copy.writer.append(at.seconds)
        copy.writer.append(text: zone)
        if let eventID {
            copy.writer.append(text: eventID)
            eventIDs = true
        } else {
            copy.writer.appendNull()
        }
        if let meta { copy.writer.append(meta) } else { copy.writer.appendNull() }
        if lastID != nil { copy.writer.append(storedAt.seconds) }
        try copy.writer.endRow()
    }

    /// The first row with an event id or metadata: the COPY so far ends, the partial indexes go
    /// (built again at the end, as the covering one), and the COPY goes on in a new statement.
    private func dropPartialIndexes() throws {
        copiedBefore += try copy.finish()
        try pg.execute("DROP INDEX " + Self.rebuiltIndexes.filter(Self.isPartial).map(\.name).joined(separator: ", "))
        partialKept = false
        copy = try pg.startCopy(copyStatement, timeout: .seconds(3600), binary: true)
    }

    func finish() throws -> InsertResult {
        let copied = try copy.finish() + copiedBefore
        if let lastID { return try finishLarge(copied: copied, after: lastID) }
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

    /// The large path's end: what `setAside` set aside comes back, checked, before the commit.
    private func finishLarge(copied: Int, after last: Int64) throws -> InsertResult {
        let hour = Duration.seconds(3600)
        var duplicates = 0
        if eventIDs {
            // The first row of a (user, event id) stays: the stored one, else the import's first
            // (COPY numbers the rows in the file's order).
            duplicates = try pg.query(
                """
                DELETE FROM checkins c WHERE c.id > $1 AND c.event_id IS NOT NULL AND EXISTS (
                    SELECT 1 FROM checkins o
                    WHERE o.user_id = c.user_id AND o.event_id = c.event_id AND o.id < c.id)
                """, last, timeout: hour
            ).affectedRows
        }
        if let idSequence {
            // The sequence as a cache of 1 leaves it: at the last id given (none: untouched).
            try pg.execute("ALTER SEQUENCE \(idSequence.name) CACHE \(idSequence.cache)")
            if copied > 0 { try pg.query("SELECT setval($1::regclass, currval($1::regclass))", idSequence.name) }
        }
        // Statistics first: the checks and statements below plan with them, and so does the
        // next tick (autovacuum would analyse the tables only later, and not at all where it is off).
        try pg.execute("ANALYZE checkins", timeout: hour)
        // Each index is built by one sort, in memory when it fits. The rows came in the covering
        // index's order (`inIndexOrder`), so its sort is one pass over sorted input, and so is
        // the primary key's: by this process alone, since split among parallel workers it is three
        // sorts and a merge, each in a third of the memory. 7M rows: the covering index's sort
        // takes 0.8 GB; in 512 MB, or with 2 workers, it spilled to disk (5.5 s, 8.2 s on a busy
        // machine), alone in memory 3.3 s. The partial indexes hold few rows: their time is the
        // table's scan, which the server's parallel workers share (0.8-1.0 s to 0.5 s each).
        // Memory: twice the table's size, at most 1 GB, unless the server allows more: memory of
        // the server, and only while an index is built.
        func alone(_ yes: Bool) throws {
            try pg.execute("SET LOCAL max_parallel_maintenance_workers " + (yes ? "= 0" : "TO DEFAULT"))
        }
        try pg.execute(
            """
            SELECT set_config('maintenance_work_mem', greatest(
                pg_size_bytes(current_setting('maintenance_work_mem')),
                least(2 * pg_relation_size('checkins'), pg_size_bytes('1GB'))) / 1024 || 'kB', true)
            """)
        if emptied.checkins {
            try alone(true)
            for c in Self.emptiedCheckinsConstraints {
                try pg.execute("ALTER TABLE checkins ADD CONSTRAINT \(c.name) \(c.definition)", timeout: hour)
            }
        }
        for index in Self.rebuiltIndexes where !(partialKept && Self.isPartial(index)) {
            try alone(!Self.isPartial(index))
            try pg.execute(index.definition, timeout: hour)
        }
        try alone(false)
        // Every (user, streak) with a new row, marked changed as `touch` does: plain statements,
        // since no one else writes the schedule while the lock is held.
        var touched = "SELECT DISTINCT user_id, streak FROM checkins WHERE id > \(last)"
        if emptied.checkins {
            // Every row is new, and all-visible: read in the index's order, not hashed.
            touched = "SELECT DISTINCT user_id, streak FROM checkins ORDER BY user_id, streak"
            try pg.execute("SET LOCAL enable_hashagg = off")
        }
        if emptied.schedule, duplicates == 0, let pairs {
            // Known already: sent, not read back from the new index (7M rows, 1M pairs: 0.6 s, not 2.0 s).
            try pg.copy("COPY schedule (user_id, streak) FROM STDIN WITH (FREEZE)", timeout: hour) { w in
                try pairs.write(to: &w)
            }
            self.pairs = nil
        } else if emptied.schedule {
            try pg.execute("INSERT INTO schedule (user_id, streak) \(touched)", timeout: hour)
        }
        if emptied.schedule {
            for c in Self.emptiedScheduleConstraints {
                try pg.execute("ALTER TABLE schedule ADD CONSTRAINT \(c.name) \(c.definition)", timeout: hour)
            }
            for index in Self.emptiedScheduleIndexes { try pg.execute(index.definition, timeout: hour) }
        } else {
            try pg.execute(
                """
                CREATE TEMP TABLE import_touched ON COMMIT DROP AS \(touched);
                UPDATE schedule s SET changed = true, version = s.version + 1 FROM import_touched t
                    WHERE s.user_id = t.user_id AND s.streak = t.streak;
                INSERT INTO schedule (user_id, streak) SELECT user_id, streak FROM import_touched t
                    WHERE NOT EXISTS (SELECT FROM schedule s WHERE s.user_id = t.user_id AND s.streak = t.streak)
                    ORDER BY user_id, streak
                """, timeout: hour)
        }
        if emptied.checkins { try pg.execute("SET LOCAL enable_hashagg = on") }
        for key in Self.foreignKeys {
            try pg.execute(
                "ALTER TABLE \(key.table) ADD CONSTRAINT \(key.name) FOREIGN KEY (user_id) REFERENCES users(id) "
                    + "ON DELETE CASCADE", timeout: hour)
        }
        try pg.execute("ANALYZE users, schedule", timeout: hour)
        var result = InsertResult()
        result.inserted = copied - duplicates
        result.duplicates = duplicates
        return result
    }
}

/// The distinct (user, streak) of rows that come sorted by them in byte order, held as
/// length-prefixed bytes (1M pairs: about 21 MB): a pair equal to the last is skipped; one below
/// it, or more than `limit` bytes held, ends the list (`add` answers false).
struct SchedulePairs {
    static let limit = 48 << 20
    var text: [UInt8] = []
    /// Where the last pair's user and streak begin in `text`.
    private var last: (user: Int, streak: Int, end: Int)?

    mutating func add(user: UnsafeBufferPointer<UInt8>, streak: UnsafeBufferPointer<UInt8>) -> Bool {
        if let last {
            let order = text.withUnsafeBufferPointer { t in
                let u = Self.compare(UnsafeBufferPointer(rebasing: t[(last.user + 4)..<last.streak]), user)
                return u != 0 ? u : Self.compare(UnsafeBufferPointer(rebasing: t[(last.streak + 4)..<last.end]), streak)
            }
            if order == 0 { return true }
            if order > 0 { return false }
        }
        guard text.count + user.count + streak.count + 8 <= Self.limit else { return false }
        let u = text.count
        append(user)
        let s = text.count
        append(streak)
        last = (u, s, text.count)
        return true
    }

    private mutating func append(_ bytes: UnsafeBufferPointer<UInt8>) {
        var n = UInt32(bytes.count).littleEndian
        withUnsafeBytes(of: &n) { text.append(contentsOf: $0) }
        text.append(contentsOf: bytes)
    }

    /// Byte order (a shorter prefix first), as `memcmp` and collation C.
    private static func compare(_ a: UnsafeBufferPointer<UInt8>, _ b: UnsafeBufferPointer<UInt8>) -> Int {
        let n = min(a.count, b.count)
        for i in 0..<n where a[i] != b[i] { return a[i] < b[i] ? -1 : 1 }
        return a.count == b.count ? 0 : (a.count < b.count ? -1 : 1)
    }

    /// Each pair as a COPY row.
    func write(to w: inout PGCopyWriter) throws {
        try text.withUnsafeBufferPointer { t in
            var i = 0
            func field() -> UnsafeBufferPointer<UInt8> {
                let n = Int(t[i]) | Int(t[i + 1]) << 8 | Int(t[i + 2]) << 16 | Int(t[i + 3]) << 24
                defer { i += 4 + n }
                return UnsafeBufferPointer(rebasing: t[(i + 4)..<(i + 4 + n)])
            }
            while i < t.count {
                w.append(text: field())
                w.append(text: field())
                try w.endRow()
            }
        }
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
                FROM unnest($1::text[], $2::text[], $3::int[], $4::int[]) AS v(i, z, r, b)
                WHERE u.id = v.i AND u.id = \(PGAccess.anyOf(1))
                """, changed.map(\.id), changed.map(\.zone), changed.map(\.remindAt), changed.map { $0.remind ? 1 : 0 })
            try access.reschedule(users: changed.map(\.id))
        }
        let zones = new + changed.filter { old[$0.id]?.zone != $0.zone }
        if !zones.isEmpty { try access.recordZones(zones.map { ($0.id, $0.zone) }, at: at) }
    }
}

extension PGAccess {
    func checkinImport(storedAt: Instant, expectedRows: Int?, inIndexOrder: Bool) throws -> any CheckinImport {
        try PGCheckinImport(pg: pg, storedAt: storedAt, expectedRows: expectedRows)
    }

    func userImport(at: Instant) throws -> any UserImport { PGUserImport(access: self, at: at) }
}
