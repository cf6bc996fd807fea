import StreakCore
import StreakStore

/// The single-record form these tests were written with.
extension LedgerWriting {
    func record(_ n: StreakCore.Notification, state: LedgerState, sinks: [String], owner: String?, at: Instant)
        throws -> Int64?
    {
        try record(NewRecord(n, state: state, sinks: sinks), owner: owner, at: at)
    }
}

/// The single-streak form these tests were written with.
extension ScheduleWriting {
    /// Claims a listed streak as a run at `handledThrough` would, and plans its next run; false,
    /// planning nothing, when it is not to be claimed (it changed since it was listed, or is gone).
    @discardableResult
    func schedule(_ streak: DueStreak, nextAt: Instant?, handledThrough: Instant, read: StoredStreak?) throws -> Bool {
        guard let claimed = try claim([streak], listed: nil, now: handledThrough)[0] else { return false }
        let history = read.map { DueHistory(user: User(id: $0.userID, zone: "UTC"), stored: $0, fromCopy: false) }
        try schedule([PlannedRun(streak: claimed, next: nextAt, history: history)], handledThrough: handledThrough)
        return true
    }
}
