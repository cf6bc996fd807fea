import Foundation
import GRDB
import StreakCore
import StreakStore
import StreakTestKit
import Testing

@testable import StreakSQLite

/// A fresh folder for one test's SQLite files.
func scratch() -> String {
    TestFiles.path("store")
}

let t0 = Instant(seconds: 1_795_000_000)

/// A store file as a release stopped by `migration` left it, open on its own queue: the test
/// writes old rows, closes it, then opens it with `SQLiteStore`, which migrates it forward.
func storeFromBefore(_ migration: String) throws -> (path: String, queue: DatabaseQueue) {
    let path = scratch() + "/s.sqlite"
    try FileManager.default.createDirectory(
        atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
    let queue = try DatabaseQueue(path: path)
    try Schema.migrator.migrate(queue, upTo: migration)
    return (path, queue)
}

@Suite(.fastTier) struct SQLiteStoreTests {
    @Test func createsTheFileAndFolderInWALMode() throws {
        let path = scratch() + "/nested/dir/s.sqlite"
        let store = try SQLiteStore(path: path)
        _ = try store.write { w in try w.addUser(User(id: "u1", zone: "Europe/Berlin"), at: t0) }
        #expect(FileManager.default.fileExists(atPath: path))
        let header = try #require(FileManager.default.contents(atPath: path))
        #expect(header[18] == 2 && header[19] == 2, "bytes 18-19 of the header are 2 in WAL mode")
    }

    /// serve's readers begin and end each read themselves (SQLiteReaders): each read is a
    /// snapshot of its own, so a read sees what was committed after the one before, and a read
    /// that fails ends its transaction (a reader left in one would answer its old snapshot
    /// for ever, or fail to begin the next).
    @Test func readersEndEachReadAlsoOneThatFails() throws {
        struct Failed: Error {}
        let store = try SQLiteStore(path: scratch() + "/s.sqlite", readers: 1)
        _ = try store.write { w in try w.addUser(User(id: "u1", zone: "Asia/Tokyo"), at: t0) }
        #expect(try store.read { r in try r.users().map(\.id) } == ["u1"])
        #expect(throws: Failed.self) {
            try store.read { r in
                _ = try r.users()
                throw Failed()
            }
        }
        _ = try store.write { w in try w.addUser(User(id: "u2", zone: "Asia/Tokyo"), at: t0) }
        #expect(try store.read { r in try r.users().map(\.id) } == ["u1", "u2"])
    }

    @Test func reopeningMigratesNothingTwiceAndKeepsData() throws {
        let path = scratch() + "/s.sqlite"
        _ = try SQLiteStore(path: path).write { w in try w.addUser(User(id: "u1", zone: "Asia/Tokyo"), at: t0) }
        let again = try SQLiteStore(path: path)
        #expect(try again.read { r in try r.users() } == [User(id: "u1", zone: "Asia/Tokyo")])
    }

    @Test func usersAreUniqueAndZoneChangesAreKept() throws {
        let store = try SQLiteStore(path: scratch() + "/s.sqlite")
        try store.write { (w: any StoreWriter) throws in
            #expect(try w.addUser(User(id: "u1", zone: "Asia/Tokyo"), at: t0))
            #expect(try !w.addUser(User(id: "u1", zone: "Europe/Paris"), at: t0))
            try w.updateUser(User(id: "u1", zone: "Pacific/Honolulu"), at: t0 + 3600)
            try w.updateUser(User(id: "u1", zone: "Pacific/Honolulu", remindAt: 3600), at: t0 + 7200)
        }
        let history = try store.read { r in try r.zoneHistory(of: "u1") }
        #expect(
            history == [
                StoredZoneChange(since: t0, zone: "Asia/Tokyo"),
                StoredZoneChange(since: t0 + 3600, zone: "Pacific/Honolulu"),
            ])
    }

    @Test func eventIDsMakeReimportANoOp() throws {
        let store = try SQLiteStore(path: scratch() + "/s.sqlite")
        _ = try store.write { w in try w.addUser(User(id: "u1", zone: "UTC"), at: t0) }
        let batch = [
            NewCheckin(user: "u1", streak: "daily", instant: t0, zone: "UTC", eventID: "e1"),
            NewCheckin(user: "u1", streak: "daily", instant: t0, zone: "UTC"),
            NewCheckin(user: "u1", streak: "workout", instant: t0, zone: "UTC", eventID: "e1"),
        ]
        let first = try store.write { w in try w.insertCheckins(batch, storedAt: t0) }
        #expect(first.inserted == 2 && first.duplicates == 1)
        let second = try store.write { w in try w.insertCheckins(batch, storedAt: t0) }
        #expect(second.inserted == 1 && second.duplicates == 2, "check-ins without ids are never merged")
        #expect(try store.read { r in try r.checkins(of: "u1", streak: "daily") }.count == 3)
    }

    /// Migration 12 clusters the check-ins on (user, streak, at, id): every row and id kept (two
    /// in one second included), the event and tag indexes again, the id counter at the largest,
    /// and the next row takes the id after it.
    @Test func clusteringTheCheckinsKeepsEveryRowAndItsID() throws {
        let (path, queue) = try storeFromBefore("11-runs-carry-histories")
        let rows = """
            SELECT printf('%d %s %s %d %s %s %s %d', id, user_id, streak, at, zone, event_id, meta, stored_at)
            FROM checkins ORDER BY id
            """
        let before = try queue.write { db -> [String] in
            try db.execute(
                sql: """
                    INSERT INTO users (id, zone, remind_at, remind, created_at) VALUES ('u1', 'UTC', 0, 1, 0), ('u2', 'UTC', 0, 1, 0);
                    INSERT INTO checkins (id, user_id, streak, at, zone, event_id, meta, stored_at) VALUES
                        (3, 'u2', 'daily', 100, 'UTC', NULL, NULL, 5),
                        (7, 'u1', 'daily', 100, 'UTC', NULL, NULL, 5),
                        (8, 'u1', 'daily', 100, 'UTC', NULL, NULL, 6),
                        (9, 'u1', 'gym', 50, 'Asia/Tokyo', 'e1', '{"kind":"x"}', 6);
                    """)
            return try String.fetchAll(db, sql: rows)
        }
        try queue.close()
        let store = try SQLiteStore(path: path)
        let after = try store.queue.read { db in
            (
                try String.fetchAll(db, sql: rows),
                try String.fetchAll(db, sql: "SELECT name FROM pragma_index_list('checkins') ORDER BY 1"),
                try String.fetchOne(db, sql: "SELECT value FROM meta WHERE key = 'checkin_ids'"),
                try String.fetchAll(db, sql: "PRAGMA integrity_check")
            )
        }
        #expect(after.0 == before && before.count == 4)
        #expect(after.1 == ["checkins_event", "checkins_tagged", "sqlite_autoindex_checkins_1"])
        #expect(after.2 == "9")
        #expect(after.3 == ["ok"])
        let result = try store.write { w in
            try w.insertCheckins(
                [
                    NewCheckin(user: "u1", streak: "gym", instant: t0, zone: "UTC", eventID: "e1"),  // stored already
                    NewCheckin(user: "u1", streak: "daily", instant: Instant(seconds: 100), zone: "UTC"),
                ], storedAt: t0)
        }
        #expect(result.inserted == 1 && result.duplicates == 1)
        let ids = try store.queue.read { db in
            try Int64.fetchAll(
                db, sql: "SELECT id FROM checkins WHERE user_id = 'u1' AND streak = 'daily' ORDER BY at, id")
        }
        #expect(ids == [7, 8, 11], "the row with a stored event id took 10, and was not stored")
        #expect(try store.read { r in try r.checkins(of: "u1", streak: "daily") }.count == 3)
        #expect(try store.write { w in try w.removeUser("u1") })
        #expect(try store.queue.read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM checkins") } == 1)
    }

    @Test func removingAUserDeletesEverything() throws {
        let store = try SQLiteStore(path: scratch() + "/s.sqlite")
        try store.write { (w: any StoreWriter) throws in
            _ = try w.addUser(User(id: "u1", zone: "UTC"), at: t0)
            _ = try w.insertCheckins([NewCheckin(user: "u1", streak: "daily", instant: t0, zone: "UTC")], storedAt: t0)
            try w.addFreezeEvent(FreezeEvent(at: t0, kind: .grant), user: "u1", streak: "daily")
        }
        #expect(try store.write { w in try w.removeUser("u1") })
        try store.read { (r: any StoreReader) throws in
            #expect(try r.checkins(of: "u1", streak: "daily").isEmpty)
            #expect(try r.freezeEvents(of: "u1", streak: "daily").isEmpty)
            #expect(try r.zoneHistory(of: "u1").isEmpty)
            #expect(try r.streaks(of: "u1").isEmpty)
        }
        #expect(try !store.write { w in try w.removeUser("u1") })
    }

    struct Boom: Error {}

    @Test func aFailedWriteLeavesTheStoreUnchanged() throws {
        let store = try SQLiteStore(path: scratch() + "/s.sqlite")
        #expect(throws: Boom.self) {
            try store.write { (w: any StoreWriter) throws in
                _ = try w.addUser(User(id: "u1", zone: "UTC"), at: t0)
                throw Boom()
            }
        }
        #expect(try store.read { r in try r.users() }.isEmpty)
    }

    @Test func settingsEpochsAreRecordedOnlyOnChange() throws {
        let store = try SQLiteStore(path: scratch() + "/s.sqlite")
        try store.write { (w: any StoreWriter) throws in
            try w.recordSettings(SettingsEpoch(since: t0, goal: 1, leewayHours: 0), streak: "daily")
            try w.recordSettings(SettingsEpoch(since: t0 + 10, goal: 1, leewayHours: 0), streak: "daily")
            try w.recordSettings(SettingsEpoch(since: t0 + 20, goal: 2, leewayHours: 0), streak: "daily")
        }
        #expect(try store.read { r in try r.settingsEpochs(of: "daily") }.map(\.since) == [t0, t0 + 20])
    }

    @Test func concurrentWritersOnOneFileLoseNothing() async throws {
        let path = scratch() + "/s.sqlite"
        _ = try SQLiteStore(path: path).write { w in try w.addUser(User(id: "u1", zone: "UTC"), at: t0) }
        try await withThrowingTaskGroup(of: Void.self) { group in
            for writer in 0..<4 {
                group.addTask {
                    let store = try SQLiteStore(path: path)  // its own connection, as another process would have
                    for chunk in 0..<10 {
                        let batch = (0..<50).map { i in
                            // writers 0 and 1 send the same 500 ids, as do 2 and 3
                            NewCheckin(
                                user: "u1", streak: "daily", instant: t0, zone: "UTC",
                                eventID: "e\((writer / 2) * 1000 + chunk * 50 + i)")
                        }
                        _ = try store.write { w in try w.insertCheckins(batch, storedAt: t0) }
                    }
                }
            }
            try await group.waitForAll()
        }
        let count = try SQLiteStore(path: path).read { r in try r.checkins(of: "u1", streak: "daily").count }
        #expect(count == 1000)
    }
}
