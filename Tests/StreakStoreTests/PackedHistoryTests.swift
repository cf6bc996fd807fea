import StreakCore
import StreakStore
import StreakTestKit
import Testing

@testable import StreakSQLite

/// A packed history is the tables' history, and stands for them only while the streak's
/// version is the one it was packed at.
@Suite(.fastTier) struct PackedHistoryTests {
    static let sample = StoredStreak(
        userID: "u1",
        zones: [
            StoredZoneChange(since: Instant(seconds: -5), zone: "Europe/Berlin"),
            StoredZoneChange(since: t0 + 9_000, zone: "America/Argentina/Buenos_Aires"),
        ],
        streak: "daily",
        checkins: [
            StoredCheckin(instant: t0 + 100, zone: "Europe/Berlin", eventID: "é-1", storedAt: t0 + 100),
            StoredCheckin(instant: t0 + 50, zone: "UTC", eventID: nil, storedAt: t0 + 86_400 * 30),
            StoredCheckin(instant: t0 + 50, zone: "America/Argentina/Buenos_Aires", eventID: "x", storedAt: t0),
        ],
        freezeEvents: [
            FreezeEvent(at: t0, kind: .grant), FreezeEvent(at: t0 - 7, kind: .refill),
            FreezeEvent(at: t0 + 3, kind: .use(LocalDate(day: -3))),
        ])

    func unpack(_ bytes: [UInt8]) -> StoredStreak? {
        bytes.withUnsafeBufferPointer { PackedHistory.unpack($0, user: "u1", streak: "daily") }
    }

    @Test func packingKeepsEverything() {
        let bytes = PackedHistory.pack(Self.sample)
        #expect(unpack(bytes) == Self.sample)
        #expect(bytes.count < 120, "\(bytes.count) bytes")
    }

