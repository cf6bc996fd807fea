import Foundation
import GRDB
import StreakCore
import StreakStore
import StreakTestKit
import Testing

@testable import StreakSQLite

/// The queue of runs (migration 6): a streak's planned run lives in `runs`, valid while the
/// streak's version is the run's; its schedule row only marks changes.
@Suite(.fastTier) struct RunsTests {
    static func at(_ seconds: Int64) -> Instant { Instant(seconds: t0.seconds + seconds) }

    /// A store with users u1 and u2 and one streak each, handled once (u1 planned at +100).
    static func store() throws -> SQLiteStore {
        let store = try SQLiteStore(path: scratch() + "/s.sqlite")
        try store.write { w in
            for u in ["u1", "u2"] {
                _ = try w.addUser(User(id: u, zone: "UTC"), at: t0)
                _ = try w.insertCheckins(
                    [NewCheckin(user: u, streak: "daily", instant: t0, zone: "UTC")], storedAt: t0)
            }
        }
        let due = try store.read { r in try r.dueStreaks(through: t0) }
        try store.write { w in
            for d in due {
                try w.schedule(d, nextAt: d.user == "u1" ? at(100) : nil, handledThrough: t0, read: nil)
            }
        }
        return store
    }

    static func runs(_ store: SQLiteStore) throws -> [[Int64?]] {
        try store.queue.read { db in
            try Row.fetchAll(
                db,
                sql: """
                    SELECT r.next_at, s.user_id = 'u1', r.version, r.handled_through FROM runs r
                    JOIN schedule s ON s.id = r.row ORDER BY r.next_at
                    """
            ).map { row in [row[0], row[1], row[2], row[3]] }
        }
    }

