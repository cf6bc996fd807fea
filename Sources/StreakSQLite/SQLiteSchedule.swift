import GRDB
import GRDBSQLite
import StreakCore
import StreakStore

/// The schedule of due streaks, in SQLite: a row per (user, streak) with its version and change
/// mark, and the queue of planned runs (`runs`, migration 6; docs/ARCHITECTURE.md "The schedule and its queue").
extension SQLiteAccess {
    func dueStreaks(through: Instant?) throws -> DueList {
        // Read first: a claim that finds it unchanged knows nobody else wrote since the list.
        let mark = DueList.Mark(try dataVersion())
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
            // Planned runs from the front of the queue, read alone (each at its streak's version:
            // a change deletes the run, migration 13).
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
        return DueList(due, mark: mark)
    }

    func eachPlannedRun(through: Instant, _ body: (PlannedRuns) throws -> Void) throws {
        // The queue in its own order (its primary key), in one statement: every run in it is at
        // its streak's version (a change deletes the streak's runs, or plans a new one), so none
        // is looked up. Each run carries what planning it reads (migration 11), or nothing
        // (NULL) when planned before that.
        let s = try RawStatement(
            db,
            """
            SELECT user_id, streak, handled_through, version, row, next_at, remind_at, remind, language, history
            FROM runs WHERE next_at <= ? ORDER BY next_at, row
            """)
        s.bind(1, through.seconds)
        defer { s.reset() }
        var batch = PlannedRuns()
        var size = PlannedRunBatches.first
        while try s.step() {
            let carries = !s.isNull(9) && !s.isNull(6)
            batch.append(
                PlannedRuns.Run(
                    position: RunPosition(at: Instant(seconds: s.int64(5)), row: s.int64(4)), version: s.int(3),
                    handledThrough: s.optionalInt64(2).map(Instant.init(seconds:)), remindAt: carries ? s.int(6) : 0,
                    remind: carries && s.int(7) != 0),
                user: s.bytes(0), streak: s.bytes(1), language: s.isNull(8) ? nil : s.bytes(8),
                history: carries ? s.blob(9) : nil)
            if batch.count == size {
                try body(batch)
                batch.removeAll()
                size = PlannedRunBatches.next(after: size)
            }
        }
        if !batch.isEmpty { try body(batch) }
    }

