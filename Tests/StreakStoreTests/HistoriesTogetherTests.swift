import StreakCore
import StreakStore
import StreakTestKit
import Testing

/// Many streaks' histories read together (`dueHistories`: a tick's batch, planning what a write
/// changed) are what reading each alone gives, on every engine: users with several streaks and
/// zone changes, whose zones each streak's history carries.
@Suite(.fastTier) struct HistoriesTogetherTests {
    static func at(_ seconds: Int64) -> Instant { Instant(seconds: t0.seconds + seconds) }

    @Test(arguments: Engine.allCases) func historiesReadTogetherAreEachReadAlone(engine: Engine) throws {
        let store = try engine.open()
        let zones = ["UTC", "Europe/Berlin", "Asia/Tokyo"]
        try store.write { (w: any StoreWriter) throws in
            for n in 0..<12 {
                let id = "u\(n)"
                _ = try w.addUser(User(id: id, zone: zones[n % 3]), at: t0)
                if n % 2 == 0 { try w.updateUser(User(id: id, zone: zones[(n + 1) % 3]), at: Self.at(3600)) }
                if n % 4 == 0 { try w.updateUser(User(id: id, zone: zones[(n + 2) % 3]), at: Self.at(7200)) }
                for (k, streak) in ["daily", "gym", "read"].prefix(1 + n % 3).enumerated() {
                    _ = try w.insertCheckins(
                        [NewCheckin(user: id, streak: streak, instant: Self.at(Int64(k) * 60), zone: zones[n % 3])],
                        storedAt: Self.at(10_000))
                    if n % 5 == 0 {
                        try w.addFreezeEvent(FreezeEvent(at: Self.at(50), kind: .grant), user: id, streak: streak)
                    }
                }
            }
        }
        let due = try store.read { try $0.dueStreaks(through: Self.at(10_000)) }.streaks
        #expect(due.count == 24)
        let together = try store.read { try $0.dueHistories(of: due) }
        for (d, read) in zip(due, together) {
            let alone = try store.read { try $0.dueHistories(of: [d]) }[0]
            #expect(read?.stored == alone?.stored, "\(d.user)/\(d.streak)")
            let n = Int(d.user.dropFirst())!
            #expect(read?.stored.zones.count == 1 + (n % 2 == 0 ? 1 : 0) + (n % 4 == 0 ? 1 : 0), "\(d.user)")
        }
        #expect(together.contains { $0?.stored.zones.count == 3 && $0?.stored.streak == "read" })
    }
}
