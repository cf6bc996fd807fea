import StreakCore
import StreakStore

/// Many streaks' histories read from the tables at once: the streaks sorted by user and streak
/// (bytes compared, as the tables' keys are), their users, zone changes, check-ins and freeze
/// events each read by one scan over the range of user ids they span, in the tables' own order,
/// and matched as they come. Asking each streak alone is four lookups (about 10 µs); an import
/// that plans the runs of a million streaks it changed reads them so, front to back.
extension SQLiteAccess {
    /// The histories of `streaks` (sorted by user, then streak; each once) from the tables, or nil
    /// where the user is gone.
    func rangeHistories(of streaks: [DueStreak]) throws -> [DueHistory?] {
        guard let first = streaks.first?.user, let last = streaks.last?.user else { return [] }
        var strings = InternedStrings()  // zones repeat
        // Users, by id: where each streak's user is.
        var users: [String: User] = [:]
        var zones: [String: [StoredZoneChange]] = [:]
        let userRows = try range("SELECT \(Self.userColumns) FROM users INDEXED BY users_lookup", by: "id", first, last)
        try userRows.rows { users[userRows.text(0)] = Self.user(userRows) }
        let zoneRows = try range("SELECT user_id, since, zone FROM user_zones", first, last, "since")
        try zoneRows.rows {
            zones[zoneRows.text(0), default: []].append(
                StoredZoneChange(since: Instant(seconds: zoneRows.int64(1)), zone: zoneRows.text(2, interning: &strings)))
        }
        var histories: [DueHistory?] = streaks.map { d in
            users[d.user].map {
                DueHistory(
                    user: $0, stored: StoredStreak(user: $0, zones: zones[d.user] ?? [], streak: d.streak), fromCopy: false)
            }
        }
        // Check-ins and freeze events, each row to the streak it belongs to (rows of streaks not
        // asked for, within the range, are passed over).
        var match = StreakMatch(streaks)
        let checkins = try range(
            "SELECT user_id, streak, at, zone, event_id, stored_at FROM checkins", first, last, "streak, at")
        try checkins.rows {
            guard let i = match.index(checkins.bytes(0), checkins.bytes(1)), histories[i] != nil else { return }
            histories[i]!.stored.checkins.append(
                StoredCheckin(
                    instant: Instant(seconds: checkins.int64(2)), zone: checkins.text(3, interning: &strings),
                    eventID: checkins.optionalText(4), storedAt: Instant(seconds: checkins.int64(5))))
        }
        match = StreakMatch(streaks)
        let events = try range(
            "SELECT user_id, streak, at, kind, date, until_date, author FROM freeze_events", first, last, "streak, at, id")
        try events.rows {
            guard let i = match.index(events.bytes(0), events.bytes(1)), histories[i] != nil else { return }
            histories[i]!.stored.freezeEvents.append(Self.freezeEvent(events, at: 2))
        }
        return histories
    }

    /// `select` over the user ids (column `key`) from `first` to `last`, ordered by the user id,
    /// then `order`.
    private func range(
        _ select: String, by key: String = "user_id", _ first: String, _ last: String, _ order: String? = nil
    ) throws -> RawStatement {
        let s = try RawStatement(
            db, "\(select) WHERE \(key) BETWEEN ?1 AND ?2 ORDER BY \(key)\(order.map { ", " + $0 } ?? "")")
        s.bind(1, first)
        s.bind(2, last)
        return s
    }
}

/// Rows in (user, streak) order matched against streaks in the same order: a cursor that only
/// moves forward.
private struct StreakMatch {
    let keys: [(user: [UInt8], streak: [UInt8])]
    var at = 0

    init(_ streaks: [DueStreak]) { keys = streaks.map { (Array($0.user.utf8), Array($0.streak.utf8)) } }

    /// The place of the streak (user, streak) names, if asked for; moves past those before it.
    mutating func index(_ user: UnsafeBufferPointer<UInt8>, _ streak: UnsafeBufferPointer<UInt8>) -> Int? {
        while at < keys.count {
            let order = keys[at].user.withUnsafeBufferPointer { u in
                let byUser = compareBytes(u, user)
                return byUser != 0 ? byUser : keys[at].streak.withUnsafeBufferPointer { compareBytes($0, streak) }
            }
            if order == 0 { return at }
            if order > 0 { return nil }  // a row of a streak not asked for
            at += 1
        }
        return nil
    }
}
