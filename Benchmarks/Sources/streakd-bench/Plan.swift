import Foundation
import StreakCore
import StreakJobs
import StreakSQLite
import StreakStore

/// Planning: each user's next reminder instant strictly after `now`, and the
/// users due in one quarter hour, with StreakCore's `Notices.reminderDue` (the
/// function `tick` and `preview` use) over the TZif transition tables.
struct Planning {
    /// Users as planning needs them: a zone (interned) and a reminder time.
    struct Users {
        var zones: [Zone] = []
        var zoneOf: [Int32] = []
        var remindAt: [Int32] = []
    }

    static func load(store: String, now: Instant) throws -> Users {
        let book = ZoneBook(around: now)
        var out = Users()
        var index: [String: Int32] = [:]
        let users = try SQLiteStore(path: store).read { try $0.users() }
        out.zoneOf.reserveCapacity(users.count)
        out.remindAt.reserveCapacity(users.count)
        for u in users {
            var z = index[u.zone]
            if z == nil {
                z = Int32(out.zones.count)
                index[u.zone] = z
                out.zones.append(try book.stored(u.zone))
            }
            out.zoneOf.append(z!)
            out.remindAt.append(Int32(u.remindAt))
        }
        return out
    }

    struct Result {
        var due = 0
        var checksum: Int64 = 0
    }

    /// Users `range` of `users`: the next reminder of each, and whether it falls in the quarter.
    static func plan(_ users: Users, _ range: Range<Int>, now: Instant, quarter: Instant) -> Result {
        var r = Result()
        let end = quarter + 15 * 60
        for u in range {
            let zone = users.zones[Int(users.zoneOf[u])]
            let remind = Int(users.remindAt[u])
            var date = zone.date(of: now)
            var next = Notices.reminderDue(of: date, remindAt: remind, zone: zone, leewayHours: 0)
            while next == nil || next! <= now {
                date = date + 1
                next = Notices.reminderDue(of: date, remindAt: remind, zone: zone, leewayHours: 0)
            }
            if next! >= quarter && next! < end { r.due += 1 }
            r.checksum &+= next!.seconds
        }
        return r
    }

    /// The same on `threads` threads, each over a contiguous share of the users.
    static func plan(_ users: Users, threads: Int, now: Instant, quarter: Instant) -> Result {
        let n = users.zoneOf.count
        if threads == 1 { return plan(users, 0..<n, now: now, quarter: quarter) }
        let results = Locked<[Result]>([])
        DispatchQueue.concurrentPerform(iterations: threads) { t in
            let r = plan(users, (n * t / threads)..<(n * (t + 1) / threads), now: now, quarter: quarter)
            results.update { $0.append(r) }
        }
        return results.value.reduce(into: Result()) {
            $0.due += $1.due
            $0.checksum &+= $1.checksum
        }
    }
}
