import GRDB
import StreakCore
import StreakStore

/// What `eachScheduleRow` calls with each row: the user and streak ids, and the packed history
/// when current, valid during the call only.
@_spi(Benchmarks)
public typealias ScheduleRowBody = (
    _ user: UnsafeBufferPointer<UInt8>, _ streak: UnsafeBufferPointer<UInt8>, _ packed: UnsafeBufferPointer<UInt8>?
) throws -> Void

extension SQLiteAccess {
    /// Every streak, part `part` of `parts` (by row id, not sorted): its packed history when
    /// that is current, else its history read from the tables. Answers how many were packed.
    @discardableResult
    func eachPackedStreak(part: Int, of parts: Int, _ body: (StoredStreak) throws -> Void) throws -> Int {
        var packed = 0
        var stale: [(user: String, streak: String)] = []
        try eachScheduleRow(part: part, of: parts) { u, s, bytes in
            let (user, streak) = (String(decoding: u, as: UTF8.self), String(decoding: s, as: UTF8.self))
            if let bytes, let history = PackedHistory.unpack(bytes, user: user, streak: streak) {
                packed += 1
                try body(history)
            } else {
                stale.append((user, streak))
            }
        }
        for (user, streak) in stale {
            if let user = try self.user(user) { try body(try storedStreak(of: user, streak: streak)) }
        }
        return packed
    }
}

extension SQLiteAccess {
    func eachScheduleRow(part: Int, of parts: Int, _ body: ScheduleRowBody) throws {
        // Each page is read once: a small page cache is recycled, where a large one would grow
        // (allocations under SQLite's global memory mutex, contended by the other parts).
        let cache = try Int.fetchOne(db, sql: "PRAGMA cache_size") ?? -2000
        try db.execute(sql: "PRAGMA cache_size = -1024")
        defer { try? db.execute(sql: "PRAGMA cache_size = \(cache)") }
        // Two subqueries: each is one seek, where one min-and-max scans an index.
        let bounds = try RawStatement(
            db, "SELECT coalesce((SELECT min(rowid) FROM schedule), 0), coalesce((SELECT max(rowid) FROM schedule), -1)"
        )
        guard try bounds.step() else { return }
        let (low, high) = (bounds.int64(0), bounds.int64(1))
        bounds.reset()
        let size = (high - low + Int64(parts)) / Int64(parts)
        let rows = try RawStatement(
            db,
            """
            SELECT user_id, streak, CASE WHEN history_version = version THEN history END
            FROM schedule WHERE rowid >= ? AND rowid < ?
            """)
        rows.bind(1, low + size * Int64(part))
        rows.bind(2, low + size * Int64(part + 1))
        try rows.rows { try body(rows.bytes(0), rows.bytes(1), rows.isNull(2) ? nil : rows.blob(2)) }
    }
}

/// The schedule's rows one part at a time, for work over every streak at once (the benchmark's
/// recomputation): not a role, since only SQLite keeps histories packed in its rows.
@_spi(Benchmarks)
public struct ScheduleRows {
    let access: SQLiteAccess

    /// Every schedule row in part `part` of `parts`, unsorted, read during the call only.
    public func each(part: Int, of parts: Int, _ body: ScheduleRowBody) throws {
        try access.eachScheduleRow(part: part, of: parts, body)
    }
}

extension SQLiteStore {
    /// A read with the schedule's rows at hand as well as the roles.
    @_spi(Benchmarks)
    public func readScheduleRows<T>(_ body: (any StoreReader, ScheduleRows) throws -> T) throws -> T {
        try wrap {
            try queue.read { db in
                let access = SQLiteAccess(db: db)
                return try body(access, ScheduleRows(access: access))
            }
        }
    }

    /// A read on this store's own reader and writer, for tests of what only SQLite has.
    func access<T>(_ body: (SQLiteAccess) throws -> T) throws -> T {
        try wrap { try queue.read { db in try body(SQLiteAccess(db: db)) } }
    }
}

extension SQLiteAccess {
    func achievementFacts(of users: [String]) throws -> [AchievementFacts] {
        let streaks = try RawStatement(
            db, "SELECT user_id, streak, handled_through, version, id FROM schedule WHERE user_id = ? ORDER BY streak")
        let tagged = try RawStatement(
            db,
            "SELECT streak, at, meta FROM checkins INDEXED BY checkins_tagged WHERE user_id = ? AND meta IS NOT NULL ORDER BY streak, at"
        )
        return try users.map { user in
            var facts = AchievementFacts()
            streaks.bind(1, user)
            try streaks.rows {
                facts.streaks.append(
                    DueStreak(
                        user: user, streak: streaks.text(1),
                        handledThrough: streaks.optionalInt64(2).map(Instant.init(seconds:)), version: streaks.int(3),
                        row: streaks.int64(4)))
            }
            tagged.bind(1, user)
            try tagged.rows {
                facts.tagged.append(
                    TaggedCheckin(
                        streak: tagged.text(0), instant: Instant(seconds: tagged.int64(1)), meta: tagged.text(2)))
            }
            return facts
        }
    }
}