    func eachUnplannedStreak(every: Bool, _ body: ([DueStreak]) throws -> Void) throws {
        // As `dueStreaks` lists them: handled since the later of the row's mark and its runs'.
        // Marked without a run (`ScheduleMark.unplanned`) by the partial index on `next_at`: few,
        // after a tick; every row in row order when `every`. A page at a time, each read whole
        // before `body` sees it: `body` may plan them (`planChanged`), changing their rows.
        let s = try RawStatement(
            db,
            """
            SELECT user_id, streak, handled_through, version, rowid,
                (SELECT max(handled_through) FROM runs WHERE row = schedule.rowid), next_at IS NOT NULL
            FROM schedule WHERE rowid > ?1 \(every ? "" : "AND next_at = \(ScheduleMark.unplanned)")
            ORDER BY rowid LIMIT \(PlannedRunBatches.most)
            """)
        var after = Int64.min
        while true {
            s.bind(1, after)
            var batch: [DueStreak] = []
            try s.rows {
                let (row, runs) = (s.optionalInt64(2), s.optionalInt64(5))
                batch.append(Self.dueStreak(s, handled: row.map { max($0, runs ?? $0) } ?? runs, marked: s.int(6) != 0))
            }
            guard let last = batch.last?.row else { return }
            try body(batch)
            after = last
        }
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
        SELECT u.id, u.zone, u.remind_at, u.remind, u.language, u.remind_usual, s.history,
            s.history_version = ?3 AND s.version = ?3
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
            let current = !s.isNull(6) && s.int(7) == 1
            found = (
                Self.user(s),
                current ? PackedHistory.unpack(s.blob(6), user: streak.user, streak: streak.streak) : nil
            )
        }
        return found
    }

    /// `PRAGMA data_version`: moves on whenever another connection or process commits, so two
    /// equal answers on one connection mean nobody else wrote in between.
    func dataVersion() throws -> Int64 {
        try Int64.fetchOne(db, sql: "PRAGMA data_version") ?? 0
    }

    func dueHistories(of streaks: [DueStreak]) throws -> [DueHistory?] {
        // Many changed streaks (an import planning what it changed) have no packed copy at their
        // version: read from the tables by ranges, in one pass, in the tables' order (an API
        // batch's come as their rows were made), while they are close together in it (not an
        // API batch of random users on a large store); the others alone (their copy, by their row).
        let changed = streaks.indices.filter { streaks[$0].marked }.sorted { Self.before(streaks[$0], streaks[$1]) }
        guard changed.count >= Self.rangeReadFrom,
            zip(changed, changed.dropFirst()).allSatisfy({ Self.before(streaks[$0], streaks[$1]) }),  // none twice
            try rangeWorthReading(streaks[changed.first!], streaks[changed.last!], count: changed.count)
        else { return try streaks.map { try dueHistory(of: $0) } }
        // All of them changed (right after an import), in order: as read, not copied over one by one.
        if changed.elementsEqual(streaks.indices) { return try rangeHistories(of: streaks) }
        var result = [DueHistory?](repeating: nil, count: streaks.count)
        for (i, h) in zip(changed, try rangeHistories(of: changed.map { streaks[$0] })) { result[i] = h }
        for i in streaks.indices where !streaks[i].marked { result[i] = try dueHistory(of: streaks[i]) }
        return result
    }

    /// Changed streaks read by ranges from this many on.
    static let rangeReadFrom = 64

    /// Whether `a` comes strictly before `b` by user, then streak (the tables' order: ids are ASCII).
    static func before(_ a: DueStreak, _ b: DueStreak) -> Bool {
        a.user != b.user ? a.user < b.user : a.streak < b.streak
    }

    func dueHistory(of streak: DueStreak) throws -> DueHistory? {
        // The packed history stands for the tables while the version is unchanged; found by the
        // streak's row with its user in one lookup, else by the ids.
        let looked = try userAndPackedHistory(of: streak)
        guard let user = try looked?.user ?? self.user(streak.user) else { return nil }
        if let packed = try looked.map({ $0.packed }) ?? packedHistory(of: streak) {
            return DueHistory(user: user, stored: packed, fromCopy: true)
        }
        return DueHistory(user: user, stored: try storedStreak(of: user, streak: streak.streak), fromCopy: false)
    }

    func claim(_ streaks: [DueStreak], listed: DueList.Mark?, now: Instant) throws -> [DueStreak?] {
        // The write transaction holds the store's one write lock: no other run holds any of them.
        // Nothing written since the list was read but this run's own recording (which writes each
        // streak once): every row is as listed, no lookup needed.
        if let listed, try dataVersion() == listed.value { return streaks.map { $0 } }
        // Else each row by rowid when known (one lookup), if still that streak's; else by the ids.
        let byRow = try RawStatement(
            db,
            "SELECT rowid, version, next_at IS NOT NULL FROM schedule WHERE rowid = ?3 AND user_id = ?1 AND streak = ?2"
        )
        let byIDs = try RawStatement(
            db, "SELECT rowid, version, next_at IS NOT NULL FROM schedule WHERE user_id = ?1 AND streak = ?2")
        let planned = try RawStatement(db, "SELECT 1 FROM runs WHERE row = ? AND next_at <= ?")
        return try streaks.map { streak in
            var found: DueStreak?
            func look(_ s: RawStatement) throws {
                s.bind(1, streak.user)
                s.bind(2, streak.streak)
                try s.rows {
                    var f = streak
                    (f.row, f.version, f.marked) = (s.int64(0), s.int(1), s.int(2) != 0)
                    found = f
                }
            }
            if let row = streak.row {
                byRow.bind(3, row)
                try look(byRow)
            }
            if found == nil { try look(byIDs) }
            // A change since the list (a newer version) keeps it marked, so due for the next run.
            guard let found, found.version == streak.version else { return nil }
            if found.marked { return found }
            // Due by its planned run only: another run may have handled it since (its run moved on).
            planned.bind(1, found.row!)
            planned.bind(2, now.seconds)
            var due = false
            try planned.rows { due = true }
            return due ? found : nil
        }
    }

    func schedule(_ runs: [PlannedRun], handledThrough: Instant) throws {
        for run in runs {
            guard let row = run.streak.row else { continue }
            // The row itself only when its mark goes or a history read from the tables is packed:
            // an unchanged streak's run writes no page of the schedule. First, so the run below
            // copies a history packed just now.
            let read = run.history.flatMap { $0.fromCopy ? nil : $0.stored }
            if run.streak.marked || read != nil {
                try keep(
                    read, row: row, version: run.streak.version,
                    """
                    UPDATE schedule SET next_at = NULL, handled_through = max(coalesce(handled_through, ?1), ?1),
                        history = coalesce(?2, history),
                        history_version = CASE WHEN ?2 IS NOT NULL THEN ?3 ELSE history_version END
                    WHERE rowid = ?4
                    """, handledThrough: handledThrough)
            }
            try addRun(run, row: row, version: run.streak.version, handledThrough: handledThrough)
        }
    }

    func planChanged(_ runs: [PlannedRun]) throws {
        let find = try RawStatement(
            db,
            "SELECT rowid, version, handled_through FROM schedule WHERE user_id = ? AND streak = ? AND next_at IS NOT NULL"
        )
        let mark = try RawStatement(db, "UPDATE schedule SET next_at = \(ScheduleMark.planned) WHERE rowid = ?")
        // An import plans a million runs at ~1,000 instants: a cache that holds the queue's pages
        // where they grow (the import's own is SQLite's default 2 MB).
        let cache = try Int.fetchOne(db, sql: "PRAGMA cache_size") ?? -2000
        let grow = runs.count > 256 && cache > SQLiteStore.cacheSize
        if grow { try db.execute(sql: "PRAGMA cache_size = \(SQLiteStore.cacheSize)") }
        defer { if grow { try? db.execute(sql: "PRAGMA cache_size = \(cache)") } }
        for run in runs {
            var found: (row: Int64, version: Int, handled: Int64?)?
            if let row = run.streak.row, run.streak.marked {
                // As this transaction listed it (`eachUnplannedStreak`): nothing else changes it.
                found = (row, run.streak.version, run.streak.handledThrough?.seconds)
            } else {
                find.bind(1, run.streak.user)
                find.bind(2, run.streak.streak)
                try find.rows { found = (find.int64(0), find.int(1), find.optionalInt64(2)) }
            }
            guard let found else { continue }  // not marked: a run has handled it since
            mark.bind(1, found.row)
            _ = try mark.run()
            // The run carries its history packed; the schedule row's copy is left to the next
            // tick, which reads the tables for a changed streak all the same.
            let packed = run.history.map { PackedHistory.pack($0.stored) }
            try addRun(
                run, row: found.row, version: found.version, handledThrough: found.handled.map(Instant.init(seconds:)),
                packed: packed)
        }
    }

    /// Runs `sql` on a schedule row (`?4`), binding `read` packed (`?2`, or NULL), the version
    /// `?3` and the instant `?1`.
    private func keep(_ read: StoredStreak?, row: Int64, version: Int, _ sql: String, handledThrough: Instant) throws {
        let s = try RawStatement(db, sql)
        s.bind(1, handledThrough.seconds)
        s.bind(3, version)
        s.bind(4, row)
        guard let read else {
            s.bind(2, blob: nil)
            _ = try s.run()
            return
        }
        try PackedHistory.pack(read).withUnsafeBufferPointer {
            s.bind(2, blob: $0)
            _ = try s.run()
        }
    }

    /// Replaces the streak's run in the queue (schedule row `row`, at `version`) with `run`'s
    /// (none when it has no next instant), carrying the user as the run read them and the packed
    /// history: `packed`, else the row's copy when it stands for this version (migration 11). A
    /// run already at that instant is updated in place (the first tick after an import plans
    /// what the import planned).
    private func addRun(_ run: PlannedRun, row: Int64, version: Int, handledThrough: Instant?, packed: [UInt8]? = nil)
        throws
    {
        let drop = try RawStatement(db, "DELETE FROM runs WHERE row = ?1 AND next_at IS NOT ?2")
        drop.bind(1, row)
        drop.bind(2, run.next?.seconds)
        _ = try drop.run()
        guard let nextAt = run.next else { return }
        let add = try RawStatement(
            db,
            """
            INSERT INTO runs (next_at, row, version, handled_through, user_id, streak, zone, remind_at, remind, language,
                history)
            VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10,
                CASE WHEN ?7 IS NOT NULL THEN coalesce(?11,
                    (SELECT history FROM schedule WHERE rowid = ?2 AND history_version = ?3 AND version = ?3)) END)
            ON CONFLICT (next_at, row) DO UPDATE SET version = excluded.version,
                handled_through = excluded.handled_through, zone = excluded.zone, remind_at = excluded.remind_at,
                remind = excluded.remind, language = excluded.language, history = excluded.history
            """)
        add.bind(1, nextAt.seconds)
        add.bind(2, row)
        add.bind(3, version)
        add.bind(4, handledThrough?.seconds)
        add.bind(5, run.streak.user)
        add.bind(6, run.streak.streak)
        add.bind(7, run.user?.zone)
        add.bind(8, run.user.map { Int64($0.remindAt) })
        add.bind(9, run.user.map { Int64($0.remind ? 1 : 0) })
        add.bind(10, run.user?.language)
        guard let packed else {
            add.bind(11, blob: nil)
            _ = try add.run()
            return
        }
        try packed.withUnsafeBufferPointer {
            add.bind(11, blob: $0)
            _ = try add.run()
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

    /// The write transaction (BEGIN IMMEDIATE) holds the store's one write lock already.
    func lockStreak(user: String, streak: String) throws {}

    func rescheduleAll() throws {
        // The runs first, each streak's last handled instant kept in its row; then every row
        // marked (the trigger finds no run left to delete).
        try db.execute(
            sql: """
                UPDATE schedule SET handled_through = (SELECT max(h) FROM (SELECT schedule.handled_through AS h
                    UNION ALL SELECT handled_through FROM runs WHERE row = schedule.rowid))
                WHERE rowid IN (SELECT row FROM runs);
                DELETE FROM runs;
                UPDATE schedule SET next_at = 0, version = version + 1;
                """)
    }
}

/// A schedule row's `next_at`: NULL when no change waits for a run, else one of these (both are
/// "due" to every run, which handles changed streaks first). A change to a streak moves its
/// version on and marks it `unplanned`, and a trigger deletes its run (migration 13): every run
/// in `runs` is at its streak's version.
enum ScheduleMark {
    /// Changed, with no planned run: a reader of the queue plans it on its own.
    static let unplanned = 0
    /// Changed, and its run planned at its new version by the writer that changed it.
    static let planned = 1
}
