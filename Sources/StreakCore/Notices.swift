/// A notification the rules call for (SPEC §4), before anyone delivers it.
public struct Notice: Equatable, Sendable {
    public var kind: NotificationKind
    /// The date it is about: the date at risk, the missed date, or the refill's date.
    public var date: LocalDate
    public var due: Instant
    /// The streak the notice is about (at risk, kept, lost).
    public var length: Int
    /// Check-ins attributed to `date` and the goal, for goal-based messages.
    public var count: Int
    public var goal: Int
    /// Freezes left when it is due.
    public var freezes: Int

    public init(
        kind: NotificationKind, date: LocalDate, due: Instant, length: Int, count: Int = 0, goal: Int = 1, freezes: Int
    ) {
        self.kind = kind
        self.date = date
        self.due = due
        self.length = length
        self.count = count
        self.goal = goal
        self.freezes = freezes
    }

    /// Day ends come before reminders at one instant (SPEC §3).
    public static func dueOrder(_ a: Notice, _ b: Notice) -> Bool {
        if a.due != b.due { return a.due < b.due }
        return (a.kind == .atRisk ? 1 : 0) < (b.kind == .atRisk ? 1 : 0)
    }
}

/// What decides which notices are due for one (user, streak).
public struct NoticePolicy: Sendable {
    /// Seconds after local midnight of the `at_risk` reminder; nil: no reminders.
    public var remindAt: Int?
    public var reminders: ReminderPolicy
    /// If set, an `at_risk` is fresh only this long after its due instant (else until its date ends).
    public var maxLate: Int64?
    /// A `freeze_used` or `streak_broken` is fresh this long after the missed date ended.
    public static let settlementWindow: Int64 = 24 * Instant.hour

    public init(remindAt: Int?, reminders: ReminderPolicy = ReminderPolicy(), maxLate: Int64? = nil) {
        self.remindAt = remindAt
        self.reminders = reminders
        self.maxLate = maxLate
    }
}

/// The notices of one (user, streak): what `preview` announces and what `tick` sends. Pure.
public enum Notices {
    /// A notice a run at some instant found due, and whether it is still fresh enough to send.
    public struct Found: Equatable, Sendable {
        public var notice: Notice
        public var fresh: Bool
    }

    /// The `at_risk` due instant of date T in `zone` (SPEC §4): T at the reminder time (gaps move
    /// forward, folds take the first occurrence), not before T−1 ends; nil when at or after T ends.
    public static func reminderDue(of date: LocalDate, remindAt: Int, zone: Zone, leewayHours: Int) -> Instant? {
        let leeway = Int64(leewayHours) * Instant.hour
        let due = max(zone.instant(of: date, secondsIntoDay: remindAt), zone.start(of: date) + leeway)
        return due < zone.start(of: date + 1) + leeway ? due : nil
    }

    /// Everything due after `from` and at or before `through`, assuming no new check-ins and no
    /// refill, in due order (`preview`).
    public static func upcoming(
        _ history: StreakHistory, policy: NoticePolicy, from: Instant, through: Instant
    ) -> [Notice] {
        guard through > from else { return [] }
        let end = Engine.evaluate(history, at: through)
        var result = end.settlements.filter { $0.at > from && $0.at <= through }.map {
            settlementNotice($0)
        }
        if let remindAt = policy.remindAt {
            result += reminders(history, remindAt: remindAt, policy: policy, from: from, through: through, end: end)
        }
        return result.sorted(by: Notice.dueOrder)
    }

    /// The `at_risk`s due after `from` and by `through` (`end` is the state at `through`).
    static func reminders(
        _ history: StreakHistory, remindAt: Int, policy: NoticePolicy, from: Instant, through: Instant,
        end: StreakState
    ) -> [Notice] {
        let start = Engine.evaluate(history, at: from)
        // Without new check-ins a streak's length at risk can only be today's or the current one.
        let days = policy.reminders
        guard days.reminds(start.aliveBeforeToday) || days.reminds(start.current) else { return [] }
        let zone = history.zone(at: from)
        // Check-ins count up to 5 minutes ahead of an instant: after this, none is left to come.
        let lastCheckin = history.checkins.map(\.instant).max().map { $0 + 600 }
        var result: [Notice] = []
        var date = start.today
        while date <= end.today + 1 {
            defer { date = date + 1 }
            guard
                let due = reminderDue(
                    of: date, remindAt: remindAt, zone: zone, leewayHours: history.settings.leewayHours),
                due > from, due <= through
            else { continue }
            let state = Engine.evaluate(history, at: due)
            if let n = atRisk(date, due: due, state: state, policy: policy) { result.append(n) }
            // A streak gone (nothing alive before today, nothing today) with no check-in left to come
            // stays gone: no later date is at risk. Each evaluation walks the whole history, so
            // going on to the horizon made a year's preview quadratic (docs/ARCHITECTURE.md, "preview's horizon").
            if state.aliveBeforeToday == 0 && state.current == 0 && lastCheckin.map({ $0 <= due }) ?? true { break }
        }
        return result
    }

