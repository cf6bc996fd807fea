import Foundation
import Synchronization
import StreakCore
import StreakPostgres
import StreakStore
import StreakTestKit
import Testing

/// The PostgreSQL store's direct check-in import (`expectedRows` past the threshold into a store
/// with no check-in: lists packed here and COPYed straight into `checkin_lists` with its key and
/// the foreign keys set aside) stores what the staged import stores, keeps event ids once, and
/// leaves everything as it was when it rolls back.
@Suite(.fastTier, .requires(.postgres))
struct PGBulkImportTests {
    typealias Rows = BulkImportTests

    /// A store with the seed's users, check-ins and schedule (`BulkImportTests.seeded`).
    static func seeded() throws -> PostgresStore {
        try Rows.seed(PostgresStore(url: try TestPostgres.freshDatabase()))
    }

    static func psql(_ store: PostgresStore, _ sql: String) throws -> [String] {
        try TestPostgres.psql(store.url.text, sql).split(separator: "\n").map(String.init)
    }

    /// Every row an import writes, as text, and what the schema says of the tables it writes.
    static func contents(_ store: PostgresStore) throws -> [String] {
        try psql(
            store,
            """
            SELECT concat_ws(' ', user_id, streak, at, zone, event_id, meta, stored_at) FROM checkins
            ORDER BY user_id, streak, at, event_id, meta
            """)
            + psql(store, "SELECT user_id || ' ' || event_id FROM checkin_events ORDER BY 1")
            + psql(
                store,
                "SELECT concat_ws(' ', user_id, streak, next_at, version, changed) FROM schedule ORDER BY user_id, streak"
            )
            + schema(store)
    }

    /// The indexes and constraints of the tables an import writes.
    static func schema(_ store: PostgresStore) throws -> [String] {
        try psql(
            store,
            """
            SELECT indexdef FROM pg_indexes WHERE tablename IN ('checkin_lists', 'checkin_events', 'schedule')
            UNION ALL
            SELECT conname || ' ' || pg_get_constraintdef(oid) || ' ' || convalidated FROM pg_constraint
            WHERE conrelid IN ('checkin_lists'::regclass, 'checkin_events'::regclass, 'schedule'::regclass)
            ORDER BY 1
            """)
    }

    /// Into a store with check-ins, a large import is staged too.
    @Test func theLargeImportStoresWhatTheStagedOneStores() throws {
        let staged = try Self.seeded()
        let large = try Self.seeded()
        let before = try Self.schema(large)
        let a = try Rows.importRows(into: staged, expectedRows: 0)
        let b = try Rows.importRows(into: large, expectedRows: 10_000_000)
        #expect(a == b)
        #expect(a.inserted == Rows.stored.count && a.duplicates == Rows.rows.count - Rows.stored.count, "\(a)")
        #expect(a.duplicates > 100)
        let after = try Self.contents(large)
        #expect(after == (try Self.contents(staged)))
        #expect(try Self.schema(large) == before)
        #expect(before.contains { $0.hasPrefix("CREATE UNIQUE INDEX checkin_lists_pkey ON public.checkin_lists") })
        #expect(before.contains { $0.hasPrefix("checkin_lists_user_id_fkey FOREIGN KEY (user_id) REFERENCES users(id)") })
    }

