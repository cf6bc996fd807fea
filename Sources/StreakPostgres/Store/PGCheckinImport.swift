import StreakCore
import StreakStore

/// Check-ins imported in one of two ways (docs/POSTGRES.md, "Imports"):
///
/// - **Staged** (the usual): COPY into a table of the transaction's own, then one statement
///   (`PackedCheckins.mergeSQL`) appends them to their lists, leaving out stored event ids (and
///   an id twice in the import), and marks every (user, streak) with a new row changed, as
///   `touch` does.
/// - **Direct** (`expectedRows` at least `directFrom`, no check-in stored yet, and a role that
///   owns the tables): the tables an import writes are locked (`ACCESS EXCLUSIVE`), the lists'
///   key and the foreign keys set aside, and the rows, which come sorted by (user, streak), are
///   packed here into one list per streak and COPYed in frozen: a million rows for seven
///   million check-ins. A row with an event id (which the event ids' table must check) or one
///   out of that order sends it and the rest the staged way. Before the commit the key is built
///   again, the schedule's rows made, the staged rows merged, the foreign keys added again (each
///   checked over the whole table in one scan) and the tables analysed (the next tick's plans).
final class PGCheckinImport: CheckinImport {
    /// An import into a store with no check-in takes the direct path from this many rows.
    static let directFrom = 100_000
    /// What the direct path sets aside on the lists it emptied and the schedule, when that is
    /// empty too (nothing to check on the way in, and each is built in one sorted pass after),
    /// exactly as the migrations made them (a test compares the schema before and after).
    static let emptiedListConstraints = [
        (name: "checkin_lists_pkey", definition: "PRIMARY KEY (user_id, streak)"),
    ]
    static let emptiedScheduleConstraints = [
        (name: "schedule_pkey", definition: "PRIMARY KEY (id)"),
        (name: "schedule_user_id_streak_key", definition: "UNIQUE (user_id, streak)"),
    ]
    static let emptiedScheduleIndexes = [
        (name: "schedule_changed", definition: "CREATE INDEX schedule_changed ON schedule (id) WHERE changed"),
        (name: "schedule_runs", definition: "CREATE INDEX schedule_runs ON schedule (next_at, id) WHERE next_at IS NOT NULL"),
    ]
    /// The foreign keys it sets aside and adds again (the names PostgreSQL gave them).
    static let foreignKeys = [
        (table: "checkin_lists", name: "checkin_lists_user_id_fkey"),
        (table: "schedule", name: "schedule_user_id_fkey"),
    ]

    let pg: PGConnection
    let storedAt: Instant
    /// The direct path: lists COPYed into `checkin_lists` (nil once the rows go the staged way).
    var direct: PGCopyStream?
    /// The direct path was taken (its end builds again what it set aside).
    let large: Bool
    /// The rows COPYed into the transaction's own table (from the start, or from the first row
    /// the direct path could not take).
    var staged: PGCopyStream?
    /// The streak being packed, and the check-ins already sent in lists.
    var list = ListBuilder()
    var packedRows = 0
    /// The direct path found the schedule with no row, and truncated it.
    var emptiedSchedule = false
    /// Into an emptied schedule: each (user, streak) the lists carry, once (`SchedulePairs`);
    /// nil when the database does not sort text as bytes, or they hold too much.
    var pairs: SchedulePairs?

    init(pg: PGConnection, storedAt: Instant, expectedRows: Int?) throws {
        self.pg = pg
        self.storedAt = storedAt
        if let expectedRows, expectedRows >= Self.directFrom, try Self.ownsTables(pg), try Self.lockAtOnce(pg) {
            large = true
            emptiedSchedule = try Self.setAside(pg)
            // The schedule's rows are the lists' (user, streak), in their order: the database's,
            // when it sorts text as bytes (C; glibc's C.UTF-8 sorts by code point, the same
            // order; not an ICU collation, PostgreSQL 15's `datlocprovider` 'i', whose
            // `datcollate` names only the C library's), as `SortedCheckins` does.
            if emptiedSchedule,
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
            // all-visible: the next tick's reads need no visibility check, and no vacuum rewrites
            // them later. In binary: the server parses no text.
            direct = try pg.startCopy(
                "COPY checkin_lists (user_id, streak, checkins, tagged) FROM STDIN WITH (FORMAT binary, FREEZE)",
                timeout: .seconds(3600), binary: true)
            return
        }
        large = false
        try startStaging()
    }

    /// Whether this role owns the tables the direct path alters (the role that migrated the
    /// schema does): one that was only granted their rows takes the staged path.
    static func ownsTables(_ pg: PGConnection) throws -> Bool {
        try pg.query(
            """
            SELECT bool_and(pg_has_role(current_user, relowner, 'USAGE')) FROM pg_class
            WHERE oid IN ('users'::regclass, 'checkin_lists'::regclass, 'schedule'::regclass)
            """
        ).get(0, 0, as: Bool.self)
    }

