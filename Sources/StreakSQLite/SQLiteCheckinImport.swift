import Foundation
import GRDB
import StreakCore
import StreakStore

/// Check-ins inserted `batch` rows per statement run. The table is clustered on (user, streak,
/// at, id) (migration 12): rows in that order go to its end, or in one pass through it; rows in
/// any order go where they belong. Each new row takes the next id from the store's counter
/// (`idsKey` in `meta`). The schedule is updated once, at the end, for every (user, streak)
/// that got a new row (docs/RULES.md, "Import at scale").
final class SQLiteCheckinImport: CheckinImport {
    /// Rows per run of the many-row statement.
    static let batch = 64
    /// The `meta` key of the largest check-in id given.
    static let idsKey = "checkin_ids"
    /// The (user, streak) pairs an import in any order keeps at most; beyond, the schedule
    /// is updated from every row above the ids before the import (which reads the table).
    static let looseLimit = 1 << 16

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
    var pending = PendingRows()
    var result = InsertResult()
    /// The (user, streak) pairs of the rows stored, in order, while the rows come in the table's
    /// order (nil once not, or when they never did).
    var pairs: PairList?
    /// Else the pairs as they come, each once, up to `looseLimit` (nil beyond: the schedule is
    /// then updated from the rows).
    var loose: Set<[UInt8]>? = []
    let looseLimit: Int

    /// `inIndexOrder`: the rows come sorted as the table is (user, streak, at), which then takes
    /// each at or near its end (an empty store's), or in one pass through it.
    /// `looseLimit`: less in tests.
    init(
        db: Database, storedAt: Instant, expectedRows: Int?, inIndexOrder: Bool = false,
        looseLimit: Int = SQLiteCheckinImport.looseLimit
    ) throws {
        self.db = db
        self.looseLimit = looseLimit
        self.storedAt = storedAt.seconds
        one = try RawStatement(db, Self.insert(rows: 1))
        lastID =
            try Int64.fetchOne(
                db, sql: "SELECT CAST(value AS INTEGER) FROM meta WHERE key = ?", arguments: [Self.idsKey]) ?? 0
        nextID = lastID + 1
        // Pairs in order, or else as they come (a list out of order is given up for the rows).
        if inIndexOrder { (pairs, loose) = (PairList(), nil) }
    }

    deinit { pending.deallocate() }

    static func insert(rows: Int) -> String {
        "INSERT INTO checkins (user_id, streak, at, zone, event_id, meta, stored_at, id) VALUES "
            + Array(repeating: "(?, ?, ?, ?, ?, ?, ?, ?)", count: rows).joined(separator: ", ")
            + " ON CONFLICT DO NOTHING"
    }

    func insert(
        user: UnsafeBufferPointer<UInt8>, streak: UnsafeBufferPointer<UInt8>, at: Instant,
        zone: UnsafeBufferPointer<UInt8>, eventID: UnsafeBufferPointer<UInt8>?, meta: String?
    ) throws {
        var meta = meta
        let bytes = user.count + streak.count + zone.count + (eventID?.count ?? 0) + (meta?.utf8.count ?? 0)
        if !pending.fits(bytes) { try flush() }
        pending.reserve(bytes)
        if meta == nil {
            pending.add(user, streak, at.seconds, zone, eventID, nil)
        } else {
            meta!.withUTF8 { pending.add(user, streak, at.seconds, zone, eventID, $0) }
        }
        if pending.count == Self.batch { try flush() }
    }

    /// Runs the pending rows: all in one run when they are a batch, else one by one.
    private func flush() throws {
        guard pending.count > 0 else { return }
        var changed = 0
        let firstID = nextID
        if pending.count == Self.batch {
            let many = try self.many ?? RawStatement(db, Self.insert(rows: Self.batch))
            self.many = many
            for row in 0..<pending.count {
                pending.bind(row, to: many, from: Int32(row * 8), storedAt: storedAt, id: firstID + Int64(row))
            }
            changed = try many.run()
        } else {
            for row in 0..<pending.count {
                pending.bind(row, to: one, from: 0, storedAt: storedAt, id: firstID + Int64(row))
                changed += try one.run()
            }
        }
        nextID += Int64(pending.count)
        result.inserted += changed
        result.duplicates += pending.count - changed
        if pairs != nil || loose != nil {
            // Which rows were stored, when not all were (an event id stored already): none when
            // none was (a file imported again), else each looked up by its key, its id the import's own.
            let kept: [Bool]? =
                switch changed {
                case pending.count: nil
                case 0: Array(repeating: false, count: pending.count)
                default: try storedRows(from: firstID)
                }
            if pairs != nil {
                pending.addPairs(to: &pairs, only: kept)
            } else {
                pending.addPairs(to: &loose, only: kept, limit: looseLimit)
            }
        }
        pending.removeAll()
    }

