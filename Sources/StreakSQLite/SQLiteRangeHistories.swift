import GRDB
import StreakCore
import StreakStore

/// Many streaks' histories read from the tables at once: the streaks sorted by user and streak
/// (bytes compared, as the tables' keys are), their users, zone changes, check-ins and freeze
/// events each read by one scan over the range of user ids they span, in the tables' own order,
/// and merged with the streaks as they come, by a cursor over their ids' bytes that only moves
/// forward: no String is made of an id (a user takes the one their streaks have) and nothing is
/// looked up by text; zone names and languages are made once (`InternedStrings`), and a streak's
/// check-ins are gathered apart, then copied into an array of their number (one allocation, not
/// one per doubling). Asking each streak alone is four lookups (about 10 µs); an import planning
/// the streaks it changed, and a preview right after a large one, read them so, front to back.
extension SQLiteAccess {
    /// The histories of `streaks` (sorted by user, then streak; each once) from the tables, or nil
    /// where the user is gone.
    func rangeHistories(of streaks: [DueStreak]) throws -> [DueHistory?] {
        guard let first = streaks.first?.user, let last = streaks.last?.user else { return [] }
        // The ids as bytes, once: streak i's user is text 2i, its name text 2i + 1.
        var ids = PackedTexts(reservingTexts: 2 * streaks.count, bytes: 16 * streaks.count)
        for s in streaks {
            ids.append(s.user)
            ids.append(s.streak)
        }
        return try ids.withTexts { ids in
            var strings = InternedStrings()  // zones and languages repeat
            // Each user and their zone changes, at the place of their first streak.
            var users = [User?](repeating: nil, count: streaks.count)
            var zones = [[StoredZoneChange]](repeating: [], count: streaks.count)
            var match = StreakMatch(ids)
            let userRows = try range(
                "SELECT \(Self.userColumns) FROM users INDEXED BY users_lookup", by: "id", first, last)
            try userRows.rows {
                guard let i = match.user(userRows.bytes(0)) else { return }
                users[i] = Self.user(
                    userRows, id: streaks[i].user, zone: userRows.text(1, interning: &strings),
                    language: userRows.optionalText(4, interning: &strings))
            }
            match = StreakMatch(ids)
            let zoneRows = try range("SELECT user_id, since, zone FROM user_zones", first, last, "since")
            try zoneRows.rows {
                guard let i = match.user(zoneRows.bytes(0)) else { return }
                zones[i].append(
                    StoredZoneChange(
                        since: Instant(seconds: zoneRows.int64(1)), zone: zoneRows.text(2, interning: &strings)))
            }
            var histories = [DueHistory?](repeating: nil, count: streaks.count)
            var firstOfUser = 0
            for (i, d) in streaks.enumerated() {
                if i > 0, d.user != streaks[i - 1].user { firstOfUser = i }
                guard let user = users[firstOfUser] else { continue }
                histories[i] = DueHistory(
                    user: user, stored: StoredStreak(user: user, zones: zones[firstOfUser], streak: d.streak),
                    fromCopy: false)
            }
            users = []
            zones = []
            // Check-ins and freeze events, each row to the streak it belongs to (rows of streaks
            // not asked for, within the range, are passed over).
            match = StreakMatch(ids)
            var gathered: [StoredCheckin] = []  // the streak `at`'s, so far
            var at: Int?
            func flush() {
                guard let i = at else { return }
                histories[i]!.stored.checkins = gathered.withUnsafeBufferPointer { Array($0) }
                gathered.removeAll(keepingCapacity: true)
            }
            let checkins = try range(
                "SELECT user_id, streak, at, zone, event_id, stored_at FROM checkins", first, last, "streak, at")
            try checkins.rows {
                guard let i = match.streak(checkins.bytes(0), checkins.bytes(1)), histories[i] != nil else { return }
                if i != at {
                    flush()
                    at = i
                }
                gathered.append(
                    StoredCheckin(
                        instant: Instant(seconds: checkins.int64(2)), zone: checkins.text(3, interning: &strings),
                        eventID: checkins.optionalText(4), storedAt: Instant(seconds: checkins.int64(5))))
            }
            flush()
            match = StreakMatch(ids)
            let events = try range(
                "SELECT user_id, streak, at, kind, date, until_date, author FROM freeze_events", first, last,
                "streak, at, id")
            try events.rows {
                guard let i = match.streak(events.bytes(0), events.bytes(1)), histories[i] != nil else { return }
                histories[i]!.stored.freezeEvents.append(Self.freezeEvent(events, at: 2))
            }
            return histories
        }
    }

    /// Whether `count` streaks from `first` to `last` are at least 1 in `rangeSpread` of the
    /// streaks their users' range holds (counted up to that many: cheap either way): a range
    /// read then passes over few rows it does not keep.
    func rangeWorthReading(_ first: DueStreak, _ last: DueStreak, count: Int) throws -> Bool {
        let within =
            try Int.fetchOne(
                db, sql: "SELECT count(*) FROM (SELECT 1 FROM schedule WHERE user_id BETWEEN ? AND ? LIMIT ?)",
                arguments: [first.user, last.user, Self.rangeSpread * count]) ?? 0
        return within < Self.rangeSpread * count
    }

    /// A range read keeps at least 1 in this many of the streaks it passes: where reading each
    /// alone costs the same (BENCHMARKS.md, after "A day's sync").
    static let rangeSpread = 8

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

/// Rows in (user, streak) order matched against the streaks in the same order (`ids`: streak
/// i's user is text 2i, its name text 2i + 1): a cursor that only moves forward.
private struct StreakMatch {
    let ids: PackedTexts.Texts
    var at = 0

    init(_ ids: PackedTexts.Texts) { self.ids = ids }

    /// The place of the first streak of the user `user` names, if asked for; moves past those
    /// of users before it.
    mutating func user(_ user: UnsafeBufferPointer<UInt8>) -> Int? {
        while 2 * at < ids.count {
            let order = compareBytes(ids[2 * at], user)
            if order == 0 { return at }
            if order > 0 { return nil }  // a row of a user not asked for
            at += 1
        }
        return nil
    }

    /// The place of the streak (user, streak) names, if asked for; moves past those before it.
    mutating func streak(_ user: UnsafeBufferPointer<UInt8>, _ streak: UnsafeBufferPointer<UInt8>) -> Int? {
        while 2 * at < ids.count {
            let byUser = compareBytes(ids[2 * at], user)
            let order = byUser != 0 ? byUser : compareBytes(ids[2 * at + 1], streak)
            if order == 0 { return at }
            if order > 0 { return nil }  // a row of a streak not asked for
            at += 1
        }
        return nil
    }
}
