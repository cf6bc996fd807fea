import Foundation
import GRDB
import StreakCore
import StreakStore
import StreakTestKit
import Testing

@testable import StreakSQLite

/// Issue 17: how the store opens for reading and for writing, and the kinds of its errors.
@Suite(.fastTier) struct StoreAccessTests {
    func kind(_ body: () throws -> Void) -> StoreError.Kind? {
        do {
            try body()
            return nil
        } catch let error as StoreError {
            return error.kind
        } catch {
            Issue.record("not a StoreError: \(error)")
            return nil
        }
    }

    /// A store with one user, closed.
    func made() throws -> String {
        let path = scratch() + "/s.sqlite"
        _ = try SQLiteStore(path: path).write { w in try w.addUser(User(id: "u1", zone: "UTC"), at: t0) }
        return path
    }

    @Test func aReaderCreatesNothing() throws {
        let folder = scratch()
        let path = folder + "/deeper/s.sqlite"
        #expect(kind { _ = try SQLiteStore(path: path, access: .read) } == .missing)
        #expect(!FileManager.default.fileExists(atPath: folder), "a reader made the store's folders")
    }

    @Test func whatIsNotAFilePathIsRefused() throws {
        let folder = scratch()
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        for access in [StoreAccess.read, .write] {
            #expect(kind { _ = try SQLiteStore(path: "", access: access) } == .invalid)
            #expect(kind { _ = try SQLiteStore(path: "/dev/null", access: access) } == .invalid)
            #expect(kind { _ = try SQLiteStore(path: folder, access: access) } == .invalid)
            #expect(kind { _ = try SQLiteStore(path: "file:\(folder)/u.sqlite", access: access) } == .invalid)
        }
        #expect(!FileManager.default.fileExists(atPath: "/dev/null-journal"))
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder).isEmpty)
    }

    @Test func aReaderSeesWhatWritersCommitted() throws {
        let path = try made()
        let reader = try SQLiteStore(path: path, access: .read)
        #expect(try reader.read { try $0.users().map(\.id) } == ["u1"])
        #expect(kind { try reader.write { w in try w.setMeta("x", "1") } } == .readOnly)
    }

    @Test func aReaderNeverWaitsForAWriter() throws {
        let path = try made()
        var config = Configuration()
        config.allowsUnsafeTransactions = true  // the lock stays held after the call, as another process's
        let holder = try DatabaseQueue(path: path, configuration: config)
        try holder.writeWithoutTransaction { db in
            try db.execute(sql: "BEGIN IMMEDIATE; INSERT INTO meta (key, value) VALUES ('held', '1')")
        }
        defer { try? holder.writeWithoutTransaction { db in try db.execute(sql: "ROLLBACK") } }
        let start = ContinuousClock.now
        #expect(try SQLiteStore(path: path, access: .read).read { try $0.users().count } == 1)
        #expect(ContinuousClock.now - start < .seconds(2))
        // A writer waits, then gives up as busy (75), not unavailable (69).
        #expect(kind { try SQLiteStore(path: path, busyTimeout: 0.3).write { w in try w.setMeta("x", "1") } } == .busy)
    }

    @Test func aStoreFromAnOlderStreakdIsNotMigratedByAReader() throws {
        let (path, queue) = try storeFromBefore("6-runs")
        try queue.close()
        #expect(kind { _ = try SQLiteStore(path: path, access: .read) } == .outdated)
        let check = try SQLiteStore(path: path, access: .read, anyVersion: true)
        #expect(try check.check().ok)
        _ = try SQLiteStore(path: path)  // a writer migrates it
        #expect(kind { _ = try SQLiteStore(path: path, access: .read) } == nil)
    }

    @Test func aStoreFromANewerStreakdIsRefused() throws {
        let path = try made()
        let queue = try DatabaseQueue(path: path)
        try queue.write { db in try db.execute(sql: "INSERT INTO grdb_migrations VALUES ('99-from-the-future')") }
        try queue.close()
        #expect(kind { _ = try SQLiteStore(path: path, access: .read) } == .newer)
        #expect(kind { _ = try SQLiteStore(path: path) } == .newer)
    }

    @Test func damageIsDamagedForReadersAndWriters() throws {
        let path = try made()
        try overwritePages(path, from: 1)
        #expect(kind { _ = try SQLiteStore(path: path, access: .read).read { try $0.users() } } == .damaged)
        #expect(kind { _ = try SQLiteStore(path: path).write { w in try w.setMeta("x", "1") } } == .damaged)
        try overwritePages(path, from: 0)
        #expect(kind { _ = try SQLiteStore(path: path, access: .read) } == .damaged)
    }

    @Test func checkFindsDamageThatReadsMayMiss() throws {
        let path = try made()
        let store = try SQLiteStore(path: path, access: .read)
        let healthy = try store.check()
        #expect(healthy.ok && healthy.checked.hasPrefix("integrity_check and foreign_key_check of "))
        // A row whose user is gone, as a write that skipped reference checks could leave.
        let queue = try DatabaseQueue(path: path)
        try queue.writeWithoutTransaction { db in
            try db.execute(sql: "PRAGMA foreign_keys = OFF")
            try db.execute(sql: "INSERT INTO user_zones (user_id, since, zone) VALUES ('ghost', 0, 'UTC')")
        }
        try queue.close()
        let found = try SQLiteStore(path: path, access: .read).check()
        #expect(found.problems == ["user_zones row 2 refers to a missing row of users"])
    }

    @Test func aBackupIsAConsistentFileOfItsOwn() async throws {
        let path = try made()
        let store = try SQLiteStore(path: path)
        let copy = scratch() + "-backup.sqlite"
        defer { unlink(copy) }
        // Writers go on during the copy; the copy is one instant of theirs.
        let writing = Task.detached {
            let other = try SQLiteStore(path: path)
            for i in 0..<200 { _ = try other.write { w in try w.addUser(User(id: "w\(i)", zone: "UTC"), at: t0) } }
        }
        try SQLiteStore(path: path, access: .read).backup(to: copy)
        try await writing.value
        #expect(!FileManager.default.fileExists(atPath: copy + "-wal"))
        let header = try #require(FileManager.default.contents(atPath: copy))
        #expect(header[18] == 1 && header[19] == 1, "a rollback-journal file, whole without a -wal")
        let restored = try SQLiteStore(path: copy, access: .read)
        #expect(try restored.check().ok)
        let ids = try restored.read { try $0.users().map(\.id) }
        #expect(ids.contains("u1"))
        let numbers = ids.compactMap { $0.hasPrefix("w") ? Int($0.dropFirst()) : nil }.sorted()
        #expect(numbers == Array(0..<numbers.count), "a prefix of the writes, none torn")
        #expect(kind { try store.backup(to: copy) } == .invalid, "an existing file is never overwritten")
        #expect(kind { try store.backup(to: scratch() + "/no/such/folder/b.sqlite") } == .unavailable)
    }
}

/// Writes 0xA5 over every page of a closed store from page `from` (0-based) on.
func overwritePages(_ path: String, from: Int) throws {
    let handle = try #require(FileHandle(forUpdatingAtPath: path))
    defer { try? handle.close() }
    let size = Int(try handle.seekToEnd())
    let page = 4096
    for p in from..<(size / page) {
        try handle.seek(toOffset: UInt64(p * page))
        try handle.write(contentsOf: Data(repeating: 0xA5, count: page))
    }
}