    /// What a run at `now` finds due: every settlement so far (the ledger drops those it has), and
    /// the `at_risk`s due after `since` (the previous run; nil for none) and by `now`. The
    /// condition of a fresh `at_risk` is checked as of `now`: a user who checked in gets nothing.
    /// `settledThrough`: a run at that instant saw this same history (nothing changed since), so
    /// it found the settlements up to then: only later ones are found (nil: every one).
    public static func due(
        _ history: StreakHistory, policy: NoticePolicy, since: Instant?, now: Instant, state: StreakState,
        settledThrough: Instant? = nil
    ) -> [Found] {
        let settled = settledThrough ?? .init(seconds: .min)
        var result = state.settlements.filter { $0.at > settled }.map { s in
            Found(
                notice: settlementNotice(s),
                fresh: now <= s.at + NoticePolicy.settlementWindow)
        }
        if let remindAt = policy.remindAt {
            let zone = history.zone(at: now)
            let leewayHours = history.settings.leewayHours
            // Without an earlier run, only dates still open can be at risk.
            var date = since.map { max(zone.date(of: $0) - 1, state.today - 400) } ?? state.endedThrough + 1
            while date <= state.today {
                defer { date = date + 1 }
                guard
                    let due = reminderDue(of: date, remindAt: remindAt, zone: zone, leewayHours: leewayHours),
                    due <= now, since.map({ due > $0 }) ?? true
                else { continue }
                if date > state.endedThrough {
                    if let n = atRiskOpen(date, due: due, state: state, policy: policy) {
                        result.append(Found(notice: n, fresh: policy.maxLate.map { now <= due + $0 } ?? true))
                    }
                } else if let n = atRisk(date, due: due, state: Engine.evaluate(history, at: due), policy: policy) {
                    result.append(Found(notice: n, fresh: false))
                }
            }
        }
        return result.sorted { Notice.dueOrder($0.notice, $1.notice) }
    }

    /// The first instant after `now` at which a run could find something due, assuming no new
    /// check-ins: the next day end while a streak is alive, or an `at_risk` due before it. Nil:
    /// nothing until something changes (a check-in, a freeze, a zone, the configuration). It costs
    /// no further evaluation: a later `at_risk` comes after the next day end, when a run looks again.
    public static func next(_ history: StreakHistory, policy: NoticePolicy, now: Instant, state: StreakState)
        -> Instant?
    {
        var candidates: [Instant] = []
        if state.current >= 1 || state.aliveBeforeToday >= 1 { candidates.append(state.nextEnd) }
        if let remindAt = policy.remindAt {
            let zone = history.zone(at: now)
            var date = state.endedThrough + 1
            while date <= state.today {
                if let due = reminderDue(
                    of: date, remindAt: remindAt, zone: zone, leewayHours: history.settings.leewayHours),
                    due > now, atRiskOpen(date, due: due, state: state, policy: policy) != nil
                {
                    candidates.append(due)
                }
                date = date + 1
            }
        }
        return candidates.min()
    }

    /// The `at_risk` for T evaluated at its due instant (T is "today" then).
    static func atRisk(_ date: LocalDate, due: Instant, state: StreakState, policy: NoticePolicy) -> Notice? {
        guard state.today == date else { return nil }
        return atRiskOpen(date, due: due, state: state, policy: policy)
    }

    /// The `at_risk` for an open date T ≤ today, as of the state's instant.
    static func atRiskOpen(_ date: LocalDate, due: Instant, state: StreakState, policy: NoticePolicy) -> Notice? {
        let mark = state.marks[date]
        guard mark != .qualifying, mark != .frozen, mark != .rest, mark != .paused, mark != .repaired else { return nil }
        if date == state.today && state.todaySafe { return nil }
        let length = state.aliveBefore(date)
        guard length >= 1, policy.reminders.reminds(length) else { return nil }
        let count = date == state.today ? state.todayCount : 0
        return Notice(
            kind: .atRisk, date: date, due: due, length: length, count: count, goal: state.goal,
            freezes: state.freezes)
    }

    static func settlementNotice(_ s: Settlement) -> Notice {
        let kind: NotificationKind =
            switch s.kind {
            case .freezeUsed: .freezeUsed
            case .streakBroken: .streakBroken
            case .streakRepaired: .streakRepaired
            }
        return Notice(kind: kind, date: s.date, due: s.at, length: s.length, freezes: s.freezesLeft)
    }
}
