import Foundation
import StreakCore
import StreakJobs

/// The benchmark's data set, the same for the same seed and tzdata: users over
/// every zone with realistic reminder times, and their check-ins as runs of
/// days ending today, yesterday or some days ago, in chronological order.
///
/// `atRisk`: an evening when most streaks are at risk instead: each user's run is 5, 7 or 14 days
/// (the lengths `reminders.days` names) ending yesterday, none missed, so tonight's `at_risk` and
/// the day end after it (a freeze used) are both due in the next 24 hours: two notices a user.
///
/// Files: users.csv (`user,tz,remind_at`), users.jsonl (`streakd user import`),
/// checkins.csv (`user,at`, `at` at the user's local offset), checkins.jsonl (the same rows as
/// JSON lines, `{"user":…,"at":…}`), meta.json.
struct DataSet {
    var users = 1_000_000
    var checkins = 7_000_000
    var seed: UInt64 = 2026
    var atRisk = false
    /// Check-ins all happened before this instant; the catch-up tick runs here.
    var importNow = RFC3339.parse("2026-11-21T18:45:00Z")!
    /// Planning: each user's next reminder strictly after `planNow`, and the
    /// users due in the quarter hour `[quarterStart, quarterStart + 15 min)`.
    var planNow = RFC3339.parse("2026-11-21T18:59:00Z")!
    var quarterStart = RFC3339.parse("2026-11-21T19:00:00Z")!
    /// The busy tick (20:00 in every UTC+1 zone) and a tick with nothing due.
    var busyTick = RFC3339.parse("2026-11-21T19:00:00Z")!
    var quietTick = RFC3339.parse("2026-11-21T19:01:00Z")!

    static let reminderTimes: [(Int, Int)] = [
        (55, 20 * 60), (10, 21 * 60), (8, 19 * 60), (5, 20 * 60 + 30), (5, 7 * 60), (5, 8 * 60),
        (4, 22 * 60), (3, 18 * 60), (5, -1),  // -1: any quarter hour from 06:00 to 23:45
    ]

    struct Row {
        var at: Int64
        var user: Int32
    }

