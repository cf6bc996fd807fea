import Foundation
import StreakCore
import StreakPostgres
import StreakStore
import StreakTestKit
import Testing

/// The PostgreSQL store's large check-in import (`expectedRows` past the threshold: COPY straight
/// into `checkins` with its foreign keys and secondary indexes set aside) stores what the staged
/// import stores, keeps event ids once, and leaves everything as it was when it rolls back.
@Suite(.enabled(if: TestPostgres.isAvailable, "PostgreSQL 15 is not installed"))
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
            SELECT concat_ws(' ', id, user_id, streak, at, zone, event_id, meta, stored_at) FROM checkins ORDER BY id
            """)
            + psql(
                store,
                "SELECT concat_ws(' ', user_id, streak, next_at, version, changed) FROM schedule ORDER BY user_id, streak"
            )
            + schema(store)
    }

    /// The check-in ids' sequence: where the next import's ids start, and its cache as the schema made it.
    static func idSequence(_ store: PostgresStore) throws -> [String] {
        try psql(
            store,
            "SELECT concat_ws(' ', last_value, cache_size) FROM pg_sequences WHERE sequencename = 'checkins_id_seq'")
    }

    /// The indexes and constraints of checkins and schedule.
    static func schema(_ store: PostgresStore) throws -> [String] {
        try psql(
            store,
            """
            SELECT indexdef FROM pg_indexes WHERE tablename IN ('checkins', 'schedule')
            UNION ALL
            SELECT conname || ' ' || pg_get_constraintdef(oid) || ' ' || convalidated FROM pg_constraint
            WHERE conrelid IN ('checkins'::regclass, 'schedule'::regclass)
            ORDER BY 1
            """)
    }

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
        #expect(try Self.idSequence(large) == (try Self.idSequence(staged)))
        #expect(try Self.schema(large) == before, "every index and foreign key is back, validated")
        #expect(before.contains { $0.hasPrefix("CREATE INDEX checkins_streak ON public.checkins") })
        #expect(before.contains { $0.hasPrefix("checkins_user_id_fkey FOREIGN KEY (user_id) REFERENCES users(id)") })
        // Statistics for the next tick's plans.
        #expect(try Self.psql(large, "SELECT reltuples::bigint FROM pg_class WHERE relname = 'checkins'") == ["\(Rows.stored.count + 3)"])
    }

    /// The first import into a store: checkins and the schedule have no row yet, so the large
    /// path truncates them and COPYs the rows in frozen.
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
        #expect(try Self.idSequence(large) == (try Self.idSequence(staged)))
        #expect(try Self.schema(large) == before)
        let again = try Rows.importRows(into: large, expectedRows: 10_000_000)
        #expect(again.inserted == Rows.rows.count { $0.eventID == nil }, "only the rows without an event id again")
        // With no row deleted (no event id repeated), every page is all-visible at the commit.
        let plain = try empty()
        _ = try Rows.importRows(Rows.rows.filter { $0.eventID == nil }, into: plain, expectedRows: 10_000_000)
        #expect(
            try Self.psql(plain, "SELECT relallvisible = relpages AND relpages > 0 FROM pg_class WHERE relname = 'checkins'")
                == ["t"], "frozen, all-visible")
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
        #expect(try Self.idSequence(sent) == (try Self.idSequence(read)))
        #expect(
            try Self.psql(sent, "SELECT string_agg(user_id || ' ' || streak, ',' ORDER BY id) FROM schedule")
                == (try Self.psql(read, "SELECT string_agg(user_id || ' ' || streak, ',' ORDER BY id) FROM schedule")),
            "the schedule's ids in the same order")
        #expect(
            try Self.psql(sent, "SELECT relallvisible = relpages AND relpages > 0 FROM pg_class WHERE relname = 'schedule'")
                == ["t"], "the schedule's rows COPYed in, frozen")
    }

    /// Rows without an event id or metadata leave the partial indexes in place; the first row
    /// with one, late in the import, drops them mid-way (the COPY begins again) and they are
    /// built again at the end. Either way the same rows, ids and schema as the staged path.
    @Test func thePartialIndexesStayUntilARowNeedsThem() throws {
        let bare = Rows.rows.map {
            NewCheckin(user: $0.user, streak: $0.streak, instant: $0.instant, zone: $0.zone, eventID: nil, meta: nil)
        }
        let partial = "SELECT oid FROM pg_class WHERE relname IN ('checkins_event', 'checkins_tagged') ORDER BY relname"
        for rows in [bare, bare + [Rows.rows[0], Rows.rows[9]]] {
            let staged = try Self.seeded()
            let large = try Self.seeded()
            let before = try Self.schema(large)
            let kept = try Self.psql(large, partial)
            let a = try Rows.importRows(rows, into: staged, expectedRows: 0)
            let b = try Rows.importRows(rows, into: large, expectedRows: 10_000_000)
            #expect(a == b && a.inserted == rows.count, "\(a) \(b)")
            #expect(try Self.contents(large) == (try Self.contents(staged)))
            #expect(try Self.idSequence(large) == (try Self.idSequence(staged)))
            #expect(try Self.schema(large) == before)
            #expect((try Self.psql(large, partial) == kept) == (rows.count == bare.count), "kept, or built again")
        }
        #expect(Rows.rows[0].eventID != nil && Rows.rows[9].meta != nil)
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

    /// A role granted the rows but not owning the tables cannot set indexes aside: it takes the
    /// staged path, with the same result.
    @Test func aRoleThatDoesNotOwnTheTablesTakesTheStagedPath() throws {
        let owned = try Self.seeded()
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
        let index = "SELECT 'checkins_streak'::regclass::oid"
        let oid = try Self.psql(owned, index)
        let result = try Rows.importRows(into: granted, expectedRows: 10_000_000)
        #expect(result.inserted == Rows.stored.count, "\(result)")
        #expect(try Self.schema(owned) == before)
        #expect(try Self.psql(owned, index) == oid, "the index was kept: the staged path")
        // The owner's large import does build it again.
        _ = try Rows.importRows(into: owned, expectedRows: 10_000_000)
        #expect(try Self.psql(owned, index) != oid)
    }

    struct Boom: Error {}

    /// The same into an empty store: the primary key, the schedule's indexes and the ids'
    /// sequence's cache, set aside or changed there too, are back as they were.
    @Test func aLargeImportIntoAnEmptyStoreThatFailsLeavesEverythingAsItWas() throws {
        let store = try PostgresStore(url: try TestPostgres.freshDatabase())
        try store.write { (w: any StoreWriter) throws in
            for u in Rows.users { _ = try w.addUser(User(id: u, zone: "UTC"), at: t0) }
        }
        let before = try Self.contents(store) + Self.idSequence(store)
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
        #expect(try Self.contents(store) + Self.idSequence(store) == before)
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
