import StreakCore
@testable import StreakPostgres
import StreakStore
import StreakTestKit
import Testing

/// The PostgreSQL store's check-ins packed one list per (user, streak) (migration 5): the
/// migration keeps every stored check-in as it was, and the lists read the same from Swift, from
/// SQL (`streakd_checkins`, the view `checkins`) and after appends.
@Suite(.fastTier, .requires(.postgres))
struct PGPackedCheckinsTests {
    static let rowsQuery = """
        SELECT concat_ws(' ', user_id, streak, at, zone, event_id, meta, stored_at) FROM checkins
        ORDER BY user_id, streak, at, event_id, meta
        """

    @Test func theMigrationPacksTheStoredCheckInsAsTheyWere() throws {
        let url = try TestPostgres.freshDatabase()
        let pg = try PGConnection(url: url)
        _ = try pg.migrate(Array(PostgresSchema.migrations.prefix(4)))
        try pg.execute(
            """
            INSERT INTO users (id, zone, remind_at, remind, created_at) VALUES
                ('u1', 'Europe/Berlin', 1200, true, 0), ('u2', 'UTC', 1200, true, 0), ('u3', 'UTC', 1200, true, 0);
            INSERT INTO checkins (user_id, streak, at, zone, event_id, meta, stored_at) VALUES
                ('u1', 'daily', 1795000000, 'Europe/Berlin', 'e1', NULL, 1795000100),
                ('u1', 'daily', 1794900000, 'America/New_York', NULL, '{"km":5}', 1795000100),
                ('u1', 'daily', 1794900000, 'Europe/Berlin', NULL, NULL, 1795000200),
                ('u1', 'reading', 1795000000, 'Europe/Berlin', 'e2', 'ünïcode ✓', 1795000100),
                ('u2', 'daily', -5, 'UTC', NULL, NULL, 0);
            """)
        let before = try TestPostgres.psql(url, Self.rowsQuery)
        #expect(before.split(separator: "\n").count == 5)
        _ = try pg.migrate(PostgresSchema.migrations)
        #expect(try TestPostgres.psql(url, Self.rowsQuery) == before, "the view shows the rows as they were")
        #expect(try TestPostgres.psql(url, "SELECT string_agg(user_id || '/' || event_id, ' ' ORDER BY 1, 2) FROM checkin_events") == "u1/e1 u1/e2")
        #expect(try TestPostgres.psql(url, "SELECT string_agg(streak, ' ' ORDER BY streak) FROM checkin_lists WHERE tagged") == "daily reading")

        // Swift reads the same lists, in instant order.
        let store = try PostgresStore(url: url)
        let daily = try store.read { (r: any StoreReader) in try r.checkins(of: "u1", streak: "daily") }
        #expect(daily.map(\.instant.seconds) == [1_794_900_000, 1_794_900_000, 1_795_000_000])
        #expect(daily.map(\.zone) == ["America/New_York", "Europe/Berlin", "Europe/Berlin"])
        #expect(daily.map(\.eventID) == [nil, nil, "e1"])
        #expect(try store.read { (r: any StoreReader) in try r.checkins(of: "u2", streak: "daily") }.map(\.instant.seconds) == [-5])

        // An append (a check-in stored later) goes to the end of its list; an event id stored
        // before is left out.
        let added = try store.write { (w: any StoreWriter) in
            try w.insertCheckins(
                [
                    NewCheckin(user: "u1", streak: "daily", instant: Instant(seconds: 1_794_800_000), zone: "UTC", eventID: "e1"),
                    NewCheckin(user: "u1", streak: "daily", instant: Instant(seconds: 1_794_800_000), zone: "UTC", eventID: "e3", meta: "m"),
                    NewCheckin(user: "u3", streak: "daily", instant: Instant(seconds: 1_794_800_000), zone: "UTC"),
                ], storedAt: Instant(seconds: 1_795_000_300))
        }
        #expect(added.inserted == 2 && added.duplicates == 1)
        let again = try store.read { (r: any StoreReader) in try r.checkins(of: "u1", streak: "daily") }
        #expect(again.first == StoredCheckin(instant: Instant(seconds: 1_794_800_000), zone: "UTC", eventID: "e3", storedAt: Instant(seconds: 1_795_000_300)))
        #expect(again.count == 4)
        #expect(try TestPostgres.psql(url, "SELECT count(*) FROM checkins") == "7")
    }

    /// A list packed here (zones named once while they stay the same) reads back the same in
    /// Swift and in SQL, and so do two lists put end to end.
    @Test func aListPackedHereReadsTheSameInSQL() throws {
        var one: [UInt8] = []
        var two: [UInt8] = []
        func add(_ at: Int64, _ zone: String?, meta: String? = nil, to list: inout [UInt8]) {
            var z = zone ?? ""
            var m = meta ?? ""
            z.withUTF8 { zb in
                m.withUTF8 { mb in
                    PackedCheckins.append(
                        at: at, storedAt: 7, zone: zone == nil ? nil : zb, eventID: nil, meta: meta == nil ? nil : mb, to: &list)
                }
            }
        }
        add(30, "Asia/Tokyo", to: &one)
        add(10, nil, meta: "x", to: &one)
        add(20, "UTC", to: &one)
        add(5, "Europe/Paris", to: &two)
        let both = one + two
        let records = try PackedCheckins.records(both, user: "u", streak: "s")
        #expect(records.map(\.zone) == ["Asia/Tokyo", "Asia/Tokyo", "UTC", "Europe/Paris"])
        #expect(records.map(\.meta) == [nil, "x", nil, nil])
        #expect(try PackedCheckins.checkins(both, user: "u", streak: "s").map(\.instant.seconds) == [5, 10, 20, 30])
        let url = try TestPostgres.freshDatabase()
        _ = try PostgresStore(url: url)
        let hex = both.map { String($0, radix: 16).count == 1 ? "0" + String($0, radix: 16) : String($0, radix: 16) }.joined()
        #expect(
            try TestPostgres.psql(url, "SELECT string_agg(concat_ws(' ', at, zone, meta, stored_at), ',') FROM streakd_checkins('\\x\(hex)'::bytea)")
                == "30 Asia/Tokyo 7,10 Asia/Tokyo x 7,20 UTC 7,5 Europe/Paris 7")
        #expect(throws: StoreError.self) { try PackedCheckins.records(Array(both.dropLast()), user: "u", streak: "s") }
    }
}