    @Test func cutOrDamagedBytesAreNoHistory() {
        let bytes = PackedHistory.pack(Self.sample)
        for n in 0..<bytes.count { #expect(unpack(Array(bytes.prefix(n))) == nil, "first \(n) bytes") }
        #expect(unpack(bytes + [0]) == nil)
        #expect(unpack([2] + bytes.dropFirst()) == nil)
    }

    /// `oneZone` reads a one-zone history's check-ins and kept pauses straight from the bytes, and
    /// names the first other event (which sends preview to the engine).
    @Test func oneZoneReadsPausesAndNamesOtherEvents() {
        var s = StoredStreak(
            userID: "u1", zones: [StoredZoneChange(since: t0, zone: "Europe/Berlin")], streak: "daily",
            checkins: [StoredCheckin(instant: t0 + 100, zone: "Europe/Berlin", eventID: "e-1", storedAt: t0 + 200)],
            freezeEvents: [
                FreezeEvent(at: t0 + 5, kind: .pause(from: LocalDate(day: 10), until: LocalDate(day: 12)), author: "ana"),
                FreezeEvent(at: t0 + 6, kind: .pause(from: LocalDate(day: 20), until: LocalDate(day: 19))),
                FreezeEvent(at: t0 + 7, kind: .pause(from: LocalDate(day: 30), until: LocalDate(day: 30))),
            ])
        func read() -> (Instant?, [Instant], [DateSpan])? {
            var (checkins, pauses) = ([Instant](), [DateSpan]())
            let bytes = PackedHistory.pack(s)
            let one = bytes.withUnsafeBufferPointer {
                PackedHistory.oneZone($0, { at, _ in checkins.append(at) }, pause: { pauses.append($0) })
            }
            return one.map { ($0.firstOtherEvent, checkins, pauses) }
        }
        // The pause whose dates are out of order is not kept (the engine's `pausedDates`).
        let kept = [
            DateSpan(from: LocalDate(day: 10), until: LocalDate(day: 12)),
            DateSpan(from: LocalDate(day: 30), until: LocalDate(day: 30)),
        ]
        let pausesOnly = read()
        #expect(pausesOnly?.0 == nil && pausesOnly?.1 == [t0 + 100] && pausesOnly?.2 == kept)
        s.freezeEvents += [
            FreezeEvent(at: t0 + 9, kind: .repair(from: LocalDate(day: 40), until: LocalDate(day: 40)), author: "bo"),
            FreezeEvent(at: t0 + 8, kind: .grant),
        ]
        let withOthers = read()
        #expect(withOthers?.0 == t0 + 8 && withOthers?.2 == kept)
    }

    func store() throws -> SQLiteStore {
        let store = try SQLiteStore(path: scratch() + "/s.sqlite")
        try store.write { w in
            _ = try w.addUser(User(id: "u1", zone: "Europe/Berlin"), at: t0)
            _ = try w.addUser(User(id: "u2", zone: "Asia/Tokyo"), at: t0)
            _ = try w.insertCheckins(
                [
                    NewCheckin(user: "u1", streak: "daily", instant: t0 + 10, zone: "Europe/Berlin"),
                    NewCheckin(user: "u1", streak: "run", instant: t0 + 20, zone: "UTC", eventID: "e"),
                    NewCheckin(user: "u2", streak: "daily", instant: t0 + 30, zone: "Asia/Tokyo"),
                ], storedAt: t0 + 40)
        }
        return store
    }

    func read(_ r: any StoreReader, _ user: String, _ streak: String) throws -> StoredStreak {
        StoredStreak(
            user: try r.user(user)!, zones: try r.zoneHistory(of: user), streak: streak,
            checkins: try r.checkins(of: user, streak: streak),
            freezeEvents: try r.freezeEvents(of: user, streak: streak))
    }

    func due(_ store: SQLiteStore, _ user: String, _ streak: String) throws -> DueStreak {
        try store.read { try $0.dueStreaks(through: nil) }.first { $0.user == user && $0.streak == streak }!
    }

    /// u1/daily's packed history, when current.
    func packed(_ store: SQLiteStore) throws -> StoredStreak? {
        let d = try due(store, "u1", "daily")
        return try store.access { try $0.packedHistory(of: d) }
    }

    /// Packs u1/daily as a run would: version read first, then the history.
    func pack(_ store: SQLiteStore, _ user: String, _ streak: String) throws {
        let d = try due(store, user, streak)
        let history = try store.read { try read($0, user, streak) }
        _ = try store.write { w in try w.schedule(d, nextAt: t0 + 99_999, handledThrough: t0, read: history) }
    }

    @Test func everyChangeMakesThePackedHistoryStale() throws {
        let store = try store()
        #expect(try packed(store) == nil)
        let changes: [(String, (any StoreWriter) throws -> Void)] = [
            (
                "a check-in",
                {
                    _ = try $0.insertCheckins(
                        [NewCheckin(user: "u1", streak: "daily", instant: t0 + 99, zone: "UTC")], storedAt: t0 + 99)
                }
            ),
            (
                "a freeze event",
                { try $0.addFreezeEvent(FreezeEvent(at: t0 + 5, kind: .grant), user: "u1", streak: "daily") }
            ),
            ("a zone change", { try $0.updateUser(User(id: "u1", zone: "Asia/Tokyo"), at: t0 + 7) }),
            ("new settings", { try $0.rescheduleAll() }),
        ]
        for (what, change) in changes {
            try pack(store, "u1", "daily")
            let current = try packed(store)
            #expect(current == (try store.read { try read($0, "u1", "daily") }), "before \(what)")
            let before = try due(store, "u1", "daily")
            try store.write { w in try change(w) }
            #expect(try store.access { try $0.packedHistory(of: before) } == nil, "\(what)")
            #expect(try packed(store) == nil, "\(what)")
        }
        // A change between the run's read of the version and its write: what it packed is stale.
        let early = try due(store, "u1", "daily")
        try store.write { w in try changes[0].1(w) }
        let history = try store.read { try read($0, "u1", "daily") }
        _ = try store.write { w in try w.schedule(early, nextAt: nil, handledThrough: t0, read: history) }
        #expect(try packed(store) == nil)
        // A run that finds nothing to pack keeps what is packed.
        try pack(store, "u1", "daily")
        let d = try due(store, "u1", "daily")
        _ = try store.write { w in try w.schedule(d, nextAt: nil, handledThrough: t0 + 1, read: nil) }
        #expect(try packed(store) != nil)
    }

    @Test func everyStreakInPartsPackedOrRead() throws {
        let store = try store()
        try pack(store, "u1", "daily")
        try pack(store, "u2", "daily")
        for parts in 1...4 {
            var seen: [StoredStreak] = []
            var packed = 0
            for part in 0..<parts {
                packed += try store.access { try $0.eachPackedStreak(part: part, of: parts) { seen.append($0) } }
            }
            #expect(packed == 2, "\(parts) parts")
            let expected = try store.read { r in
                try [("u1", "daily"), ("u1", "run"), ("u2", "daily")].map { try read(r, $0.0, $0.1) }
            }
            #expect(seen.sorted { ($0.userID, $0.streak) < ($1.userID, $1.streak) } == expected, "\(parts) parts")
        }
    }

    /// One lookup by the schedule row answers what `user` and `packedHistory` answer apart.
    @Test func theUserAndPackedHistoryInOneLookup() throws {
        let store = try store()
        func both(_ d: DueStreak) throws -> (User, StoredStreak?)? {
            try store.access { r in try r.userAndPackedHistory(of: d).map { ($0.user, $0.packed) } }
        }
        func apart(_ d: DueStreak) throws -> (User, StoredStreak?) {
            try store.access { r in (try r.user(d.user)!, try r.packedHistory(of: d)) }
        }
        var d = try due(store, "u1", "daily")
        #expect(try both(d)! == apart(d) && apart(d).1 == nil, "nothing packed yet")
        try pack(store, "u1", "daily")
        d = try due(store, "u1", "daily")
        #expect(try both(d)! == apart(d) && apart(d).1 != nil, "packed")
        try store.write { w in try w.updateUser(User(id: "u1", zone: "Asia/Tokyo"), at: t0 + 7) }
        #expect(try both(d)!.0.zone == "Asia/Tokyo" && both(d)!.1 == nil, "stale after a change")
        var byIDs = d
        byIDs.row = nil
        #expect(try both(byIDs) == nil, "no row to look up by")
        _ = try store.write { w in try w.removeUser("u1") }
        #expect(try both(d) == nil, "gone")
    }
}