    /// Whether each pending row (ids from `firstID` on) was stored.
    private func storedRows(from firstID: Int64) throws -> [Bool] {
        let stored = try self.stored
            ?? RawStatement(db, "SELECT 1 FROM checkins WHERE user_id = ? AND streak = ? AND at = ? AND id = ?")
        self.stored = stored
        return try (0..<pending.count).map { row in
            pending.bindKey(row, to: stored, id: firstID + Int64(row))
            defer { stored.reset() }
            return try stored.step()
        }
    }

    func finish() throws -> InsertResult {
        try flush()
        if nextID - 1 != lastID {
            try db.execute(
                sql: "INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                arguments: [Self.idsKey, String(nextID - 1)])
        }
        // What `touch` does, once per (user, streak) with new rows (duplicates were not
        // inserted): from the pairs kept, or else from the rows, read in the table's order.
        if let pairs {
            try touch(pairs)
            return result
        }
        if let loose {
            // The user's bytes, 0xFF (never in UTF-8), the streak's; made due in the order the
            // statement over the rows would (by user, then streak, bytes compared).
            let keys = loose.map { key in (key, key.firstIndex(of: 0xFF)!) }.sorted { a, b in
                let (ua, ub) = (a.0[..<a.1], b.0[..<b.1])
                if !ua.elementsEqual(ub) { return ua.lexicographicallyPrecedes(ub) }
                return a.0[(a.1 + 1)...].lexicographicallyPrecedes(b.0[(b.1 + 1)...])
            }
            try touch(count: keys.count) { k, body in
                let (key, cut) = keys[k]
                key.withUnsafeBufferPointer { b in
                    body(UnsafeBufferPointer(rebasing: b[..<cut]), UnsafeBufferPointer(rebasing: b[(cut + 1)...]))
                }
            }
            return result
        }
        try db.execute(
            sql: """
                INSERT INTO schedule (user_id, streak, next_at, version)
                SELECT user_id, streak, 0, 1 FROM checkins WHERE id > ?
                GROUP BY user_id, streak
                ON CONFLICT (user_id, streak) DO UPDATE SET next_at = 0, version = version + 1
                """, arguments: [lastID])
        return result
    }
}

extension SQLiteCheckinImport {
    static func touch(pairs: Int) -> String {
        "INSERT INTO schedule (user_id, streak, next_at, version) VALUES "
            + Array(repeating: "(?, ?, 0, 1)", count: pairs).joined(separator: ", ")
            + " ON CONFLICT (user_id, streak) DO UPDATE SET next_at = 0, version = version + 1"
    }

    /// Makes each pair due, as the statement over the new rows does, `batch` pairs a run.
    func touch(_ pairs: PairList) throws {
        try pairs.bytes.withUnsafeBufferPointer { users in
            try pairs.streakText.withUnsafeBufferPointer { streaks in
                try touch(count: pairs.count) { k, body in
                    let (user, streak) = pairs.pair(k, users: users, streaks: streaks)
                    body(user, streak)
                }
            }
        }
    }

    /// Makes `count` pairs due, pair `k` given to the closure `pair(k, body)` passes it to.
    func touch(
        count: Int,
        pair: (Int, (UnsafeBufferPointer<UInt8>, UnsafeBufferPointer<UInt8>) -> Void) -> Void
    ) throws {
        let many = try RawStatement(db, Self.touch(pairs: Self.batch))
        let one = try RawStatement(db, Self.touch(pairs: 1))
        func bind(_ statement: RawStatement, _ k: Int, at base: Int32) {
            pair(k) { user, streak in
                statement.bind(base + 1, user)
                statement.bind(base + 2, streak)
            }
        }
        var k = 0
        while count - k >= Self.batch {
            for i in 0..<Self.batch { bind(many, k + i, at: Int32(2 * i)) }
            try many.run()
            k += Self.batch
        }
        while k < count {
            bind(one, k, at: 0)
            try one.run()
            k += 1
        }
    }
}

/// Check-ins waiting for a batch: their texts copied end to end into one
/// buffer that stays put until they have run, so SQLite reads them in place.
struct PendingRows {
    struct Row {
        var user: Range<Int>
        var streak: Range<Int>
        var at: Int64
        var zone: Range<Int>
        var eventID: Range<Int>?
        var meta: Range<Int>?
    }

