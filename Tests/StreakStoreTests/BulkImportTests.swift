import Foundation
import GRDB
import StreakCore
import StreakStore
import StreakTestKit
import Testing

@testable import StreakSQLite

/// `checkinImport` and `userImport`: the same rows whichever way the index is
/// kept, the schedule as `touch` leaves it, and nothing at all after a rollback.
@Suite(.fastTier) struct BulkImportTests {
    static let users = (0..<40).map { "u\($0)" }

    /// A store with users, a few check-ins and a schedule row with a version to bump.
    static func seeded() throws -> SQLiteStore {
        try seed(SQLiteStore(path: scratch() + "/s.sqlite"))
    }

    /// Gives `store` the users, check-ins and schedule row of `seeded` (on either engine).
    static func seed<S: Store>(_ store: S) throws -> S {
        try store.write { (w: any StoreWriter) throws in
            for u in users { _ = try w.addUser(User(id: u, zone: "UTC"), at: t0) }
            _ = try w.insertCheckins(
                [
                    NewCheckin(user: "u1", streak: "daily", instant: t0, zone: "UTC", eventID: "old"),
                    NewCheckin(user: "u2", streak: "daily", instant: t0, zone: "UTC"),
                ], storedAt: t0)
            _ = try w.insertCheckins([NewCheckin(user: "u1", streak: "daily", instant: t0, zone: "UTC")], storedAt: t0)
        }
        return store
    }

