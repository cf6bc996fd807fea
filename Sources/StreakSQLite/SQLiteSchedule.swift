import GRDB
import GRDBSQLite
import StreakCore
import StreakStore

/// The schedule of due streaks, in SQLite: a row per (user, streak) with its version and change
/// mark, and the queue of planned runs (`runs`, migration 6; docs/RULES.md "The queue of runs").
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
        return DueList(due, mark: mark)
    }

    func plannedStreaks(through: Instant, after: RunPosition?, limit: Int) throws -> [PlannedStreak] {
        // The queue in its own order (its primary key), from just after the last page. A run is
        // valid while its version is the streak's, and a marked streak's runs are all stale (the
        // change moved the version on): those are `changedStreaks`'. Few marked rows (the usual
        // case after a tick) are read once and left out here, so the queue is read alone, with
        // what its runs carry (migration 8); many are left out by a lookup of each run's row.
        let (s, marked) = try plannedRuns(through: through, after: after)
        defer { s.reset() }
        var found: [PlannedStreak] = []
        found.reserveCapacity(min(limit, 8192))
        var strings = InternedStrings()  // streak ids, zones and languages repeat
        // The page's histories in one buffer, each run's bytes a slice of it once all are read.
        var histories: [UInt8] = []
        histories.reserveCapacity(min(limit, 8192) * 128)
        var spans: [(run: Int, bytes: Range<Int>)] = []
        while found.count < limit, try s.step() {
            let row = s.int64(4)
            if let marked, marked.contains(row) { continue }
            let planned = Self.plannedStreak(s, row: row, strings: &strings)
            if planned.carried != nil {
                let bytes = s.blob(9)
                spans.append((found.count, histories.count..<histories.count + bytes.count))
                histories.append(contentsOf: bytes)
            }
            found.append(planned)
        }
        for (run, bytes) in spans { found[run].carried!.packed = histories[bytes] }
        return found
    }

    /// `plannedStreaks`'s runs, each in place, from the same statement: only the columns a
    /// simple history's notices need are asked for (a million runs, each column a few calls), the
    /// rest for the runs `plan` does not take.
    func eachPlannedRun(through: Instant, after: RunPosition?, limit: Int, _ plan: (RunInPlace) throws -> Bool) throws
        -> (last: RunPosition?, unplanned: [PlannedStreak])
    {
        let (s, marked) = try plannedRuns(through: through, after: after)
        defer { s.reset() }
        var (count, last, unplanned) = (0, RunPosition?.none, [PlannedStreak]())
        var strings = InternedStrings()
        let skip = marked.map { !$0.isEmpty } ?? false
        while count < limit, try s.step() {
            let row = s.int64(4)
            if skip, marked!.contains(row) { continue }
            count += 1
            // The runs at one instant (a planning thread's pages) all have it.
            let position = RunPosition(at: after?.at == through ? through : Instant(seconds: s.int64(5)), row: row)
            last = position
            func raw(_ b: UnsafeBufferPointer<UInt8>) -> UnsafeRawBufferPointer { UnsafeRawBufferPointer(b) }
            // A run carries a history only with its user's settings (`add`).
            let history = s.blob(9)
            var carried: RunInPlace.Carried?
            if history.baseAddress != nil {
                let language = s.bytes(10)
                carried = RunInPlace.Carried(
                    remindAt: s.int(7), remind: s.int(8) != 0, language: language.baseAddress == nil ? nil : raw(language),
                    history: raw(history))
            }
            let run = RunInPlace(user: raw(s.bytes(0)), streak: raw(s.bytes(1)), position: position, carried: carried)
            if try !plan(run) {
                var one = Self.plannedStreak(s, row: row, strings: &strings)
                one.carried?.packed = ArraySlice(s.blob(9))
                unplanned.append(one)
            }
        }
        return (last, unplanned)
    }

    /// The run on `plannedRuns`' current row, its carried history left empty.
    private static func plannedStreak(_ s: RawStatement, row: Int64, strings: inout InternedStrings) -> PlannedStreak {
        let streak = DueStreak(
            user: s.text(0), streak: s.text(1, interning: &strings), handledThrough: s.optionalInt64(2).map(Instant.init(seconds:)),
            version: s.int(3), row: row, marked: false)
        var carried: CarriedHistory?
        if !s.isNull(6) && !s.isNull(9) {
            let user = User(
                id: streak.user, zone: s.text(6, interning: &strings), remindAt: s.int(7), remind: s.int(8) != 0,
                language: s.optionalText(10, interning: &strings))
            carried = CarriedHistory(user: user, packed: [])
        }
        return PlannedStreak(streak: streak, position: RunPosition(at: Instant(seconds: s.int64(5)), row: row), carried: carried)
    }

    /// The statement reading the queue of runs for `plannedStreaks` and `eachPlannedRun` (bound),
    /// and the marked rows it leaves to its reader (nil: the statement leaves them out).
    private func plannedRuns(through: Instant, after: RunPosition?) throws -> (RawStatement, Set<Int64>?) {
        let marked = try markedRows()
        // The pages a reader asks for most, each in a form SQLite's loop checks nothing more for
        // at each run than its end (a row value is compared at every run): the runs at one
        // instant after a row, and those after an instant.
        let range =
            if let after, after.at == through { "r.next_at = ?1 AND r.row > ?3" }
            else if let after, after.row == .max { "r.next_at > ?2 AND r.next_at <= ?1" }
            else { "r.next_at <= ?1 AND (r.next_at, r.row) > (?2, ?3)" }
        let s = try RawStatement(
            db,
            """
            SELECT r.user_id, r.streak, r.handled_through, r.version, r.row, r.next_at, r.zone, r.remind_at, r.remind,
                r.history, r.language
            FROM runs r \(marked == nil ? "JOIN schedule s ON s.rowid = r.row AND s.version = r.version AND s.next_at IS NULL" : "")
            WHERE \(range)
            ORDER BY r.next_at, r.row
            """)
        s.bind(1, through.seconds)
        s.bind(2, after?.at.seconds ?? .min)
        s.bind(3, after?.row ?? .min)
        return (s, marked)
    }

    /// The rows marked changed, when there are few (nil: too many to hold), read once per
    /// transaction (again after it writes: `sqlite3_total_changes` counts this connection's).
    private func markedRows() throws -> Set<Int64>? {
        let changes = sqlite3_total_changes64(db.sqliteConnection)
        if let known = memo.marked, known.changes == changes { return known.rows }
        let s = try RawStatement(db, "SELECT rowid FROM schedule WHERE next_at IS NOT NULL LIMIT ?")
        s.bind(1, Int64(SQLiteMemo.markedLimit + 1))
        var rows = Set<Int64>()
        try s.rows { rows.insert(s.int64(0)) }
        let kept = rows.count > SQLiteMemo.markedLimit ? nil : rows
        memo.marked = (changes, kept)
        return kept
    }

    func changedStreaks(every: Bool, after: Int64?, limit: Int) throws -> [DueStreak] {
        // As `dueStreaks` lists them: handled since the later of the row's mark and its runs'.
        // Few marked rows (after a tick) are found in the set `plannedStreaks` keeps, each looked
        // up by its row: a scan for them would read the whole table. Many are read in row order.
        let columns = """
            SELECT user_id, streak, handled_through, version, rowid,
                (SELECT max(handled_through) FROM runs WHERE row = schedule.rowid), next_at IS NOT NULL
            FROM schedule
            """
        var found: [DueStreak] = []
        func read(_ s: RawStatement) throws {
            try s.rows {
                let (row, runs) = (s.optionalInt64(2), s.optionalInt64(5))
                found.append(Self.dueStreak(s, handled: row.map { max($0, runs ?? $0) } ?? runs, marked: s.int(6) != 0))
            }
        }
        if !every, let marked = try markedRows() {
            let s = try RawStatement(db, columns + " WHERE rowid = ? AND next_at IS NOT NULL")
            for row in marked.filter({ $0 > after ?? .min }).sorted().prefix(limit) {
                s.bind(1, row)
                try read(s)
            }
            return found
        }
        let s = try RawStatement(
            db, columns + " WHERE rowid > ?1 \(every ? "" : "AND next_at IS NOT NULL") ORDER BY rowid LIMIT ?2")
        s.bind(1, after ?? .min)
        s.bind(2, Int64(limit))
        try read(s)
        return found
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
        SELECT u.id, u.zone, u.remind_at, u.remind, u.language, s.history, s.history_version = ?3 AND s.version = ?3
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
            let current = !s.isNull(5) && s.int(6) == 1
            found = (
                Self.user(s),
                current ? PackedHistory.unpack(s.blob(5), user: streak.user, streak: streak.streak) : nil
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
        try streaks.map { try dueHistory(of: $0) }
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
            try schedule(
                (row, run.streak.version, run.streak.marked), run.streak, nextAt: run.next,
                handledThrough: handledThrough, read: run.history.flatMap { $0.fromCopy ? nil : $0.stored },
                user: run.user)
        }
    }
    /// Plans the run of the streak in schedule row `found` (at the streak's version); `user` as the
    /// run read it, carried in the run with the row's packed history (migration 8).
    private func schedule(
        _ found: (row: Int64, version: Int, changed: Bool), _ streak: DueStreak, nextAt: Instant?,
        handledThrough: Instant, read: StoredStreak?, user: User?
    ) throws {
        let drop = try RawStatement(db, "DELETE FROM runs WHERE row = ?")
        drop.bind(1, found.row)
        try drop.run()
        // The row itself only when its mark goes or a history read from the tables is packed: an
        // unchanged streak's run writes no page of the schedule. First, so the run below copies
        // a history packed just now.
        if found.changed || read != nil {
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
        }
        guard let nextAt else { return }
        // SQLite copies the row's blob itself, when it stands for this version.
        let add = try RawStatement(
            db,
            """
            INSERT INTO runs (next_at, row, version, handled_through, user_id, streak, zone, remind_at, remind, language,
                history)
            VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10,
                CASE WHEN ?7 IS NOT NULL THEN
                    (SELECT history FROM schedule WHERE rowid = ?2 AND history_version = ?3 AND version = ?3) END)
            """)
        add.bind(1, nextAt.seconds)
        add.bind(2, found.row)
        add.bind(3, streak.version)
        add.bind(4, handledThrough.seconds)
        add.bind(5, streak.user)
        add.bind(6, streak.streak)
        add.bind(7, user?.zone)
        add.bind(8, user.map { Int64($0.remindAt) })
        add.bind(9, user.map { Int64($0.remind ? 1 : 0) })
        add.bind(10, user?.language)
        try add.run()
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
        try db.execute(sql: "UPDATE schedule SET next_at = 0, version = version + 1")
    }
}
