import Foundation
import StreakCore
import StreakJobs
import StreakRecompute
import StreakSQLite
import StreakStore

/// Streak recomputation from full history: every (user, streak) of the schedule, its whole
/// history packed by the run that last read it (stale ones read from the tables), its current
/// and longest streak as of `now` by `Context.streakTotals` (exactly `Engine.evaluate`'s), on
/// `threads` threads that each take a part of the rows over their own connection.
struct Recomputation {
    let store: String
    let now: Instant

    func run(threads: Int) throws -> StreakTotals {
        let results = Locked<[Result<StreakTotals, any Error>]>([])
        let zones = ZoneBook(around: now)  // one per run, shared: each zone is read once
        DispatchQueue.concurrentPerform(iterations: threads) { i in
            let r = Result {
                let opened = try SQLiteStore(path: store)
                let context = Context(
                    store: opened, config: Config(), now: now, zones: zones, printer: .standard(format: .short))
                return try context.streakTotals(in: opened, part: i, of: threads)
            }
            results.update { $0.append(r) }
        }
        var total = StreakTotals()
        for r in results.value { total.add(try r.get()) }
        return total
    }
}

/// A value shared between threads behind a lock.
final class Locked<T>: @unchecked Sendable {
    private var stored: T
    private let lock = NSLock()
    init(_ value: T) { stored = value }
    var value: T { lock.withLock { stored } }
    func update(_ body: (inout T) -> Void) { lock.withLock { body(&stored) } }
}
