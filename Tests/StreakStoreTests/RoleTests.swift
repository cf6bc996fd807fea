import Foundation
import StreakCore
import StreakPostgres
import StreakSQLite
import StreakStore
import StreakTestKit
import Testing

typealias Engine = StoreEngine

extension StoreEngine {
    /// The same store opened again, as another process would.
    func again(_ store: any Store) throws -> any Store {
        switch self {
        case .sqlite: try SQLiteStore(path: (store as! SQLiteStore).path)
        case .postgres: try PostgresStore(url: (store as! PostgresStore).url.text)
        }
    }
}

/// The store's roles keep their guarantees on every engine: a SQLite file and a PostgreSQL
/// database (a fresh one per test, on the test kit's cluster).
@Suite(.fastTier) struct RoleTests {
    static func at(_ seconds: Int64) -> Instant { Instant(seconds: t0.seconds + seconds) }

    static func notification(_ user: String, _ date: String) -> StreakCore.Notification {
        StreakCore.Notification(
            kind: .atRisk, user: user, streak: "daily", localDate: LocalDate(date)!, due: t0, timezone: "UTC",
            localDue: "2026-11-18T20:00:00Z", streakLength: 7, message: "m")
    }

    @Test(arguments: Engine.allCases) func usersAreUniqueAndTheirRemovalTakesEverything(engine: Engine) throws {
        let store = try engine.open()
        try store.write { (w: any StoreWriter) throws in
            #expect(try w.addUser(User(id: "u1", zone: "UTC"), at: t0))
            #expect(try !w.addUser(User(id: "u1", zone: "Asia/Tokyo"), at: t0))
            _ = try w.insertCheckins([NewCheckin(user: "u1", streak: "daily", instant: t0, zone: "UTC")], storedAt: t0)
            _ = try w.record(
                NewRecord(Self.notification("u1", "2026-11-21"), state: .sent, sinks: ["journal"]), owner: "r", at: t0)
        }
        try store.write { w in try w.updateUser(User(id: "u1", zone: "Asia/Tokyo", remindAt: 3600), at: Self.at(60)) }
        try store.read { (r: any StoreReader) throws in
            #expect(try r.user("u1") == User(id: "u1", zone: "Asia/Tokyo", remindAt: 3600))
            #expect(try r.zoneHistory(of: "u1").map(\.zone) == ["UTC", "Asia/Tokyo"])
            #expect(try r.users().map(\.id) == ["u1"])
        }
        #expect(try store.write { w in try w.removeUser("u1") })
        #expect(try !store.write { w in try w.removeUser("u1") })
        try store.read { (r: any StoreReader) throws in
            #expect(try r.user("u1") == nil)
            #expect(try r.checkins(of: "u1", streak: "daily").isEmpty)
            #expect(try r.dueStreaks(through: nil).isEmpty)
            #expect(try r.pendingDeliveries().isEmpty)
        }
    }

