import Foundation
import GRDB
import StreakCore
import StreakStore

/// Check-ins inserted `batch` rows per statement run, bound straight from the batch's texts
/// (SQLite reads them in place). The table is clustered on (user, streak, at, id) (migration
/// 12): rows in that order go to its end, or in one pass through it; rows in any order go where
/// they belong. Each new row takes the next id from the store's counter (`idsKey` in `meta`).
/// The schedule is updated once, at the end, for every (user, streak) that got a new row
/// (`ImportPairs`; docs/ARCHITECTURE.md, "Import at scale").
final class SQLiteCheckinImport: CheckinImport {
    /// Rows per run of the many-row statement.
    static let batch = 64
    /// The `meta` key of the largest check-in id given.
    static let idsKey = "checkin_ids"

    let db: Database
    /// One row, and `batch` rows (prepared when a batch is full: `checkin` stores one).
    let one: RawStatement
    var many: RawStatement?
    /// Whether a row is stored (the import's own ids are unique): for a batch where some were not.
    var stored: RawStatement?
    let storedAt: Int64
    /// The largest id before the import: every row above it is new.
    let lastID: Int64
    /// The next row's id.
    var nextID: Int64
    /// The rows of a batch past its last full `batch`, copied, for the next batch to fill up
    /// (or `finish` to run).
    var carry = CheckinRows()
    var result = InsertResult()
    /// Whether the result lists the rows not stored (`insertCheckins`), and the rows run so far.
    var noteDuplicates = false
    var ran = 0
    /// The (user, streak) pairs of the rows stored.
    var pairs: ImportPairs

    /// `looseLimit`: less in tests (`ImportPairs`).
    init(db: Database, storedAt: Instant, expectedRows: Int?, looseLimit: Int = ImportPairs.looseLimit) throws {
        self.db = db
        pairs = ImportPairs(looseLimit: looseLimit)
        self.storedAt = storedAt.seconds
        one = try RawStatement(db, Self.insert(rows: 1))
        lastID =
            try Int64.fetchOne(
                db, sql: "SELECT CAST(value AS INTEGER) FROM meta WHERE key = ?", arguments: [Self.idsKey]) ?? 0
        nextID = lastID + 1
    }

    static func insert(rows: Int) -> String {
        "INSERT INTO checkins (user_id, streak, at, zone, event_id, meta, stored_at, id) VALUES "
            + Array(repeating: "(?, ?, ?, ?, ?, ?, ?, ?)", count: rows).joined(separator: ", ")
            + " ON CONFLICT DO NOTHING"
    }

    func insert(_ rows: CheckinRows) throws {
        var next = 0
        if !carry.isEmpty {
            next = min(Self.batch - carry.count, rows.count)
            carry.append(rows, 0..<next)
            guard carry.count == Self.batch else { return }
            try carry.withRows { try run($0, 0..<Self.batch) }
            carry.removeAll()
        }
        let whole = next + (rows.count - next) / Self.batch * Self.batch
        if whole > next {
            try rows.withRows { r in
                for start in stride(from: next, to: whole, by: Self.batch) { try run(r, start..<(start + Self.batch)) }
            }
        }
        if whole < rows.count { carry.append(rows, whole..<rows.count) }
    }

    /// Runs rows `range` with the next ids: in one run when they are a batch, else one by one.
    private func run(_ rows: CheckinRows.Fields, _ range: Range<Int>) throws {
        var changed = 0
        let firstID = nextID
        var duplicateRows: [Int] = []
        if range.count == Self.batch {
            let many = try self.many ?? RawStatement(db, Self.insert(rows: Self.batch))
            self.many = many
            for (k, i) in range.enumerated() { bind(rows, i, to: many, from: Int32(k * 8), id: firstID + Int64(k)) }
            changed = try many.run()
            if noteDuplicates, changed < range.count {
                let kept = changed == 0 ? nil : try storedRows(rows, range, from: firstID)
                duplicateRows = (0..<range.count).filter { !(kept?[$0] ?? false) }
            }
        } else {
            for (k, i) in range.enumerated() {
                bind(rows, i, to: one, from: 0, id: firstID + Int64(k))
                let stored = try one.run()
                changed += stored
                if stored == 0 { duplicateRows.append(k) }
            }
        }
        if noteDuplicates { result.duplicateRows += duplicateRows.map { ran + $0 } }
        ran += range.count
        nextID += Int64(range.count)
        result.inserted += changed
        result.duplicates += range.count - changed
        // Which rows were stored, when not all were (an event id stored already): none when none
        // was (a file imported again), else each looked up by its key, its id the import's own.
        guard pairs.isKept, changed > 0 else { return }
        let kept = changed == range.count ? nil : try storedRows(rows, range, from: firstID)
        for (k, i) in range.enumerated() where kept?[k] ?? true { pairs.add(rows.user(i), rows.streak(i)) }
    }