    /// 2,000 check-ins over the users and three streaks, some repeating event ids.
    static let rows: [NewCheckin] = (0..<2000).map { i in
        NewCheckin(
            user: users[i * 7 % users.count], streak: ["daily", "workout", "reading"][i % 3],
            instant: t0 + Int64(i * 37 % 5000), zone: i % 5 == 0 ? "Asia/Tokyo" : "UTC",
            eventID: i % 4 == 0 ? "e\(i % 600)" : (i == 1 ? "old" : nil), meta: i % 9 == 0 ? #"{"n":1}"# : nil)
    }

    /// The rows an import of `rows` into the seeded store stores (the others repeat an event id).
    static let stored: [NewCheckin] = {
        var seen: Set<[String]> = [["u1", "old"]]
        return rows.filter { c in c.eventID.map { seen.insert([c.user, $0]).inserted } ?? true }
    }()

    /// `rows` through the store's check-in import (either engine), `expectedRows` as `import` says it.
    static func importRows(_ rows: [NewCheckin] = BulkImportTests.rows, into store: any Store, expectedRows: Int?) throws
        -> InsertResult
    {
        try store.write(.bulkImport) { w in
            let bulk = try w.checkinImport(storedAt: t0 + 60, expectedRows: expectedRows)
            for c in rows { try bulk.insert(c) }
            return try bulk.finish()
        }
    }

    /// Everything an import writes, as text, and the indexes the table has.
    static func contents(_ store: SQLiteStore) throws -> [String] {
        try store.queue.read { db in
            try String.fetchAll(
                db,
                sql: """
                    SELECT printf('%d %s %s %d %s %s %s %d', id, user_id, streak, at, zone, event_id, meta, stored_at)
                    FROM checkins ORDER BY id
                    """)
                + String.fetchAll(
                    db,
                    sql: "SELECT printf('%s %s %s %s', user_id, streak, next_at, version) FROM schedule ORDER BY 1")
                + String.fetchAll(db, sql: "SELECT sql FROM sqlite_master WHERE tbl_name = 'checkins' ORDER BY name")
                + String.fetchAll(db, sql: "PRAGMA integrity_check")
        }
    }

    /// Rows of many imports into one store, with an import's own pairs or from the rows: with
    /// `looseLimit` 0 the schedule is updated from every row above the ids before the import.
    static func importRows(into store: SQLiteStore, looseLimit: Int) throws -> InsertResult {
        try store.write(.bulkImport) { w in
            let bulk = try SQLiteCheckinImport(
                db: (w as! SQLiteAccess).db, storedAt: t0 + 60, expectedRows: nil, looseLimit: looseLimit)
            for c in rows { try bulk.insert(c) }
            return try bulk.finish()
        }
    }

    @Test func theScheduleFromTheRowsIsWhatThePairsGive() throws {
        let pairs = try Self.seeded()
        let scanned = try Self.seeded()
        let before = try Self.contents(pairs)
        let a = try Self.importRows(into: pairs, expectedRows: 0)
        let b = try Self.importRows(into: scanned, looseLimit: 0)
        #expect(a == b)
        #expect(a.inserted == Self.stored.count && a.duplicates == Self.rows.count - Self.stored.count, "\(a)")
        #expect(a.duplicates > 100)
        let after = try Self.contents(scanned)
        #expect(after == (try Self.contents(pairs)))
        #expect(after.last == "ok")
        #expect(after.contains { $0.hasPrefix("CREATE TABLE \"checkins\"") && $0.hasSuffix("WITHOUT ROWID") }, "\(after.suffix(5))")
        #expect(before.filter { $0.hasPrefix("CREATE") } == after.filter { $0.hasPrefix("CREATE") })
        // Ids go on from the counter: the seed's three rows took 1-3.
        let ids = try scanned.queue.read { db in try Int64.fetchAll(db, sql: "SELECT id FROM checkins ORDER BY id LIMIT 4") }
        #expect(ids == [1, 2, 3, 4])
    }

    /// Batches of any size store what rows one at a time store: SQLite runs 64 rows a
    /// statement, the rows past a batch's last 64 waiting for the next batch (or the end).
    @Test func batchesOfAnySizeStoreWhatSingleRowsStore() throws {
        let single = try Self.seeded()
        let batched = try Self.seeded()
        let a = try Self.importRows(into: single, expectedRows: nil)
        let b = try batched.write(.bulkImport) { w -> InsertResult in
            let bulk = try w.checkinImport(storedAt: t0 + 60, expectedRows: nil)
            var start = 0
            for size in [1, 7, 100, 63, 64, 65, 128, 1, 500] + [Self.rows.count] {
                let end = min(start + size, Self.rows.count)
                try bulk.insert(CheckinRows(Array(Self.rows[start..<end])))
                start = end
            }
            return try bulk.finish()
        }
        #expect(a == b)
        #expect(try Self.contents(single) == (try Self.contents(batched)))
    }

    @Test func theScheduleIsWhatTouchLeaves() throws {
        let store = try Self.seeded()
        func schedule() throws -> [String] {
            try store.queue.read { db in
                try String.fetchAll(
                    db,
                    sql: "SELECT user_id || ' ' || streak || ' ' || next_at || ' ' || version FROM schedule ORDER BY 1")
            }
        }
        #expect(try schedule() == ["u1 daily 0 2", "u2 daily 0 1"], "the seed touched u1/daily twice")
        _ = try store.write { w in
            try w.insertCheckins(
                [
                    NewCheckin(user: "u1", streak: "daily", instant: t0, zone: "UTC", eventID: "old"),  // a no-op
                    NewCheckin(user: "u3", streak: "daily", instant: t0, zone: "UTC"),
                    NewCheckin(user: "u3", streak: "daily", instant: t0 + 1, zone: "UTC"),
                ], storedAt: t0)
        }
        #expect(try schedule() == ["u1 daily 0 2", "u2 daily 0 1", "u3 daily 0 1"], "once per import, not per row")
        try store.queue.write { db in try db.execute(sql: "UPDATE schedule SET next_at = 99") }
        _ = try Self.importRows(into: store, expectedRows: 10_000_000)
        let after = try schedule()
        // Every pair that got a row is touched once more; the others keep their plan.
        let named = Set(Self.stored.map { "\($0.user) \($0.streak)" })
        for line in after {
            let parts = line.split(separator: " ")
            let pair = "\(parts[0]) \(parts[1])"
            let old = ["u1 daily": 2, "u2 daily": 1, "u3 daily": 1][pair] ?? 0
            #expect(named.contains(pair) ? line == "\(pair) 0 \(old + 1)" : line == "\(pair) 99 \(old)", "\(line)")
        }
        #expect(after.count == named.union(["u1 daily", "u2 daily", "u3 daily"]).count)
    }

    struct Boom: Error {}

    @Test func aRollbackAfterARebuildLeavesEverythingAsItWas() throws {
        let store = try Self.seeded()
        let before = try Self.contents(store)
        #expect(throws: Boom.self) {
            try store.write(.bulkImport) { (w: any StoreWriter) throws in
                let bulk = try w.checkinImport(storedAt: t0, expectedRows: 10_000_000)
                for c in Self.rows { try bulk.insert(c) }
                _ = try bulk.finish()
                throw Boom()
            }
        }
        #expect(throws: Boom.self) {
            try store.write(.bulkImport) { (w: any StoreWriter) throws in
                let bulk = try w.checkinImport(storedAt: t0, expectedRows: 10_000_000)
                for c in Self.rows { try bulk.insert(c) }
                throw Boom()  // with the index dropped and not built again
            }
        }
        #expect(try Self.contents(store) == before)
        let indexes = try store.queue.read { db in
            try String.fetchAll(db, sql: "SELECT name FROM pragma_index_list('checkins') ORDER BY 1")
        }
        #expect(indexes == ["checkins_event", "checkins_tagged", "sqlite_autoindex_checkins_1"])
        let foreignKeys = try store.queue.read { db in try Int.fetchOne(db, sql: "PRAGMA foreign_keys") }
        #expect(foreignKeys == 1, "bulkWrite turns them back on")
    }

    @Test func userImportAddsAndUpdatesAsAddUserAndUpdateUserDo() throws {
        let store = try Self.seeded()
        let later = t0 + 3600
        let (added, updated) = try store.write { w -> (Int, Int) in
            let bulk = try w.userImport(at: later)
            for u in [
                User(id: "u1", zone: "UTC"),  // unchanged
                User(id: "u2", zone: "UTC", remindAt: 3600),  // reminder only
                User(id: "u3", zone: "Asia/Tokyo", remind: false),  // zone
                User(id: "new", zone: "Europe/Berlin"),
            ] {
                try bulk.put(u)
            }
            return try bulk.finish()
        }
        #expect(added == 1 && updated == 3)
        try store.read { (r: any StoreReader) throws in
            #expect(try r.user("u2") == User(id: "u2", zone: "UTC", remindAt: 3600))
            #expect(try r.user("u3") == User(id: "u3", zone: "Asia/Tokyo", remind: false))
            #expect(try r.user("new") == User(id: "new", zone: "Europe/Berlin"))
            #expect(try r.zoneHistory(of: "u3").map(\.zone) == ["UTC", "Asia/Tokyo"])
            #expect(try r.zoneHistory(of: "new") == [StoredZoneChange(since: later, zone: "Europe/Berlin")])
        }
        let versions = try store.queue.read { db in
            try String.fetchAll(db, sql: "SELECT user_id || ' ' || version FROM schedule ORDER BY 1")
        }
        #expect(versions == ["u1 2", "u2 2"], "u1 is unchanged; u2 changed")
    }

    /// Users reminded at their usual hour: a0 and zz have no row to import.
    static let usual = ["a0", "u1", "u17", "u39", "u5", "zz"]
    /// Those an import of `rows` names (bytes compared).
    static let usualImported = ["u1", "u17", "u39", "u5"]

    /// Adds the `usual` users missing from `store` and makes each usual (either engine).
    static func makeUsual(_ store: any Store) throws {
        try store.write { (w: any StoreWriter) throws in
            for u in usual where try w.user(u) == nil { _ = try w.addUser(User(id: u, zone: "UTC"), at: t0) }
            for u in usual { try w.updateUser(User(id: u, zone: "UTC", remindUsual: true), at: t0) }
        }
    }

    /// `rows` through the store's check-in import (either engine); answers its usual users.
    static func usualUsers(importing rows: [NewCheckin], into store: any Store, expectedRows: Int?) throws -> [String] {
        try store.write(.bulkImport) { w in
            let bulk = try w.checkinImport(storedAt: t0 + 60, expectedRows: expectedRows)
            for c in rows { try bulk.insert(c) }
            _ = try bulk.finish()
            return try bulk.usualUsers()
        }
    }

    /// An import's usual users are those of its stored rows, and no other usual user of the
    /// store, whichever way it kept its pairs: sorted (rows in order), as a set (out of order),
    /// or not at all (read from the rows).
    @Test func theUsualUsersAreTheImportsOwn() throws {
        let sorted = Self.rows.sorted { ($0.user, $0.streak) < ($1.user, $1.streak) }
        let inOrder = try Self.seeded()
        try Self.makeUsual(inOrder)
        let found = try Self.usualUsers(importing: sorted, into: inOrder, expectedRows: nil)
        #expect(found == Self.usualImported, "sorted")
        for looseLimit in [ImportPairs.looseLimit, 0] {
            let store = try Self.seeded()
            try Self.makeUsual(store)
            let found = try store.write(.bulkImport) { w in
                let bulk = try SQLiteCheckinImport(
                    db: (w as! SQLiteAccess).db, storedAt: t0 + 60, expectedRows: nil, looseLimit: looseLimit)
                for c in Self.rows { try bulk.insert(c) }
                _ = try bulk.finish()
                return try bulk.usualUsers()
            }
            #expect(found == Self.usualImported, "looseLimit \(looseLimit)")
        }
    }
}
