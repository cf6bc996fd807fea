import StreakCore
import StreakStore

/// What planning the streaks a write changed touches: their histories, the schedule, and the
/// notice settings' fingerprint the runs are planned by.
typealias PlanWriting = HistoryReading & ScheduleReading & ScheduleWriting & MetaReading & MetaWriting

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
    /// They stay marked for the next tick. Returns the histories it read, in the order of `streaks`
    /// (nil: gone), for a caller that shows them (a check-in's answer).
    @discardableResult
    func planChanged(_ streaks: [DueStreak], in w: some PlanWriting) throws -> [DueHistory?] {
        guard !streaks.isEmpty else { return [] }
        // A store no run has planned yet takes these settings as the ones its runs were planned
        // by; a store whose settings differ keeps its fingerprint, and preview plans every streak
        // until the next tick plans them all again.
        if try w.meta(MetaKey.noticeSettings) == nil { try w.setMeta(MetaKey.noticeSettings, noticeFingerprint) }
        var epochs: [String: [SettingsEpoch]] = [:]
        let reminders = ReminderPolicy(days: config.reminderDays)
        var runs: [PlannedRun] = []
        var walk = SimpleFirstNotice(context: self)
        let histories = try w.dueHistories(of: streaks)
        for (d, read) in zip(streaks, histories) {
            guard let read else { continue }
            if epochs[d.streak] == nil { epochs[d.streak] = try w.settingsEpochs(of: d.streak) }
            let policy = noticePolicy(for: read.user, reminders: reminders)
            let next: Instant?
            if let first = try walk.first(read.stored, epochs: epochs[d.streak]!, policy: policy) {
                next = first
            } else {
                let history = try history(of: read.stored, epochs: epochs[d.streak]!)
                next = nextRun(history, policy: policy, state: Engine.evaluate(history, at: now))
            }
            runs.append(PlannedRun(streak: d, next: next, history: read, user: read.user))
        }
        try w.planChanged(runs)
        return histories
    }

    /// Plans every streak changed and not planned yet (what an import changed), when they are
    /// at most `planUnplannedLimit`: planning reads each one's history, some microseconds a
    /// streak, which doubles the import of a million new streaks. Beyond, they stay unplanned and
    /// the next tick plans them; `preview` meanwhile plans them from their histories.
    func planUnplanned(in w: some PlanWriting) throws {
        var pending: [[DueStreak]] = []
        var count = 0
        do {
            try w.eachUnplannedStreak(every: false) { page in
                count += page.count
                guard count <= Self.planUnplannedLimit else { throw TooManyToPlan() }
                pending.append(page)
            }
        } catch is TooManyToPlan {
            return
        }
        for page in pending { try planChanged(page, in: w) }
    }

    /// The most changed streaks a write plans at once (an import's daily sync of many users, not
    /// a first import of a million).
    static let planUnplannedLimit = 65_536
}

/// A simple history's first notice after now, by preview's walk, without the engine: what
/// `Context.nextRun` answers for it whenever that notice is within `Notices.firstDueHorizon` of
/// now (the walk's window then holds it); nil otherwise, and for any other history (the engine
/// decides then). An import plans a million changed streaks so.
struct SimpleFirstNotice {
    let context: Context
    private var zones: [String: Zone] = [:]
    private var instants: [Instant] = []
    private var notices: [Notice] = []

    init(context: Context) { self.context = context }

    mutating func first(_ stored: StoredStreak, epochs: [SettingsEpoch], policy: NoticePolicy) throws -> Instant? {
        let s = context.config.settings(for: stored.streak)
        let (now, name) = (context.now, stored.zones[0].zone)
        instants.removeAll(keepingCapacity: true)
        guard SimpleHistory.settings(s, epochs: epochs),
            let pauses = SimpleHistory.pauses(
                zones: stored.zones.count, events: stored.freezeEvents, checkins: stored.checkins,
                cap: Int64(context.config.backfillDays) * Instant.day, latest: now + Engine.clockSkew,
                into: &instants, { ($0.instant, $0.storedAt, $0.zone == name) })
        else { return nil }
        let zone = try zones[name] ?? context.zones.stored(name)
        zones[name] = zone
        notices.removeAll(keepingCapacity: true)
        let simple = instants.withUnsafeMutableBufferPointer {
            Notices.upcoming(
                zone: zone, instants: $0, freeze: s.freeze, rest: s.restDays, pauses: pauses, policy: policy,
                from: now, through: now + Notices.firstDueHorizon, into: &notices)
        }
        return simple ? notices.first?.due : nil
    }
}

/// More changed streaks than a write plans at once.
private struct TooManyToPlan: Error {}
