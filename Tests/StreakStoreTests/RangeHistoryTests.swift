import Foundation
import GRDB
import StreakCore
import StreakStore
import StreakTestKit
import Testing

@testable import StreakSQLite

/// Many changed streaks' histories read by ranges (`rangeHistories`: an import planning what it
/// changed, a preview right after it) are what reading each streak alone gives.
@Suite(.fastTier) struct RangeHistoryTests {
    static let zones = ["UTC", "Europe/Berlin", "America/Argentina/Buenos_Aires", "Asia/Tokyo"]
    static func at(_ seconds: Int) -> Instant { Instant(seconds: t0.seconds + Int64(seconds)) }

    /// 90 users whose ids sort by bytes, not by number ("u1", "u10", "u100"…), with one to three
    /// streaks, zone changes, check-ins in several zones, event ids and freeze events.
    static func store() throws -> SQLiteStore {
        let store = try SQLiteStore(path: scratch() + "/s.sqlite")
        try store.write { w in
            for n in 0..<90 {
                let id = "u\(n * 37 % 1000)"
                _ = try w.addUser(User(id: id, zone: zones[n % 4], language: n % 5 == 0 ? "de" : nil), at: t0)
                if n % 7 == 0 { try w.updateUser(User(id: id, zone: zones[(n + 1) % 4]), at: at(3600)) }
                if n % 11 == 0 { try w.updateUser(User(id: id, zone: zones[(n + 2) % 4]), at: at(7200)) }
                for streak in ["daily", "gym", "read"].prefix(1 + n % 3) {
                    let checkins = (0...(n % 6)).map { k in
                        NewCheckin(
                            user: id, streak: streak, instant: at(k * 86_400 + n), zone: zones[(n + k / 2) % 4],
                            eventID: k == 2 ? "e\(n)-\(streak)" : nil)
                    }
                    _ = try w.insertCheckins(checkins, storedAt: at(100))
                    if n % 4 == 1 {
                        try w.addFreezeEvent(FreezeEvent(at: at(50), kind: .grant), user: id, streak: streak)
                        try w.addFreezeEvent(FreezeEvent(at: at(20), kind: .grant), user: id, streak: streak)
                    }
                }
            }
        }
        return store
    }

    @Test func historiesReadByRangesAreEachStreaksReadAlone() throws {
        let store = try Self.store()
        var streaks: [DueStreak] = []
        try store.read { r in try r.eachUnplannedStreak(every: true) { streaks += $0 } }
        streaks.sort { SQLiteAccess.before($0, $1) }
        // Some streaks within the range not asked for, and a user gone since the list was read.
        let asked = streaks.enumerated().filter { $0.offset % 5 != 3 }.map(\.element)
        let gone = asked[40].user
        #expect(try store.write { w in try w.removeUser(gone) })
        #expect(asked.count >= SQLiteAccess.rangeReadFrom && Set(asked.map(\.user)).count > 50)
        try store.queue.read { db in
            let access = SQLiteAccess(db: db)
            let ranged = try access.rangeHistories(of: asked)
            #expect(ranged.count == asked.count)
            for (d, read) in zip(asked, ranged) {
                let alone = try access.dueHistory(of: d)
                #expect(read?.user == alone?.user, "\(d.user)/\(d.streak)")
                #expect(read?.stored == alone?.stored, "\(d.user)/\(d.streak)")
                #expect((read == nil) == (d.user == gone))
                #expect(read.map { !$0.fromCopy } ?? true)
            }
            let zoned = ranged.compactMap { $0 }.filter { $0.stored.zones.count == 3 }
            let frozen = ranged.compactMap { $0 }.filter { $0.stored.freezeEvents.count == 2 }
            #expect(!zoned.isEmpty && !frozen.isEmpty, "the data has zone changes and freeze events")
            // Through the store's reader too: all changed and in order, so read by ranges.
            let read = try access.dueHistories(of: asked)
            #expect(zip(read, ranged).allSatisfy { $0?.stored == $1?.stored && $0?.user == $1?.user })
            // In another order (an API batch's streaks come as their rows were made): read by
            // ranges all the same, each answer in its streak's place.
            let order = asked.indices.map { ($0 * 37) % asked.count }
            #expect(Set(order).count == asked.count)
            let mixed = try access.dueHistories(of: order.map { asked[$0] })
            #expect(zip(order, mixed).allSatisfy { ranged[$0]?.stored == $1?.stored && ranged[$0]?.user == $1?.user })
        }
    }

    /// Changed streaks spread thin over their users' range (an API batch of random users on a
    /// large store) are read each alone, not by a range that passes over the many between them;
    /// closer together, by the range. Either way each answer is the streak's own.
    @Test func streaksSpreadThinAreReadEachAlone() throws {
        let store = try SQLiteStore(path: scratch() + "/s.sqlite")
        try store.write { w in
            for n in 0..<800 {
                _ = try w.addUser(User(id: "u\(n)", zone: Self.zones[n % 4]), at: t0)
                _ = try w.insertCheckins(
                    [NewCheckin(user: "u\(n)", streak: "daily", instant: Self.at(n * 600), zone: Self.zones[n % 4])],
                    storedAt: Self.at(100))
            }
        }
        var streaks: [DueStreak] = []
        try store.read { r in try r.eachUnplannedStreak(every: true) { streaks += $0 } }
        streaks.sort { SQLiteAccess.before($0, $1) }
        #expect(streaks.count == 800)
        try store.queue.read { db in
            let access = SQLiteAccess(db: db)
            for step in [10, 2] {
                let asked = streaks.enumerated().filter { $0.offset % step == 0 }.map(\.element)
                #expect(asked.count >= SQLiteAccess.rangeReadFrom)
                // 80 of the range's 800 (1 in 10): alone; 400 (1 in 2): by the range.
                #expect(try access.rangeWorthReading(asked.first!, asked.last!, count: asked.count) == (step == 2))
                let read = try access.dueHistories(of: asked)
                for (d, h) in zip(asked, read) {
                    let alone = try access.dueHistory(of: d)
                    #expect(h?.stored == alone?.stored && h?.user == alone?.user, "\(d.user)")
                    #expect(h?.stored.checkins.count == 1)
                }
            }
        }
    }
}