    /// The direct path's locks (`ACCESS EXCLUSIVE` on users, the lists, the event ids and the
    /// schedule), taken at once or not at all, and then, under them, whether no check-in is
    /// stored yet; false (locks given back, by the savepoint) takes the staged path.
    ///
    /// Why at once: the lists were read first (`NOT EXISTS`, an `ACCESS SHARE` lock kept to the
    /// commit), then the exclusive locks asked for; two imports doing so each waited for the
    /// other's share lock, a deadlock (40P01) in 4 of 12 runs of three imports at once (issue
    /// 31). `NOWAIT` never waits, so it never closes a cycle with a lock this transaction holds
    /// already (users read by the caller); the emptiness is read under the locks, so no other
    /// import can add lists between the look and the truncation.
    static func lockAtOnce(_ pg: PGConnection) throws -> Bool {
        try pg.execute("SAVEPOINT direct_import")
        do {
            try pg.execute("LOCK TABLE users, checkin_lists, checkin_events, schedule IN ACCESS EXCLUSIVE MODE NOWAIT")
        } catch let error as PGError where error.sqlState == "55P03" {
            // Another transaction uses one of them (an import, a tick's read): the staged path.
            try pg.execute("ROLLBACK TO SAVEPOINT direct_import; RELEASE SAVEPOINT direct_import")
            return false
        }
        guard try pg.query("SELECT NOT EXISTS (SELECT FROM checkin_lists)").get(0, 0, as: Bool.self) else {
            try pg.execute("ROLLBACK TO SAVEPOINT direct_import; RELEASE SAVEPOINT direct_import")
            return false
        }
        try pg.execute("RELEASE SAVEPOINT direct_import")
        return true
    }

    /// Locks what the direct path writes (held already: `lockAtOnce`) and sets its key and
    /// foreign keys aside; answers whether the schedule was empty (then truncated, its indexes
    /// set aside too).
    ///
    /// `ACCESS EXCLUSIVE` on users, the lists, the event ids and the schedule (the lock that
    /// dropping a constraint takes anyway, taken at once and in one order): no other transaction
    /// reads or writes them until the commit, so none sees the lists without their key, and none
    /// removes a user the lists refer to. Others wait, up to their `lock_timeout` (45 s); a tick
    /// that gives up ends with 75 and the next one goes on.
    ///
    /// The lists (and the schedule, when it has no row) are truncated, which changes nothing but
    /// their files: COPY may then freeze their rows, and with `wal_level = minimal` no WAL is
    /// written for them. (Frozen rows are seen by a REPEATABLE READ transaction begun before the
    /// commit, once the lock is gone: PostgreSQL's caveat of COPY FREEZE; for streakd's reads,
    /// harmless.)
    static func setAside(_ pg: PGConnection) throws -> Bool {
        try pg.execute(
            """
            SET LOCAL work_mem = '256MB';
            SET LOCAL maintenance_work_mem = '512MB';
            LOCK TABLE users, checkin_lists, checkin_events, schedule IN ACCESS EXCLUSIVE MODE
            """)
        try pg.execute(
            (Self.foreignKeys.map { "ALTER TABLE \($0.table) DROP CONSTRAINT \($0.name);" }
                + ["TRUNCATE checkin_lists;"]
                + Self.emptiedListConstraints.map { "ALTER TABLE checkin_lists DROP CONSTRAINT \($0.name);" })
                .joined(separator: "\n"))
        let schedule = try pg.query("SELECT NOT EXISTS (SELECT FROM schedule)").get(0, 0, as: Bool.self)
        if schedule {
            try pg.execute(
                "TRUNCATE schedule;\n"
                    + Self.emptiedScheduleConstraints.map { "ALTER TABLE schedule DROP CONSTRAINT \($0.name);" }
                    .joined(separator: "\n")
                    + "DROP INDEX " + Self.emptiedScheduleIndexes.map(\.name).joined(separator: ", "))
        }
        return schedule
    }

    /// The transaction's own tables for the staged rows (and their usual users: `usualUsers`),
    /// and the COPY into it.
    private func startStaging() throws {
        try pg.execute(
            """
            CREATE TEMP TABLE import_checkins (
                user_id text, streak text, at bigint, zone text, event_id text, meta text, n bigint
                GENERATED ALWAYS AS IDENTITY
            ) ON COMMIT DROP;
            CREATE TEMP TABLE import_usual (user_id text) ON COMMIT DROP
            """)
        staged = try pg.startCopy(
            "COPY import_checkins (user_id, streak, at, zone, event_id, meta) FROM STDIN", timeout: .seconds(3600))
    }

    func insert(_ rows: CheckinRows) throws {
        try rows.withRows { r in
            for i in 0..<r.count {
                try insert(user: r.user(i), streak: r.streak(i), at: r.at(i), zone: r.zone(i), eventID: r.eventID(i), meta: r.meta(i))
            }
        }
    }