    /// The first import into a store: the lists and the schedule have no row yet, so the direct
    /// path truncates them and COPYs the lists in frozen; a row with an event id, or one out of
    /// (user, streak) order, sends the rest the staged way.
    @Test func theLargeImportIntoAnEmptyStoreStoresWhatTheStagedOneStores() throws {
        func empty() throws -> PostgresStore {
            let store = try PostgresStore(url: try TestPostgres.freshDatabase())
            try store.write { (w: any StoreWriter) throws in
                for u in Rows.users { _ = try w.addUser(User(id: u, zone: "UTC"), at: t0) }
            }
            return store
        }
        let staged = try empty()
        let large = try empty()
        let before = try Self.schema(large)
        let a = try Rows.importRows(into: staged, expectedRows: 0)
        let b = try Rows.importRows(into: large, expectedRows: 10_000_000)
        #expect(a == b && a.duplicates > 100, "\(a) \(b)")
        #expect(try Self.contents(large) == (try Self.contents(staged)))
        #expect(try Self.schema(large) == before, "every index and foreign key is back, validated")
        let again = try Rows.importRows(into: large, expectedRows: 10_000_000)
        #expect(again.inserted == Rows.rows.count { $0.eventID == nil }, "only the rows without an event id again")
        // Rows in (user, streak) byte order, as an import sends them, and no event id: the
        // schedule's rows come from the client (`SchedulePairs`), not read back.
        let sorted = Rows.rows.filter { $0.eventID == nil }.sorted {
            ($0.user.utf8.lexicographicallyPrecedes($1.user.utf8))
                || ($0.user == $1.user && $0.streak.utf8.lexicographicallyPrecedes($1.streak.utf8))
        }
        let sent = try empty()
        let read = try empty()
        _ = try Rows.importRows(sorted, into: sent, expectedRows: 10_000_000)
        _ = try Rows.importRows(sorted, into: read, expectedRows: 0)
        #expect(try Self.contents(sent) == (try Self.contents(read)))
        #expect(
            try Self.psql(sent, "SELECT string_agg(user_id || ' ' || streak, ',' ORDER BY id) FROM schedule")
                == (try Self.psql(read, "SELECT string_agg(user_id || ' ' || streak, ',' ORDER BY id) FROM schedule")),
            "the schedule's ids in the same order")
        for table in ["checkin_lists", "schedule"] {
            #expect(
                try Self.psql(sent, "SELECT relallvisible = relpages AND relpages > 0 FROM pg_class WHERE relname = '\(table)'")
                    == ["t"], "\(table): its rows COPYed in, frozen, all-visible")
        }
        #expect(try Self.psql(sent, "SELECT reltuples > 0 FROM pg_class WHERE relname = 'checkin_lists'") == ["t"], "analysed")
    }

    /// Sorted rows go straight in as lists until one the direct path cannot take: a row with
    /// an event id, or one out of (user, streak) order, late in the import. From there on the
    /// rows are staged, and merged into the lists sent before. Either way the same check-ins,
    /// event ids, schedule and schema as the staged path.
    @Test func aRowTheDirectPathCannotTakeSendsTheRestTheStagedWay() throws {
        let sorted = Rows.rows.filter { $0.eventID == nil }.sorted {
            ($0.user.utf8.lexicographicallyPrecedes($1.user.utf8))
                || ($0.user == $1.user && $0.streak.utf8.lexicographicallyPrecedes($1.streak.utf8))
        }
        let late = sorted.count * 2 / 3
        let withID = Rows.rows.first { $0.eventID != nil }!
        for rows in [
            Array(sorted[..<late]) + [withID] + sorted[late...],
            Array(sorted[..<late]) + [sorted[0]] + sorted[late...],
            sorted + [withID, withID],
        ] {
            let staged = try PGBulkImportTests.withUsers()
            let large = try PGBulkImportTests.withUsers()
            let before = try Self.schema(large)
            let a = try Rows.importRows(rows, into: staged, expectedRows: 0)
            let b = try Rows.importRows(rows, into: large, expectedRows: 10_000_000)
            #expect(a == b, "\(a) \(b)")
            #expect(try Self.contents(large) == (try Self.contents(staged)))
            #expect(try Self.schema(large) == before)
        }
    }

    /// The usual users of an import: the merge notes them (staged, into a store with check-ins
    /// of those users and others), or after the direct path each usual user with a list.
    @Test func theUsualUsersAreTheImportsOwn() throws {
        for (store, expectedRows) in [(try Self.seeded(), 0), (try Self.withUsers(), 10_000_000)] {
            try Rows.makeUsual(store)
            let found = try Rows.usualUsers(importing: Rows.rows, into: store, expectedRows: expectedRows)
            #expect(found == Rows.usualImported, "expectedRows \(expectedRows)")
        }
    }

    /// A store with the seed's users and nothing else.
    static func withUsers() throws -> PostgresStore {
        let store = try PostgresStore(url: try TestPostgres.freshDatabase())
        try store.write { (w: any StoreWriter) throws in
            for u in Rows.users { _ = try w.addUser(User(id: u, zone: "UTC"), at: t0) }
        }
        return store
    }

    @Test func aSecondLargeImportOfTheSameRowsStoresNoEventIDTwice() throws {
        let store = try Self.seeded()
        let withIDs = Rows.rows.filter { $0.eventID != nil }
        let first = try Rows.importRows(withIDs, into: store, expectedRows: 10_000_000)
        let stored = try Self.contents(store)
        let again = try Rows.importRows(withIDs, into: store, expectedRows: 10_000_000)
        #expect(first.inserted > 100 && first.duplicates > 100, "\(first)")
        #expect(again.inserted == 0 && again.duplicates == withIDs.count, "\(again)")
        let after = try Self.contents(store)
        // The same check-ins, and the schedule not touched again (no new row).
        #expect(after == stored)
    }

    /// A role granted the rows but not owning the tables cannot set the key aside: it takes the
    /// staged path, with the same result.
    @Test func aRoleThatDoesNotOwnTheTablesTakesTheStagedPath() throws {
        let owned = try Self.withUsers()
        let role = "importer_" + String(UInt32.random(in: 0...UInt32.max), radix: 36)
        _ = try Self.psql(
            owned,
            """
            CREATE ROLE \(role) LOGIN;
            GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA public TO \(role);
            GRANT USAGE ON ALL SEQUENCES IN SCHEMA public TO \(role);
            GRANT CREATE, TEMPORARY ON DATABASE \(owned.url.text.split(separator: "=").last!) TO \(role)
            """)
        let url = owned.url.text.replacingOccurrences(of: "user=postgres", with: "user=\(role)")
        #expect(url != owned.url.text)
        let granted = try PostgresStore(url: url)
        let before = try Self.schema(owned)
        let index = "SELECT 'checkin_lists_pkey'::regclass::oid"
        let oid = try Self.psql(owned, index)
        let result = try Rows.importRows(into: granted, expectedRows: 10_000_000)
        #expect(result.inserted > 100, "\(result)")
        #expect(try Self.schema(owned) == before)
        #expect(try Self.psql(owned, index) == oid, "the key was kept: the staged path")
        // The owner's large import into a store with no check-in does build it again.
        let other = try Self.withUsers()
        let otherOID = try Self.psql(other, index)
        _ = try Rows.importRows(into: other, expectedRows: 10_000_000)
        #expect(try Self.psql(other, index) != otherOID)
    }

    /// Issue 31, item 13: three large imports with event ids at once into a store with no
    /// check-in deadlocked (40P01) in 4 of 12 runs: each read the lists (an ACCESS SHARE lock on
    /// them) to choose the direct path, then asked for ACCESS EXCLUSIVE, which the others' share
    /// locks held off. Now the direct path's locks are asked for at once (NOWAIT), in a savepoint,
    /// before anything is read; one that cannot have them takes the staged path.
    @Test func threeLargeImportsAtOnceNeverDeadlock() throws {
        var failures: [String] = []
        for round in 0..<8 {
            let url = try Self.withUsers().url.text
            let stores = try (0..<3).map { _ in try PostgresStore(url: url) }
            let errors = Mutex<[String]>([])
            let ready = DispatchGroup()
            let go = DispatchSemaphore(value: 0)
            let done = DispatchGroup()
            for store in stores {
                ready.enter()
                done.enter()
                Thread.detachNewThread {
                    ready.leave()
                    go.wait()
                    do {
                        _ = try Rows.importRows(into: store, expectedRows: 10_000_000)
                    } catch {
                        errors.withLock { $0.append("round \(round): \(error)") }
                    }
                    done.leave()
                }
            }
            ready.wait()
            for _ in stores { go.signal() }
            done.wait()
            failures += errors.withLock { $0 }
            // Every event id once, whoever stored it.
            let events = try Self.psql(stores[0], "SELECT count(*), count(DISTINCT (user_id, event_id)) FROM checkin_events")
            #expect(events.first.map { Set($0.split(separator: "|")).count == 1 } == true, "round \(round): \(events)")
        }
        #expect(failures.isEmpty, "\(failures.count) of 24 imports failed: \(failures.prefix(3))")
    }

    struct Boom: Error {}

    /// Into a store with no check-in: the lists' key, the schedule's indexes and the foreign
    /// keys, set aside there, are back as they were.
    @Test func aLargeImportIntoAnEmptyStoreThatFailsLeavesEverythingAsItWas() throws {
        let store = try PostgresStore(url: try TestPostgres.freshDatabase())
        try store.write { (w: any StoreWriter) throws in
            for u in Rows.users { _ = try w.addUser(User(id: u, zone: "UTC"), at: t0) }
        }
        let before = try Self.contents(store)
        // Rows in (user, streak) byte order without event ids: the schedule's rows from the client.
        let sorted = Rows.rows.filter { $0.eventID == nil }.sorted {
            ($0.user.utf8.lexicographicallyPrecedes($1.user.utf8))
                || ($0.user == $1.user && $0.streak.utf8.lexicographicallyPrecedes($1.streak.utf8))
        }
        for rows in [Rows.rows, sorted] {
            for finishing in [true, false] {
                #expect(throws: Boom.self) {
                    try store.write(.bulkImport) { (w: any StoreWriter) throws in
                        let bulk = try w.checkinImport(storedAt: t0, expectedRows: 10_000_000)
                        for c in rows { try bulk.insert(c) }
                        if finishing { _ = try bulk.finish() }
                        throw Boom()
                    }
                }
            }
        }
        #expect(try Self.contents(store) == before)
        let done = try Rows.importRows(sorted, into: store, expectedRows: 10_000_000)
        #expect(done.inserted == sorted.count, "\(done)")
    }

    @Test func aLargeImportThatFailsLeavesEverythingAsItWas() throws {
        let store = try Self.seeded()
        let before = try Self.contents(store)
        // Thrown after the end (everything built again), and before it (set aside, not built).
        for finishing in [true, false] {
            #expect(throws: Boom.self) {
                try store.write(.bulkImport) { (w: any StoreWriter) throws in
                    let bulk = try w.checkinImport(storedAt: t0, expectedRows: 10_000_000)
                    for c in Rows.rows { try bulk.insert(c) }
                    if finishing { _ = try bulk.finish() }
                    throw Boom()
                }
            }
        }
        // A bad row: a user the store does not have (the foreign key, added again, refuses it).
        #expect(throws: StoreError.self) {
            try Rows.importRows(
                Rows.rows + [NewCheckin(user: "nobody", streak: "daily", instant: t0, zone: "UTC", eventID: "x")],
                into: store, expectedRows: 10_000_000)
        }
        // A row PostgreSQL's text cannot hold, in the middle of the COPY.
        #expect(throws: (any Error).self) {
            try Rows.importRows(
                Array(Rows.rows[..<500]) + [NewCheckin(user: "u1", streak: "a\u{0}b", instant: t0, zone: "UTC")]
                    + Rows.rows[500...], into: store, expectedRows: 10_000_000)
        }
        #expect(try Self.contents(store) == before)
        // And the store works as before: the same import now goes through.
        let done = try Rows.importRows(into: store, expectedRows: 10_000_000)
        #expect(done.inserted == Rows.stored.count, "\(done)")
    }
}