    @Test func aPlannedRunIsDueFromTheQueueAndLeavesTheScheduleRowAlone() throws {
        let store = try Self.store()
        let t = t0.seconds
        #expect(try Self.runs(store) == [[t + 100, 1, 1, t]])
        #expect(try store.read { r in try r.dueStreaks(through: Self.at(99)) }.isEmpty)
        let due = try store.read { r in try r.dueStreaks(through: Self.at(100)) }
        #expect(due.map(\.user) == ["u1"] && due.map(\.handledThrough) == [t0] && due.map(\.version) == [1])
        let before = try store.queue.read { db in try Row.fetchAll(db, sql: "SELECT * FROM schedule ORDER BY id") }
        #expect(
            try store.write { w in try w.schedule(due[0], nextAt: Self.at(200), handledThrough: Self.at(100), read: nil)
            })
        #expect(try Self.runs(store) == [[t + 200, 1, 1, t + 100]])
        #expect(
            try store.queue.read { db in try Row.fetchAll(db, sql: "SELECT * FROM schedule ORDER BY id") } == before)
        // Every streak (a dry run after a change of settings) reads since when each was handled.
        let all = try store.read { r in try r.dueStreaks(through: nil) }
        #expect(all.map(\.user) == ["u1", "u2"] && all.map(\.handledThrough) == [Self.at(100), t0])
    }

    @Test func aChangeMakesTheStreakDueAtOnceSinceItsLastRun() throws {
        let store = try Self.store()
        try store.write { w in
            try w.addFreezeEvent(FreezeEvent(at: Self.at(10), kind: .grant), user: "u1", streak: "daily")
        }
        let due = try store.read { r in try r.dueStreaks(through: Self.at(20)) }
        #expect(due.map(\.user) == ["u1"] && due.map(\.handledThrough) == [t0] && due.map(\.version) == [2])
        // Its old run is stale: not due from the queue, and replaced when the change is handled.
        #expect(try store.read { r in try r.dueStreaks(through: Self.at(100)) }.map(\.version) == [2])
        #expect(
            try store.write { w in try w.schedule(due[0], nextAt: Self.at(300), handledThrough: Self.at(20), read: nil)
            })
        #expect(try Self.runs(store) == [[t0.seconds + 300, 1, 2, t0.seconds + 20]])
        #expect(try store.read { r in try r.dueStreaks(through: Self.at(299)) }.isEmpty)
    }

    /// Nobody else having written since the list was read, recording takes each row as listed:
    /// a marked streak's mark goes, an unmarked one's row is left alone, and the runs are as
    /// with the lookup.
    @Test func anUnchangedListIsRecordedWithoutLookingTheRowsUpAgain() throws {
        let store = try Self.store()
        try store.write { w in
            try w.addFreezeEvent(FreezeEvent(at: Self.at(10), kind: .grant), user: "u2", streak: "daily")
        }
        let due = try store.read { r in try r.dueStreaks(through: Self.at(100)) }
        #expect(due.map(\.user) == ["u1", "u2"] && due.map(\.marked) == [false, true])
        let before = try store.queue.read { db in try Row.fetchOne(db, sql: "SELECT * FROM schedule WHERE id = 1") }
        // Rows as listed: the claim looks nothing up (a row changed meanwhile would not be seen).
        try store.queue.writeWithoutTransaction { db in
            try db.execute(sql: "UPDATE schedule SET version = 99 WHERE id = 1")
            try db.execute(sql: "UPDATE schedule SET version = 1 WHERE id = 1")
        }
        let planned = try store.write { w in
            let claimed = try w.claim(due.streaks, listed: due.mark, now: Self.at(100))
            try w.schedule(
                claimed.compactMap { $0 }.map { PlannedRun(streak: $0, next: Self.at(200), history: nil) },
                handledThrough: Self.at(100))
            return claimed.map { $0 != nil }
        }
        #expect(due.mark != nil && planned == [true, true])
        let t = t0.seconds
        #expect(try Self.runs(store) == [[t + 200, 1, 1, t + 100], [t + 200, 0, 2, t + 100]])
        #expect(
            try store.queue.read { db in try Row.fetchOne(db, sql: "SELECT * FROM schedule WHERE id = 1") } == before)
        #expect(try store.read { r in try r.dueStreaks(through: Self.at(199)) }.isEmpty)
    }

    /// The mark moves on with a write from another connection, not with this one's own.
    @Test func theDataVersionMovesOnWithAnotherConnectionsCommit() throws {
        let store = try Self.store()
        let mark = try store.access { try $0.dataVersion() }
        try store.write { w in try w.setMeta("x", "1") }
        #expect(try store.access { try $0.dataVersion() } == mark)
        try SQLiteStore(path: store.path).write { w in try w.setMeta("x", "2") }
        #expect(try store.access { try $0.dataVersion() } != mark)
        let moved = try store.access { try $0.dataVersion() }
        try SQLiteStore(path: store.path).write { w in try w.setMeta("x", "3") }
        #expect(try store.access { try $0.dataVersion() } != moved)
    }

    @Test func aRunThatReadAnOlderVersionLeavesTheStreakDue() throws {
        let store = try Self.store()
        let due = try store.read { r in try r.dueStreaks(through: Self.at(100)) }
        try store.write { w in
            try w.addFreezeEvent(FreezeEvent(at: Self.at(50), kind: .grant), user: "u1", streak: "daily")
        }
        #expect(
            try !store.write { w in
                try w.schedule(due[0], nextAt: Self.at(200), handledThrough: Self.at(100), read: nil)
            })
        #expect(try store.read { r in try r.dueStreaks(through: Self.at(100)) }.map(\.version) == [2])
    }

    @Test func removingAUserRemovesTheirRuns() throws {
        let store = try Self.store()
        #expect(try store.write { w in try w.removeUser("u1") })
        #expect(try Self.runs(store).isEmpty)
    }

    @Test func aStoreFromBeforeMovesItsPlannedRunsToTheQueue() throws {
        let (path, queue) = try storeFromBefore("5-ledger-by-date")
        try queue.write { db in
            for u in ["u1", "u2", "u3"] {
                try db.execute(
                    sql: "INSERT INTO users (id, zone, remind_at, remind, created_at) VALUES (?, 'UTC', 72000, 1, 0)",
                    arguments: [u])
            }
            // Planned, changed, nothing planned; rowids with a gap.
            try db.execute(
                sql: """
                    INSERT INTO schedule (rowid, user_id, streak, next_at, handled_through, version, history,
                        history_version)
                    VALUES (7, 'u1', 'daily', 5000, 4000, 3, x'01', 3), (9, 'u2', 'daily', 0, 4000, 2, NULL, NULL),
                        (12, 'u3', 'daily', NULL, 4000, 1, NULL, NULL)
                    """)
        }
        try queue.close()
        let store = try SQLiteStore(path: path)
        let rows = try store.queue.read { db in
            try Row.fetchAll(db, sql: "SELECT id, user_id, next_at, history FROM schedule ORDER BY id")
        }
        #expect(rows.map { $0[0] as Int64 } == [7, 9, 12])
        #expect(rows.map { $0[2] as Int64? } == [nil, 0, nil])
        #expect(rows[0][3] as Data? == Data([1]))
        let runs = try store.queue.read { db in
            try Row.fetchAll(db, sql: "SELECT next_at, row, version, handled_through, user_id, streak FROM runs")
        }
        #expect(runs.map { [$0[0], $0[1], $0[2], $0[3]] as [Int64] } == [[5000, 7, 3, 4000]])
        #expect(runs.map { [$0[4], $0[5]] as [String] } == [["u1", "daily"]])
        let due = try store.read { r in try r.dueStreaks(through: Instant(seconds: 5000)) }
        #expect(due.map(\.user) == ["u1", "u2"] && due.map(\.row) == [7, 9])
    }

    @Test func outcomesAreWrittenForARangeOfLedgerIDs() throws {
        let store = try SQLiteStore(path: scratch() + "/s.sqlite")
        let ids = try store.write { w -> [Int64] in
            _ = try w.addUser(User(id: "u1", zone: "UTC"), at: t0)
            return try (19...22).map { day in
                let e = LedgerTests.entry(.atRisk, "u1", LocalDate("2026-11-\(day)")!)
                return try w.record(e, state: .sent, sinks: ["journal", "hook"], owner: "run1", at: t0)!
            }
        }
        try store.write { w in
            try w.finish(ids: ids[0]...ids[2], sink: "journal", state: .delivered, attempts: 1, at: t0, error: nil)
        }
        let states = try (19...22).map { day in
            try store.read { r in try r.deliveryStates(key: "at_risk/u1/daily/2026-11-\(day)") }
        }
        #expect(states.map { $0["journal"] } == [.delivered, .delivered, .delivered, .pending])
        #expect(states.allSatisfy { $0["hook"] == .pending })
    }
}
