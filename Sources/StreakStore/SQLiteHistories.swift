import GRDB
import StreakCore

/// Every streak's stored history in one pass: four ordered scans of covering indexes (users,
/// zone changes, check-ins, freeze events) merged by user id, holding one user at a time.
/// For work over all streaks at once, where a query per streak would cost far more (today:
/// recomputing every streak in the benchmark suite).
extension SQLiteAccess {
    func eachStreak(users range: UserRange, _ body: (StoredStreak) throws -> Void) throws {
        let bounds = "WHERE (?1 IS NULL OR user_id >= ?1) AND (?2 IS NULL OR user_id < ?2)"
        let users = try RawStatement(
            db,
            "SELECT \(Self.userColumns) FROM users INDEXED BY users_lookup "
                + "WHERE (?1 IS NULL OR id >= ?1) AND (?2 IS NULL OR id < ?2) ORDER BY id")
        let zones = try RawStatement(
            db, "SELECT user_id, since, zone FROM user_zones \(bounds) ORDER BY user_id, since")
        let checkins = try RawStatement(
            db,
            "SELECT user_id, streak, at, zone, event_id, stored_at FROM checkins \(bounds) ORDER BY user_id, streak, at"
        )
        let freezes = try RawStatement(
            db, "SELECT user_id, streak, at, kind, date FROM freeze_events \(bounds) ORDER BY user_id, streak, at, id")
        for s in [users, zones, checkins, freezes] {
            s.bind(1, range.from)
            s.bind(2, range.until)
        }
        defer { [users, zones, checkins, freezes].forEach { $0.reset() } }
        var zoneRow = try zones.step()
        var checkinRow = try checkins.step()
        var freezeRow = try freezes.step()
        while try users.step() {
            let user = Self.user(users)
            let id = Array(user.id.utf8)
            func behind(_ s: RawStatement) -> Bool { s.bytes(0).lexicographicallyPrecedes(id) }
            func at(_ s: RawStatement) -> Bool { s.bytes(0).elementsEqual(id) }
            var changes: [StoredZoneChange] = []
            while zoneRow && behind(zones) { zoneRow = try zones.step() }
            while zoneRow && at(zones) {
                changes.append(StoredZoneChange(since: Instant(seconds: zones.int64(1)), zone: zones.text(2)))
                zoneRow = try zones.step()
            }
            var streaks: [String: StoredStreak] = [:]
            func streak(_ name: String) -> StoredStreak {
                streaks[name] ?? StoredStreak(user: user, zones: changes, streak: name)
            }
            while checkinRow && behind(checkins) { checkinRow = try checkins.step() }
            while checkinRow && at(checkins) {
                let name = checkins.text(1)
                var s = streak(name)
                s.checkins.append(
                    StoredCheckin(
                        instant: Instant(seconds: checkins.int64(2)), zone: checkins.text(3),
                        eventID: checkins.optionalText(4), storedAt: Instant(seconds: checkins.int64(5))))
                streaks[name] = s
                checkinRow = try checkins.step()
            }
            while freezeRow && behind(freezes) { freezeRow = try freezes.step() }
            while freezeRow && at(freezes) {
                let name = freezes.text(1)
                var s = streak(name)
                s.freezeEvents.append(Self.freezeEvent(freezes, at: 2))
                streaks[name] = s
                freezeRow = try freezes.step()
            }
            for name in streaks.keys.sorted() { try body(streaks[name]!) }
        }
    }
}

extension SQLiteAccess {
    func middleUser() throws -> String? {
        try String.fetchOne(db, sql: "SELECT id FROM users ORDER BY id LIMIT 1 OFFSET (SELECT count(*) / 2 FROM users)")
    }
}
