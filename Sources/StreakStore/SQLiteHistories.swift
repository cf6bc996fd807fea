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

extension SQLiteAccess {
    /// Every streak, part `part` of `parts` (by row id, not sorted): its packed history when
    /// that is current, else its history read from the tables. Answers how many were packed.
    @discardableResult
    func eachPackedStreak(part: Int, of parts: Int, _ body: (StoredStreak) throws -> Void) throws -> Int {
        var packed = 0
        var stale: [(user: String, streak: String)] = []
        try eachScheduleRow(part: part, of: parts) { u, s, bytes in
            let (user, streak) = (String(decoding: u, as: UTF8.self), String(decoding: s, as: UTF8.self))
            if let bytes, let history = PackedHistory.unpack(bytes, user: user, streak: streak) {
                packed += 1
                try body(history)
            } else {
                stale.append((user, streak))
            }
        }
        for (user, streak) in stale {
            if let s = try storedStreak(user: user, streak: streak) { try body(s) }
        }
        return packed
    }
}

extension SQLiteAccess {
    func eachScheduleRow(
        part: Int, of parts: Int,
        _ body: (
            _ user: UnsafeBufferPointer<UInt8>, _ streak: UnsafeBufferPointer<UInt8>,
            _ packed: UnsafeBufferPointer<UInt8>?
        ) throws -> Void
    ) throws {
        // Each page is read once: a small page cache is recycled, where a large one would grow
        // (allocations under SQLite's global memory mutex, contended by the other parts).
        let cache = try Int.fetchOne(db, sql: "PRAGMA cache_size") ?? -2000
        try db.execute(sql: "PRAGMA cache_size = -1024")
        defer { try? db.execute(sql: "PRAGMA cache_size = \(cache)") }
        let bounds = try RawStatement(db, "SELECT coalesce(min(rowid), 0), coalesce(max(rowid), -1) FROM schedule")
        guard try bounds.step() else { return }
        let (low, high) = (bounds.int64(0), bounds.int64(1))
        bounds.reset()
        let size = (high - low + Int64(parts)) / Int64(parts)
        let rows = try RawStatement(
            db,
            """
            SELECT user_id, streak, CASE WHEN history_version = version THEN history END
            FROM schedule WHERE rowid >= ? AND rowid < ?
            """)
        rows.bind(1, low + size * Int64(part))
        rows.bind(2, low + size * Int64(part + 1))
        try rows.rows { try body(rows.bytes(0), rows.bytes(1), rows.isNull(2) ? nil : rows.blob(2)) }
    }

    func storedStreak(user id: String, streak: String) throws -> StoredStreak? {
        guard let user = try user(id) else { return nil }
        return StoredStreak(
            user: user, zones: try zoneHistory(of: id), streak: streak, checkins: try checkins(of: id, streak: streak),
            freezeEvents: try freezeEvents(of: id, streak: streak))
    }
}