    @Test(arguments: Engine.allCases) func anEventIDIsStoredOnceAndEveryWriteMovesTheVersionOn(engine: Engine) throws {
        let store = try engine.open()
        let result = try store.write { w -> InsertResult in
            _ = try w.addUser(User(id: "u1", zone: "UTC"), at: t0)
            let c = NewCheckin(user: "u1", streak: "daily", instant: t0, zone: "UTC", eventID: "e1", meta: #"{"k":1}"#)
            let other = NewCheckin(user: "u1", streak: "daily", instant: Self.at(60), zone: "UTC")
            return try w.insertCheckins([c, c, other], storedAt: t0)
        }
        #expect(result.inserted == 2 && result.duplicates == 1)
        let v1 = try store.read { try $0.dueStreaks(through: t0) }.map(\.version)
        try store.write { w in try w.addFreezeEvent(FreezeEvent(at: t0, kind: .grant), user: "u1", streak: "daily") }
        let v2 = try store.read { try $0.dueStreaks(through: t0) }.map(\.version)
        #expect(v1.count == 1 && v2.count == 1 && v2[0] > v1[0])
        try store.read { (r: any StoreReader) throws in
            #expect(try r.streaks(of: "u1") == ["daily"])
            #expect(try r.checkins(of: "u1", streak: "daily").map(\.eventID) == ["e1", nil])
            #expect(try r.freezeEvents(of: "u1", streak: "daily") == [FreezeEvent(at: t0, kind: .grant)])
        }
    }

    /// A claim takes a listed streak at its listed version, plans it once, and no second time.
    @Test(arguments: Engine.allCases) func aClaimTakesAListedStreakOnce(engine: Engine) throws {
        let store = try engine.open()
        try store.write { (w: any StoreWriter) throws in
            for u in ["u1", "u2"] {
                _ = try w.addUser(User(id: u, zone: "UTC"), at: t0)
                _ = try w.insertCheckins([NewCheckin(user: u, streak: "daily", instant: t0, zone: "UTC")], storedAt: t0)
            }
        }
        let due = try store.read { try $0.dueStreaks(through: t0) }
        #expect(due.map(\.user) == ["u1", "u2"] && due.allSatisfy(\.marked))
        // u2 changes after the list, in another process: its listed version is not claimed (the
        // newer one is due).
        try engine.again(store).write { w in
            try w.addFreezeEvent(FreezeEvent(at: t0, kind: .grant), user: "u2", streak: "daily")
        }
        let histories = try store.read { try $0.dueHistories(of: due.streaks) }
        #expect(histories.map { $0?.stored.checkins.count } == [1, 1])
        let claimed = try store.write { w -> [DueStreak?] in
            let claimed = try w.claim(due.streaks, listed: due.mark, now: t0)
            try w.schedule(
                claimed.compactMap { $0 }.map { PlannedRun(streak: $0, next: Self.at(3600), history: histories[0]) },
                handledThrough: t0)
            return claimed
        }
        #expect(claimed.map { $0?.user } == ["u1", nil])
        // Handled: not due again before its next run, and the same list claims nothing.
        #expect(try store.read { try $0.dueStreaks(through: t0) }.map(\.user) == ["u2"])
        #expect(try store.write { w in try w.claim(due.streaks, listed: nil, now: t0) }.map { $0?.user } == [nil, nil])
        #expect(try store.read { try $0.dueStreaks(through: Self.at(3600)) }.map(\.user) == ["u1", "u2"])
        // The history kept for it stands for the tables until it changes.
        let again = try store.read { r in try r.dueHistories(of: r.dueStreaks(through: Self.at(3600)).streaks) }
        #expect(again.map { $0?.fromCopy } == [true, false])
        #expect(again[0]?.stored == histories[0]?.stored)
    }

    /// The queue of planned runs reads in its order (instant, then row), a batch at a time, each
    /// streak once, with the user's settings and history its run carries; a streak changed since
    /// is left out there (its run dropped) and listed among the unplanned ones. The ledger hands
    /// out its keys by date.
    @Test(arguments: Engine.allCases) func theQueueReadsInRunOrderAndChangedStreaksApart(engine: Engine) throws {
        let store = try engine.open()
        let users = (0..<7).map { "u\($0)" }
        try store.write { (w: any StoreWriter) throws in
            for u in users {
                _ = try w.addUser(User(id: u, zone: "Asia/Tokyo", remindAt: 3600 * 19), at: t0)
                _ = try w.insertCheckins([NewCheckin(user: u, streak: "daily", instant: t0, zone: "UTC")], storedAt: t0)
            }
        }
        func unplanned(every: Bool = false) throws -> [DueStreak] {
            try store.read { r in
                var all: [DueStreak] = []
                try r.eachUnplannedStreak(every: every) { all += $0 }
                return all
            }
        }
        let due = try unplanned()
        #expect(due.map(\.user) == users && due.allSatisfy(\.marked))
        let histories = try store.read { try $0.dueHistories(of: due) }
        // Runs at three instants, out of user order; u6 has none.
        let next = [3, 1, 2, 1, 3, 1].map { Self.at(Int64($0) * 3600) }
        try store.write { (w: any StoreWriter) throws in
            let claimed = try w.claim(due, listed: nil, now: t0)
            try w.schedule(
                claimed.indices.map { i in
                    PlannedRun(streak: claimed[i]!, next: i < next.count ? next[i] : nil, history: histories[i])
                }, handledThrough: t0)
        }
        #expect(try unplanned().isEmpty)
        #expect(try unplanned(every: true).count == 7)
        // u4 changes: its run goes, and it is unplanned again.
        try store.write { w in try w.addFreezeEvent(FreezeEvent(at: t0, kind: .grant), user: "u4", streak: "daily") }
        var batches: [PlannedRuns] = []
        try store.read { (r: any StoreReader) throws in try r.eachPlannedRun(through: Self.at(3 * 3600)) { batches.append($0) } }
        #expect(try unplanned().map(\.user) == ["u4"])
        let read = batches.flatMap { b in b.runs.indices.map { (batch: b, i: $0) } }
        #expect(read.map { $0.batch.dueStreak($0.i).user } == ["u1", "u3", "u5", "u2", "u0"])
        let positions = read.map { $0.batch.runs[$0.i].position }
        #expect(zip(positions, positions.dropFirst()).allSatisfy { $0 < $1 })
        #expect(positions.map(\.at) == [1, 1, 1, 2, 3].map { Self.at(Int64($0) * 3600) })
        // Each carries what its run read, as the tables have it; the handled instant too.
        for (batch, i) in read {
            let d = batch.dueStreak(i)
            #expect(d.version >= 1 && d.handledThrough == t0 && d.streak == "daily")
            let looked = try #require(try store.read { try $0.dueHistories(of: [d])[0] })
            #expect(looked.user == User(id: d.user, zone: "Asia/Tokyo", remindAt: 3600 * 19))
            let run = batch.runs[i]
            #expect(run.remind && run.remindAt == 3600 * 19 && batch.language(i) == nil)
            let packed = try #require(batch.history(i))
            let history = packed.withUnsafeBufferPointer { PackedHistory.unpack($0, user: d.user, streak: d.streak) }
            #expect(history == looked.stored)
            #expect(history?.checkins.count == 1)
        }
        #expect(try store.read { r in
            var n = 0
            try r.eachPlannedRun(through: Self.at(3599)) { n += $0.count }
            return n
        } == 0)
        // The ledger's keys about some dates.
        try store.write { (w: any StoreWriter) throws in
            for (u, date) in [("u1", "2026-11-20"), ("u2", "2026-11-21"), ("u3", "2026-11-23")] {
                _ = try w.record(NewRecord(Self.notification(u, date), state: .sent, sinks: []), owner: nil, at: t0)
            }
        }
        var keys: [String] = []
        try store.read { r in
            try r.eachLedgerKey(dates: LocalDate("2026-11-20")!...LocalDate("2026-11-21")!) { kind, user, streak, date in
                keys.append("\(kind)/\(user)/\(streak)/\(date)")
            }
        }
        #expect(keys.sorted() == ["at_risk/u1/daily/2026-11-20", "at_risk/u2/daily/2026-11-21"])
    }

    /// The ledger's key decides: one record per key; a delivery is taken over only from a run
    /// that is gone (known so, or its lease out on the store's clock).
    /// A writer that changes a streak may plan its run at once (`planChanged`): the streak is then
    /// in the queue, carrying its history, not among the unplanned, and still due to the next run
    /// (marked). A later change that plans nothing makes it unplanned again, its run gone.
    @Test(arguments: Engine.allCases) func aStreakPlannedByItsWriterIsInTheQueueAndStillDue(engine: Engine) throws {
        let store = try engine.open()
        let user = User(id: "u1", zone: "Asia/Tokyo", remindAt: 3600 * 19)
        func unplanned() throws -> [String] {
            try store.read { r in
                var all: [String] = []
                try r.eachUnplannedStreak(every: false) { all += $0.map(\.streak) }
                return all
            }
        }
        func queue() throws -> [(String, Instant, Bool)] {
            try store.read { r in
                var all: [(String, Instant, Bool)] = []
                try r.eachPlannedRun(through: Self.at(86400)) { b in
                    all += b.runs.indices.map { (b.dueStreak($0).streak, b.runs[$0].position.at, b.history($0) != nil) }
                }
                return all
            }
        }
        try store.write { (w: any StoreWriter) throws in
            _ = try w.addUser(user, at: t0)
            for streak in ["daily", "reading"] {
                _ = try w.insertCheckins(
                    [NewCheckin(user: "u1", streak: streak, instant: t0, zone: "Asia/Tokyo")], storedAt: t0)
            }
            let stored = try w.storedStreak(of: user, streak: "daily")
            try w.planChanged([
                PlannedRun(
                    streak: DueStreak(user: "u1", streak: "daily"), next: Self.at(3600),
                    history: DueHistory(user: user, stored: stored, fromCopy: false), user: user)
            ])
        }
        #expect(try unplanned() == ["reading"])
        let planned = try queue()
        #expect(planned.count == 1 && planned[0].0 == "daily" && planned[0].1 == Self.at(3600) && planned[0].2)
        let due = try store.read { try $0.dueStreaks(through: t0) }
        #expect(due.map(\.streak) == ["daily", "reading"] && due.allSatisfy(\.marked))
        try store.write { w in try w.addFreezeEvent(FreezeEvent(at: t0, kind: .grant), user: "u1", streak: "daily") }
        #expect(try unplanned() == ["daily", "reading"])
        #expect(try queue().isEmpty)
    }

    @Test(arguments: Engine.allCases) func theLedgerKeyDecidesAndLeasesGuardTakeOvers(engine: Engine) throws {
        let store = try engine.open()
        let n = Self.notification("u1", "2026-11-21")
        let id = try store.write { w -> Int64? in
            _ = try w.addUser(User(id: "u1", zone: "UTC"), at: t0)
            try w.register(run: "run1", host: "h1", lease: 3600)
            return try w.record(NewRecord(n, state: .sent, sinks: ["journal", "hook:a"]), owner: "run1", at: t0)
        }
        let recorded = try #require(id)
        #expect(
            try store.write { w in try w.record(NewRecord(n, state: .sent, sinks: ["journal"]), owner: nil, at: t0) }
                == nil)
        // Pending, both held by their run: none waits for a retry (issue 31, 11: counted all the same).
        #expect(try store.read { try ($0.heldDeliveries(), $0.waitingDeliveries()) } == (2, 0))
        try store.write { (w: any StoreWriter) throws in
            #expect(try !w.takeOver(id: recorded, sink: "journal", from: "run1", fromGone: false, to: "run2"), "alive")
            #expect(try !w.takeOver(id: recorded, sink: "journal", from: nil, fromGone: false, to: "run2"), "owned")
            #expect(try w.heartbeat(run: "run1"))
            try w.unregister(run: "run1")
            #expect(try !w.heartbeat(run: "run1"), "fenced: its registration is gone")
            #expect(try w.takeOver(id: recorded, sink: "journal", from: "run1", fromGone: false, to: "run2"))
            #expect(try w.takeOver(id: recorded, sink: "hook:a", from: "run1", fromGone: true, to: "run3"))
            try w.finish(id: recorded, sink: "journal", state: .delivered, attempts: 1, at: t0, error: nil)
            try w.release(owner: "run3")
        }
        try store.read { (r: any StoreReader) throws in
            #expect(try r.deliveryStates(key: n.key) == ["journal": .delivered, "hook:a": .pending])
            #expect(try r.waitingDeliveries() == 1 && r.heldDeliveries() == 0)
            #expect(try r.pendingDeliveries().map(\.notification) == [n])
            #expect(try r.ledgerStates(keys: [n.key, "at_risk/u1/daily/2026-11-22"]) == [n.key: .sent])
        }
    }

    /// An achievement (SPEC §9) is kept once ever, whatever date it is recorded on, and read back
    /// with its badge or level; a user's streaks and tagged check-ins are read for many at once.
    @Test(arguments: Engine.allCases) func achievementsAreKeptOnceEverAndTheirFactsRead(engine: Engine) throws {
        let store = try engine.open()
        func badge(_ date: String) -> StreakCore.Notification {
            StreakCore.Notification(
                kind: .badgeUnlocked, user: "u1", streak: "", localDate: LocalDate(date)!, due: t0, timezone: "UTC",
                localDue: "\(date)T20:00:00Z", streakLength: 7, message: "m", title: "t", badge: "streak_7")
        }
        let level = StreakCore.Notification(
            kind: .levelUp, user: "u1", streak: "", localDate: LocalDate("2026-11-18")!, due: t0, timezone: "UTC",
            localDue: "2026-11-18T20:00:00Z", streakLength: 3, message: "m", level: 3)
        let ids = try store.write { w -> [Int64?] in
            _ = try w.addUser(User(id: "u1", zone: "UTC"), at: t0)
            _ = try w.addUser(User(id: "u2", zone: "UTC"), at: t0)
            _ = try w.insertCheckins(
                [
                    NewCheckin(user: "u1", streak: "walk", instant: t0, zone: "UTC", meta: #"{"kind":"social"}"#),
                    NewCheckin(user: "u1", streak: "daily", instant: Self.at(60), zone: "UTC"),
                    NewCheckin(user: "u1", streak: "daily", instant: Self.at(120), zone: "UTC", meta: #"{"n":1}"#),
                ], storedAt: t0)
            return try w.record(
                [
                    NewRecord(badge("2026-11-18"), state: .sent, sinks: ["journal"]),
                    NewRecord(level, state: .expired, sinks: []),
                ],
                owner: "r", at: t0)
        }
        #expect(ids.allSatisfy { $0 != nil })
        let again = try store.write { w in
            try w.record([NewRecord(badge("2026-12-01"), state: .sent, sinks: ["journal"])], owner: "r", at: t0)
        }
        #expect(again == [nil])
        try store.read { (r: any StoreReader) throws in
            #expect(
                try r.ledgerStates(keys: ["badge_unlocked/u1/streak_7", "level_up/u1/3", "level_up/u1/2"])
                    == ["badge_unlocked/u1/streak_7": .sent, "level_up/u1/3": .expired])
            let pending = try r.pendingDeliveries()
            #expect(pending.map(\.notification) == [badge("2026-11-18")])
            let facts = try r.achievementFacts(of: ["u2", "u1", "nobody"])
            #expect(facts.map { $0.streaks.map(\.streak) } == [[], ["daily", "walk"], []])
            #expect(facts[1].streaks.allSatisfy { $0.user == "u1" && $0.row != nil })
            #expect(
                facts[1].tagged == [
                    TaggedCheckin(streak: "daily", instant: Self.at(120), meta: #"{"n":1}"#),
                    TaggedCheckin(streak: "walk", instant: t0, meta: #"{"kind":"social"}"#),
                ])
            // The streaks as listed read their histories.
            #expect(try r.dueHistories(of: facts[1].streaks).map { $0?.stored.checkins.count } == [2, 1])
        }
    }

    @Test(arguments: Engine.allCases) func importsAreCountedAndLeaveOutStoredEventIDs(engine: Engine) throws {
        let store = try engine.open()
        try store.write { w in _ = try w.addUser(User(id: "u1", zone: "UTC"), at: t0) }
        let (users, checkins) = try store.write(.bulkImport) { w -> ((added: Int, updated: Int), InsertResult) in
            let people = try w.userImport(at: Self.at(60))
            try people.put(User(id: "u1", zone: "Asia/Tokyo"))
            try people.put(User(id: "u2", zone: "UTC"))
            let users = try people.finish()
            let rows = try w.checkinImport(storedAt: t0, expectedRows: 3)
            for (user, id) in [("u1", "e1"), ("u1", "e1"), ("u2", "e9")] {
                try rows.insert(NewCheckin(user: user, streak: "daily", instant: t0, zone: "UTC", eventID: id))
            }
            return (users, try rows.finish())
        }
        #expect(users == (added: 1, updated: 1) || (users.added == 1 && users.updated == 1))
        #expect(checkins.inserted == 2 && checkins.duplicates == 1)
        try store.read { (r: any StoreReader) throws in
            #expect(try r.zoneHistory(of: "u1").map(\.zone) == ["UTC", "Asia/Tokyo"])
            #expect(try r.dueStreaks(through: t0).map(\.user) == ["u1", "u2"])
            var seen: [String] = []
            try r.userZones { batch in batch.forEach { id, _ in seen.append(String(decoding: id, as: UTF8.self)) } }
            #expect(seen.sorted() == ["u1", "u2"])
        }
    }
}