    private(set) var rows: [Row] = []
    private var bytes = UnsafeMutableBufferPointer<UInt8>.allocate(capacity: 1 << 16)
    private var used = 0

    var count: Int { rows.count }

    func fits(_ n: Int) -> Bool { used + n <= bytes.count }

    /// Room for `n` more bytes; only while nothing is pending may the buffer move.
    mutating func reserve(_ n: Int) {
        guard !fits(n) else { return }
        precondition(rows.isEmpty)
        bytes.deallocate()
        bytes = .allocate(capacity: max(n, 2 * bytes.count))
    }

    mutating func add(
        _ user: UnsafeBufferPointer<UInt8>, _ streak: UnsafeBufferPointer<UInt8>, _ at: Int64,
        _ zone: UnsafeBufferPointer<UInt8>, _ eventID: UnsafeBufferPointer<UInt8>?,
        _ meta: UnsafeBufferPointer<UInt8>?
    ) {
        rows.append(
            Row(
                user: copy(user), streak: copy(streak), at: at, zone: copy(zone), eventID: eventID.map { copy($0) },
                meta: meta.map { copy($0) }))
    }

    func bind(_ row: Int, to statement: RawStatement, from base: Int32, storedAt: Int64, id: Int64) {
        let r = rows[row]
        let text = UnsafeBufferPointer(bytes)
        statement.bind(base + 1, UnsafeBufferPointer(rebasing: text[r.user]))
        statement.bind(base + 2, UnsafeBufferPointer(rebasing: text[r.streak]))
        statement.bind(base + 3, r.at)
        statement.bind(base + 4, UnsafeBufferPointer(rebasing: text[r.zone]))
        statement.bind(base + 5, r.eventID.map { UnsafeBufferPointer(rebasing: text[$0]) })
        statement.bind(base + 6, r.meta.map { UnsafeBufferPointer(rebasing: text[$0]) })
        statement.bind(base + 7, storedAt)
        statement.bind(base + 8, id)
    }

    /// Binds the row's key (user, streak, at) and `id` to parameters 1–4.
    func bindKey(_ row: Int, to statement: RawStatement, id: Int64) {
        let r = rows[row]
        let text = UnsafeBufferPointer(bytes)
        statement.bind(1, UnsafeBufferPointer(rebasing: text[r.user]))
        statement.bind(2, UnsafeBufferPointer(rebasing: text[r.streak]))
        statement.bind(3, r.at)
        statement.bind(4, id)
    }

    /// Adds the (user, streak) pairs of the rows (of those `only` marks, when given) to `pairs`,
    /// or sets it to nil when they are out of order.
    func addPairs(to pairs: inout PairList?, only: [Bool]?) {
        let text = UnsafeBufferPointer(bytes)
        for (i, r) in rows.enumerated() where only?[i] ?? true {
            guard
                pairs?.add(UnsafeBufferPointer(rebasing: text[r.user]), UnsafeBufferPointer(rebasing: text[r.streak]))
                    == true
            else {
                pairs = nil
                return
            }
        }
    }

    /// Adds the pairs to a set (the user's bytes, 0xFF, the streak's), or sets it to nil when
    /// it would hold more than `limit`.
    func addPairs(to pairs: inout Set<[UInt8]>?, only: [Bool]?, limit: Int) {
        let text = UnsafeBufferPointer(bytes)
        for (i, r) in rows.enumerated() where only?[i] ?? true {
            guard pairs != nil else { return }
            var key = [UInt8]()
            key.reserveCapacity(r.user.count + 1 + r.streak.count)
            key.append(contentsOf: text[r.user])
            key.append(0xFF)
            key.append(contentsOf: text[r.streak])
            pairs!.insert(key)
            if pairs!.count > limit { pairs = nil }
        }
    }

    mutating func removeAll() {
        rows.removeAll(keepingCapacity: true)
        used = 0
    }

    func deallocate() { bytes.deallocate() }

    private mutating func copy(_ text: UnsafeBufferPointer<UInt8>) -> Range<Int> {
        let start = used
        if let base = text.baseAddress, !text.isEmpty {
            (bytes.baseAddress! + start).update(from: base, count: text.count)
        }
        used += text.count
        return start..<used
    }
}