    private func insert(
        user: UnsafeBufferPointer<UInt8>, streak: UnsafeBufferPointer<UInt8>, at: Instant,
        zone: UnsafeBufferPointer<UInt8>, eventID: UnsafeBufferPointer<UInt8>?, meta: UnsafeBufferPointer<UInt8>?
    ) throws {
        if let direct, eventID == nil, !(meta?.contains(0) ?? false), !zone.contains(0) {
            let order = list.isEmpty ? 1 : list.compare(user: user, streak: streak)
            if order > 0 {
                try send(list, to: direct)
                list.start(user: user, streak: streak)
                if pairs?.add(user: user, streak: streak) == false { pairs = nil }
            }
            if order >= 0 {
                list.add(at: at.seconds, storedAt: storedAt.seconds, zone: zone, meta: meta)
                return
            }
        }
        if let direct {
            // From here on the staged way: the lists so far end, as they are.
            try send(list, to: direct)
            list = ListBuilder()
            _ = try direct.finish()
            self.direct = nil
            try startStaging()
        }
        guard let staged else { return }
        staged.writer.append(text: user)
        staged.writer.append(text: streak)
        staged.writer.append(at.seconds)
        staged.writer.append(text: zone)
        if let eventID { staged.writer.append(text: eventID) } else { staged.writer.appendNull() }
        if let meta { staged.writer.append(text: meta) } else { staged.writer.appendNull() }
        try staged.writer.endRow()
    }

    /// One streak's list as a row of the direct COPY.
    private func send(_ list: ListBuilder, to copy: PGCopyStream) throws {
        guard !list.isEmpty else { return }
        list.user.withUnsafeBufferPointer { copy.writer.append(text: $0) }
        list.streak.withUnsafeBufferPointer { copy.writer.append(text: $0) }
        list.packed.withUnsafeBufferPointer { copy.writer.append(bytea: $0) }
        copy.writer.append(list.tagged)
        try copy.writer.endRow()
        packedRows += list.rows
    }

    func finish() throws -> InsertResult {
        if let direct {
            try send(list, to: direct)
            list = ListBuilder()
            _ = try direct.finish()
            self.direct = nil
        }
        let stagedRows = try staged?.finish() ?? 0
        let hour = Duration.seconds(3600)
        if large {
            try pg.execute("ANALYZE checkin_lists", timeout: hour)
            for c in Self.emptiedListConstraints {
                try pg.execute("ALTER TABLE checkin_lists ADD CONSTRAINT \(c.name) \(c.definition)", timeout: hour)
            }
        }
        var merged: Int64 = 0
        if staged != nil {
            // Into lists that were all empty, the schedule is marked from them all after (below).
            merged = try pg.query(
                PackedCheckins.mergeSQL(
                    source: "SELECT user_id, streak, at, zone, event_id, meta, n FROM import_checkins",
                    storedAt: "$1::bigint", mark: !large, usualInto: large ? nil : "import_usual"),
                storedAt, timeout: hour
            ).get(0, 0)
        }
        if large {
            try markSchedule(pairsComplete: staged == nil)
            for key in Self.foreignKeys {
                try pg.execute(
                    "ALTER TABLE \(key.table) ADD CONSTRAINT \(key.name) FOREIGN KEY (user_id) REFERENCES users(id) "
                        + "ON DELETE CASCADE", timeout: hour)
            }
            try pg.execute("ANALYZE users, checkin_lists, schedule", timeout: hour)
        }
        var result = InsertResult()
        result.inserted = packedRows + Int(merged)
        result.duplicates = stagedRows - Int(merged)
        return result
    }

    /// The usual users (SPEC §14) among those with a new check-in, by id: the staged path noted
    /// them as it merged (a lookup per user with a new list, or per usual user, as the planner
    /// finds cheaper); after the direct path every list is new (the store had none), so each usual
    /// user with a list.
    func usualUsers() throws -> [String] {
        let query =
            large
            ? """
            SELECT id FROM users u WHERE remind_usual AND EXISTS (SELECT FROM checkin_lists l WHERE l.user_id = u.id)
            ORDER BY id COLLATE "C"
            """
            : "SELECT user_id FROM import_usual ORDER BY user_id COLLATE \"C\""
        return try pg.query(query).rows.map { try $0.string(0) }
    }

    /// The direct path's end, once every row is in: each list is new, so each list's (user,
    /// streak) is marked changed in the schedule, as `touch` does (plain statements: no one else
    /// writes the schedule while the lock is held). `pairsComplete`: no row was staged, so the
    /// pairs held are every list's.
    private func markSchedule(pairsComplete: Bool) throws {
        let hour = Duration.seconds(3600)
        let touched = "SELECT user_id, streak FROM checkin_lists ORDER BY user_id, streak"
        if emptiedSchedule {
            if let pairs, pairsComplete {
                // Known already: sent, not read back (1M pairs: 0.6 s, not 2.0 s).
                try pg.copy("COPY schedule (user_id, streak) FROM STDIN WITH (FREEZE)", timeout: hour) { w in
                    try pairs.write(to: &w)
                }
                self.pairs = nil
            } else {
                try pg.execute("INSERT INTO schedule (user_id, streak) \(touched)", timeout: hour)
            }
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
    }
}

extension PGAccess {
    func checkinImport(storedAt: Instant, expectedRows: Int?) throws -> any CheckinImport {
        try PGCheckinImport(pg: pg, storedAt: storedAt, expectedRows: expectedRows)
    }
}
