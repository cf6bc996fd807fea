import StreakCore
import StreakStore

extension Context {
    /// When a streak's next run is due, as of now (`state` is its history's at now): the first
    /// instant a run could find something due (`Notices.next`) or, for a simple history, the
    /// first notice `preview`'s walk finds (`Notices.firstDue`). The one place a tick's schedule
    /// depends on the preview walk agreeing with the engine (docs/ARCHITECTURE.md).
    func nextRun(_ history: StreakHistory, policy: NoticePolicy, state: StreakState) -> Instant? {
        Notices.firstDue(
            after: Notices.next(history, policy: policy, now: now, state: state), history, policy: policy, now: now)
    }

    /// Plans the runs of streaks this write changed (a check-in, an import), read as this
    /// transaction sees them, so `preview` finds them in the queue (`ScheduleWriting.planChanged`).
    /// They stay marked for the next tick.
    func planChanged(_ streaks: [DueStreak], in w: some HistoryReading & ScheduleReading & ScheduleWriting) throws {
        guard !streaks.isEmpty else { return }
        var epochs: [String: [SettingsEpoch]] = [:]
        let reminders = ReminderPolicy(days: config.reminderDays)
        var runs: [PlannedRun] = []
        for (d, read) in zip(streaks, try w.dueHistories(of: streaks)) {
            guard let read else { continue }
            if epochs[d.streak] == nil { epochs[d.streak] = try w.settingsEpochs(of: d.streak) }
            let history = try history(of: read.stored, epochs: epochs[d.streak]!)
            let policy = noticePolicy(for: read.user, reminders: reminders)
            let next = nextRun(history, policy: policy, state: Engine.evaluate(history, at: now))
            runs.append(PlannedRun(streak: d, next: next, history: read, user: read.user))
        }
        try w.planChanged(runs)
    }

    /// Plans every streak changed and not planned yet (what an import changed), a page at a time.
    func planUnplanned(in w: some HistoryReading & ScheduleReading & ScheduleWriting) throws {
        try w.eachUnplannedStreak(every: false) { try planChanged($0, in: w) }
    }
}
