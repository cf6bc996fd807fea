import StreakCore
import Testing

@testable import StreakStore

/// `eachStreak` (one ordered pass) gives exactly what the per-streak reads give.
@Suite struct EachStreakTests {
    func store() throws -> SQLiteStore {
        let store = try SQLiteStore(path: scratch() + "/s.sqlite")
        try store.write { (w: any StoreWriter) throws in
            for id in ["a", "b.x", "b", "c-1", "d", "e"] {
                _ = try w.addUser(User(id: id, zone: "Europe/Berlin"), at: t0)
            }
            try w.updateUser(User(id: "b", zone: "Asia/Tokyo"), at: t0 + 50_000)
            _ = try w.insertCheckins(
                [
                    NewCheckin(user: "b", streak: "run", instant: t0 + 200, zone: "Asia/Tokyo"),
                    NewCheckin(user: "a", streak: "daily", instant: t0 + 100, zone: "Europe/Berlin", eventID: "e1"),
                    NewCheckin(user: "b", streak: "daily", instant: t0 + 90_000, zone: "Asia/Tokyo"),
                    NewCheckin(user: "a", streak: "daily", instant: t0 + 10, zone: "UTC"),
                    NewCheckin(user: "b.x", streak: "daily", instant: t0, zone: "Europe/Berlin"),
                    NewCheckin(user: "e", streak: "daily", instant: t0, zone: "Europe/Berlin"),
                ], storedAt: t0 + 100_000)
            try w.addFreezeEvent(FreezeEvent(at: t0, kind: .grant), user: "d", streak: "daily")
            try w.addFreezeEvent(
                FreezeEvent(at: t0 + 5, kind: .use(LocalDate("2026-11-21")!)), user: "b", streak: "run")
        }
        return store
    }

    /// What the per-streak reads say, for comparison.
    func expected(_ r: any StoreReader, users: [String]) throws -> [String] {
        try users.flatMap { id -> [String] in
            let user = try r.user(id)!
            return try r.streaks(of: id).map { s in
                describe(
                    StoredStreak(
                        user: user, zones: try r.zoneHistory(of: id), streak: s,
                        checkins: try r.checkins(of: id, streak: s),
                        freezeEvents: try r.freezeEvents(of: id, streak: s)))
            }
        }
    }

    func describe(_ s: StoredStreak) -> String {
        "\(s.userID)/\(s.streak) zones \(s.zones.map { "\($0.since.seconds)=\($0.zone)" }) "
            + "checkins \(s.checkins.map { "\($0.instant.seconds)@\($0.zone)#\($0.eventID ?? "-")+\($0.storedAt.seconds)" }) "
            + "freezes \(s.freezeEvents)"
    }

    @Test func onePassEqualsTheReadsPerStreak() throws {
        let store = try store()
        try store.read { r in
            var seen: [String] = []
            try r.eachStreak(users: .all) { seen.append(describe($0)) }
            // Byte order of ids: "b" < "b.x" < "c-1"; "c-1" has nothing stored, "d" only a freeze event.
            #expect(seen == (try expected(r, users: ["a", "b", "b.x", "d", "e"])))
            #expect(seen.count == 6)
        }
    }

    @Test func theTwoHalvesCoverEveryStreakOnce() throws {
        let store = try store()
        try store.read { r in
            let middle = try #require(try r.middleUser())
            var all: [String] = []
            var halves: [String] = []
            try r.eachStreak(users: .all) { all.append(describe($0)) }
            try r.eachStreak(users: UserRange(until: middle)) { halves.append(describe($0)) }
            try r.eachStreak(users: UserRange(from: middle)) { halves.append(describe($0)) }
            #expect(halves == all)
        }
    }
}
