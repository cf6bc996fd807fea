import StreakCore
import StreakStore

/// What a tick plans for a batch of due streaks: each streak's next run, and the notices due.
/// Sendable: a run may plan on one thread what it records on another.
struct TickPlan: Sendable {
    /// A notice and whether it is fresh enough to send (else it is recorded expired).
    typealias Found = (notification: Notification, fresh: Bool)

    var notices: [Found] = []
    /// For each notice, its streak's place in `runs`.
    var of: [Int] = []
    var runs: [PlannedRun] = []
}

extension Context {
    /// Works out what is due for a batch of streaks, reading each streak's user and history in
    /// `reader`, leaving out keys the ledger has (when `checkLedger`). A streak not marked changed
    /// is as the run that last handled it saw it, which found its settlements until then (the
    /// ledger has them): only later ones are looked at, unless `everySettlement` (the settings
    /// changed, and the dry run that shows it writes no mark).
    func plan(
        _ batch: some Collection<DueStreak>, _ reader: some HistoryReading & ScheduleReading & LedgerReading,
        checkLedger: Bool = true,
        everySettlement: Bool = false
    ) throws -> TickPlan {
        var plan = TickPlan()
        var epochs: [String: [SettingsEpoch]] = [:]
        let reminders = ReminderPolicy(days: config.reminderDays)
        let streaks = Array(batch)
        var changed: [Changed] = []
        for (d, read) in zip(streaks, try reader.dueHistories(of: streaks)) {
            guard let read else { continue }
            if epochs[d.streak] == nil { epochs[d.streak] = try reader.settingsEpochs(of: d.streak) }
            let found = try planStreak(
                d, read, epochs: epochs[d.streak]!, reminders: reminders, everySettlement: everySettlement)
            plan.notices += found.notices
            plan.of += repeatElement(plan.runs.count, count: found.notices.count)
            if d.marked {
                changed.append(
                    Changed(
                        user: read.user, run: plan.runs.count,
                        known: KnownStreak(streak: d.streak, history: found.history, state: found.state)))
            }
            plan.runs.append(found.run)
        }
        try planAchievements(changed, into: &plan, reader, epochs: &epochs)
        // The keys the ledger has, asked for the whole batch at once.
        if checkLedger && !plan.notices.isEmpty {
            let recorded = try reader.ledgerStates(keys: plan.notices.map(\.notification.key))
            let kept = plan.notices.indices.filter { recorded[plan.notices[$0].notification.key] == nil }
            plan.notices = kept.map { plan.notices[$0] }
            plan.of = kept.map { plan.of[$0] }
        }
        return plan
    }

    /// One streak: the notices a run now finds due for it, and its next run. Pure: the history is read.
    func planStreak(
        _ d: DueStreak, _ read: DueHistory, epochs: [SettingsEpoch], reminders: ReminderPolicy, everySettlement: Bool
    ) throws -> (notices: [TickPlan.Found], run: PlannedRun, history: StreakHistory, state: StreakState) {
        let history = try history(of: read.stored, epochs: epochs)
        let state = Engine.evaluate(history, at: now)
        let policy = noticePolicy(for: read.user, reminders: reminders)
        let found = Notices.due(
            history, policy: policy, since: d.handledThrough, now: now, state: state,
            settledThrough: d.marked || everySettlement ? nil : d.handledThrough)
        let notices = found.map {
            (
                notification: notification($0.notice, user: read.user, streak: d.streak, history: history),
                fresh: $0.fresh
            )
        }
        let next = nextRun(history, policy: policy, state: state)
        // A history read from the tables goes to the store to keep; a copy it kept needs no second look.
        return (
            notices, PlannedRun(streak: d, next: next, history: read.fromCopy ? nil : read, user: read.user), history,
            state
        )
    }
}