    func write(to dir: String) throws {
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        let book = ZoneBook()
        let names = book.names()
        let zones = try names.map { try book.stored($0) }
        var rng = SplitMix64(seed: seed)
        var zoneOf = [Int32](repeating: 0, count: users)
        var remindOf = [Int32](repeating: 0, count: users)
        var count = [Int32](repeating: 0, count: users)
        for u in 0..<users {
            zoneOf[u] = Int32(rng.below(zones.count))
            let minute = rng.pick(Self.reminderTimes)
            remindOf[u] = Int32(minute >= 0 ? minute : 6 * 60 + 15 * rng.below(72))
            count[u] = Int32(atRisk ? rng.pick([(40, 5), (40, 7), (20, 14)]) : 1 + rng.below(13))
        }
        if !atRisk { balance(&count, to: checkins) }
        var rows: [Row] = []
        rows.reserveCapacity(atRisk ? users * 14 : checkins)
        for u in 0..<users {
            history(user: u, zone: zones[Int(zoneOf[u])], count: Int(count[u]), rng: &rng, into: &rows)
        }
        rows.sort { ($0.at, $0.user) < ($1.at, $1.user) }
        var out = Output(path: dir + "/users.csv")
        out.line("user,tz,remind_at")
        var json = Output(path: dir + "/users.jsonl")
        for u in 0..<users {
            let id = Self.id(u)
            let tz = names[Int(zoneOf[u])]
            let at = Digits2.hhmm(Int(remindOf[u]))
            out.line("\(id),\(tz),\(at)")
            json.line("{\"user\":\"\(id)\",\"tz\":\"\(tz)\",\"remind_at\":\"\(at)\"}")
        }
        try out.close()
        try json.close()
        // The same rows twice: as CSV and as JSON lines (`import` of each beside sqlite3's CSV).
        var csv = Output(path: dir + "/checkins.csv")
        var lines = Output(path: dir + "/checkins.jsonl")
        csv.line("user,at")
        for r in rows {
            let zone = zones[Int(zoneOf[Int(r.user)])]
            let instant = Instant(seconds: r.at)
            let (id, at) = (Self.id(Int(r.user)), RFC3339.format(instant, offset: zone.offset(at: instant)))
            csv.line(id + "," + at)
            lines.line(#"{"user":""# + id + #"","at":""# + at + #""}"#)
        }
        try csv.close()
        try lines.close()
        let meta: [String: Any] = [
            "users": users, "checkins": rows.count, "zones": names.count, "seed": seed, "shape": atRisk ? "at-risk" : "usual",
            "import_now": "\(importNow)", "now": "\(planNow)", "quarter_start": "\(quarterStart)",
            "quarter_end": "\(quarterStart + 15 * 60)", "busy_tick": "\(busyTick)", "quiet_tick": "\(quietTick)",
        ]
        let data = try JSONSerialization.data(withJSONObject: meta, options: [.sortedKeys, .prettyPrinted])
        try data.write(to: URL(fileURLWithPath: dir + "/meta.json"))
    }

    /// One user's check-ins: a run of days ending today (if the day has begun),
    /// yesterday or up to ten days ago, walking back with an occasional missed day.
    func history(user: Int, zone: Zone, count: Int, rng: inout SplitMix64, into rows: inout [Row]) {
        let today = zone.date(of: importNow)
        let localNow = Int(importNow.seconds + Int64(zone.offset(at: importNow)) - Int64(today.day) * Instant.day)
        let far = 2 + rng.below(9)
        var end = atRisk ? 1 : rng.pick([(40, 0), (35, 1), (25, far)])
        if end == 0 && localNow < 7 * 3600 { end = 1 }
        var date = today - end
        for _ in 0..<count {
            let latest = date == today ? localNow - 60 : 23 * 3600
            let second = 6 * 3600 + rng.below(latest - 6 * 3600)
            var at = zone.instant(of: date, secondsIntoDay: second)
            if at >= importNow { at = importNow - 3600 }
            rows.append(Row(at: at.seconds, user: Int32(user)))
            date = date - (!atRisk && rng.below(10) == 0 ? 2 : 1)
        }
    }

    /// Adjusts per-user counts (each kept in 1...14) so they add up to `total`.
    func balance(_ count: inout [Int32], to total: Int) {
        var diff = total - count.reduce(0) { $0 + Int($1) }
        var u = 0
        while diff != 0 {
            if diff > 0, count[u] < 14 {
                count[u] += 1
                diff -= 1
            } else if diff < 0, count[u] > 1 {
                count[u] -= 1
                diff += 1
            }
            u = (u + 1) % count.count
        }
    }

    static func id(_ u: Int) -> String {
        let digits = String(u)
        return "u" + String(repeating: "0", count: max(0, 7 - digits.count)) + digits
    }
}

enum Digits2 {
    static func hhmm(_ minutes: Int) -> String {
        let h = minutes / 60
        let m = minutes % 60
        return (h < 10 ? "0" : "") + String(h) + ":" + (m < 10 ? "0" : "") + String(m)
    }
}

/// A buffered text file writer.
struct Output {
    let path: String
    var buffer: [UInt8] = []
    var handle: FileHandle?

    init(path: String) {
        self.path = path
        _ = FileManager.default.createFile(atPath: path, contents: nil)
        handle = FileHandle(forWritingAtPath: path)
        buffer.reserveCapacity(1 << 20)
    }

    mutating func line(_ s: String) {
        buffer.append(contentsOf: s.utf8)
        buffer.append(10)
        if buffer.count >= 1 << 20 { flush() }
    }

    mutating func flush() {
        handle?.write(Data(buffer))
        buffer.removeAll(keepingCapacity: true)
    }

    mutating func close() throws {
        flush()
        try handle?.close()
    }
}