    private func bind(_ rows: CheckinRows.Fields, _ i: Int, to statement: RawStatement, from base: Int32, id: Int64) {
        statement.bind(base + 1, rows.user(i))
        statement.bind(base + 2, rows.streak(i))
        statement.bind(base + 3, rows.at(i).seconds)
        statement.bind(base + 4, rows.zone(i))
        statement.bind(base + 5, rows.eventID(i))
        statement.bind(base + 6, rows.meta(i))
        statement.bind(base + 7, storedAt)
        statement.bind(base + 8, id)
    }

    /// Whether each row of `range` (ids from `firstID` on) was stored.
    private func storedRows(_ rows: CheckinRows.Fields, _ range: Range<Int>, from firstID: Int64) throws -> [Bool] {
        let stored = try self.stored
            ?? RawStatement(db, "SELECT 1 FROM checkins WHERE user_id = ? AND streak = ? AND at = ? AND id = ?")
        self.stored = stored
        return try range.enumerated().map { k, i in
            stored.bind(1, rows.user(i))
            stored.bind(2, rows.streak(i))
            stored.bind(3, rows.at(i).seconds)
            stored.bind(4, firstID + Int64(k))
            defer { stored.reset() }
            return try stored.step()
        }
    }

    func finish() throws -> InsertResult {
        if !carry.isEmpty {
            try carry.withRows { try run($0, 0..<carry.count) }
            carry.removeAll()
        }
        if nextID - 1 != lastID {
            try db.execute(
                sql: "INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                arguments: [Self.idsKey, String(nextID - 1)])
        }
        // What `touch` does, once per (user, streak) with new rows (duplicates were not
        // inserted): from the pairs kept, or else from the rows, read in the table's order.
        if try touch(pairs) { return result }
        try db.execute(
            sql: """
                INSERT INTO schedule (user_id, streak, next_at, version)
                SELECT user_id, streak, 0, 1 FROM checkins WHERE id > ?
                GROUP BY user_id, streak
                ON CONFLICT (user_id, streak) DO UPDATE SET next_at = 0, version = version + 1
                """, arguments: [lastID])
        return result
    }

    /// The usual users among the rows' users (after `finish`), by id. From the pairs kept, the
    /// two sorted lists stepped through together: from an import user, the first usual id at or
    /// after it (`users_usual`); the import users below that one pass without a lookup, so the
    /// lookups are at most the fewer of the two, plus one. Else from the rows above the ids
    /// before the import, as `finish` reads them.
    func usualUsers() throws -> [String] {
        guard pairs.isKept else {
            return try String.fetchAll(
                db,
                sql: """
                    SELECT DISTINCT user_id FROM checkins WHERE id > ? AND user_id IN
                        (SELECT id FROM users INDEXED BY users_usual WHERE remind_usual = 1)
                    ORDER BY user_id
                    """, arguments: [lastID])
        }
        let next = try RawStatement(
            db, "SELECT id FROM users INDEXED BY users_usual WHERE remind_usual = 1 AND id >= ? ORDER BY id LIMIT 1")
        var found: [String] = []
        // The first usual id at or after the last user looked from (none looked from yet: nil,
        // none left: `done`).
        var ahead: [UInt8]?
        var done = false
        try pairs.forEachInOrder { _, user, _ in
            guard !done else { return }
            if ahead.map({ a in a.withUnsafeBufferPointer { compareBytes($0, user) } < 0 }) ?? true {
                next.bind(1, user)
                defer { next.reset() }
                guard try next.step() else {
                    done = true
                    return
                }
                ahead = Array(next.bytes(0))
            }
            guard ahead!.withUnsafeBufferPointer({ sameBytes($0, user) }),
                !(found.last?.utf8.elementsEqual(user) ?? false)
            else { return }
            found.append(String(decoding: user, as: UTF8.self))
        }
        return found
    }

    static func touch(pairs: Int) -> String {
        "INSERT INTO schedule (user_id, streak, next_at, version) VALUES "
            + Array(repeating: "(?, ?, 0, 1)", count: pairs).joined(separator: ", ")
            + " ON CONFLICT (user_id, streak) DO UPDATE SET next_at = 0, version = version + 1"
    }

    /// Makes each pair kept due, as the statement over the new rows does, in the order it does
    /// (by user, then streak), `batch` pairs a run; false when the pairs were not kept.
    private func touch(_ pairs: ImportPairs) throws -> Bool {
        guard let count = pairs.keptCount else { return false }
        let many = try RawStatement(db, Self.touch(pairs: Self.batch))
        let one = try RawStatement(db, Self.touch(pairs: 1))
        let whole = count / Self.batch * Self.batch
        try pairs.forEachInOrder { k, user, streak in
            if k < whole {
                let base = Int32(2 * (k % Self.batch))
                many.bind(base + 1, user)
                many.bind(base + 2, streak)
                if k % Self.batch == Self.batch - 1 { try many.run() }
            } else {
                one.bind(1, user)
                one.bind(2, streak)
                try one.run()
            }
        }
        return true
    }
}
