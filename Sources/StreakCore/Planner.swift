/// Which streak lengths earn an `at_risk` reminder.
public struct ReminderPolicy: Sendable {
    public var days: Set<Int> { didSet { few = Self.bits(days) } }
    /// A bit for each of `days` below 64: most lengths asked about are, and a set hashes each.
    private var few: UInt64

    public init(days: [Int] = [5, 7, 14]) {
        self.days = Set(days)
        few = Self.bits(self.days)
    }

    /// Whether a streak of `length` days is reminded of (`days` names it).
    public func reminds(_ length: Int) -> Bool {
        (0..<64).contains(length) ? few >> UInt64(length) & 1 == 1 : days.contains(length)
    }

    private static func bits(_ days: Set<Int>) -> UInt64 {
        days.reduce(0) { (0..<64).contains($1) ? $0 | 1 << UInt64($1) : $0 }
    }
}

/// An `at_risk` reminder worked out ahead of time.
public struct PlannedReminder: Equatable, Sendable {
    /// The date at risk (T).
    public var date: LocalDate
    public var due: Instant
    /// The streak alive through T−1.
    public var length: Int
}

/// Works out `at_risk` reminders (SPEC §4) by evaluating the engine at their
/// due instants: no new check-ins, no refill.
public enum Planner {
    /// The `at_risk` for date T, if one is due: at `remindAt` seconds into T in
    /// the user's zone at `now`, not before T−1 ends, and before T ends.
    public static func atRisk(
        on date: LocalDate, history: StreakHistory, remindAt: Int, policy: ReminderPolicy, now: Instant,
        stateNow: StreakState
    ) -> PlannedReminder? {
        guard
            let due = Notices.reminderDue(
                of: date, remindAt: remindAt, zone: history.zone(at: now), leewayHours: history.settings.leewayHours)
        else { return nil }
        let state = due <= now ? stateNow : Engine.evaluate(history, at: due)
        guard state.today == date, !state.todaySafe, state.aliveBeforeToday >= 1,
            policy.reminds(state.aliveBeforeToday)
        else { return nil }
        return PlannedReminder(date: date, due: due, length: state.aliveBeforeToday)
    }

    /// The next `at_risk` due after `now`, however far ahead (SPEC §14: after a month's pause, a
    /// month away): a few dates that can be at risk (a streak kept by freezes can be at risk again
    /// the next day), with every rest day and paused date between them skipped. A simple history
    /// (`Notices.upcomingSimple`) is walked once for all of them; any other is evaluated at each
    /// date's due instant.
    public static func next(
        history: StreakHistory, remindAt: Int, policy: ReminderPolicy, now: Instant, stateNow: StreakState
    ) -> PlannedReminder? {
        // Only a due after `now` can be the next one: the dates before it need no look.
        let zone = history.zone(at: now)
        let dues = candidates(history: history, stateNow: stateNow).compactMap { date -> (LocalDate, Instant)? in
            Notices.reminderDue(of: date, remindAt: remindAt, zone: zone, leewayHours: history.settings.leewayHours)
                .flatMap { $0 > now ? (date, $0) : nil }
        }
        guard let through = dues.map(\.1).max() else { return nil }
        if let notices = Notices.upcomingSimple(
            history, policy: NoticePolicy(remindAt: remindAt, reminders: policy), from: now, through: through)
        {
            let first = notices.first { n in n.kind == .atRisk && dues.contains { $0.0 == n.date } }
            return first.map { PlannedReminder(date: $0.date, due: $0.due, length: $0.length) }
        }
        return nextEvaluating(
            dues.map(\.0), history: history, remindAt: remindAt, policy: policy, now: now, stateNow: stateNow)
    }

    /// `next` by the engine: each of `dates` evaluated at its due instant, the first at risk.
    static func nextEvaluating(
        _ dates: [LocalDate], history: StreakHistory, remindAt: Int, policy: ReminderPolicy, now: Instant,
        stateNow: StreakState
    ) -> PlannedReminder? {
        for date in dates {
            if let r = atRisk(
                on: date, history: history, remindAt: remindAt, policy: policy, now: now, stateNow: stateNow),
                r.due > now
            {
                return r
            }
        }
        return nil
    }

    /// The dates `next` looks at, in order: today, then up to `min(freezes, 6) + 2` more that
    /// are neither rest days nor paused.
    static func candidates(history: StreakHistory, stateNow: StreakState) -> [LocalDate] {
        var left = min(stateNow.freezes, 6) + 3
        let pauses = history.pauses
        let rest = history.settings.restDays
        var date = stateNow.today
        var result: [LocalDate] = []
        // Bounded: a pause is at most a year of dates, and rest days leave one a week at least
        // (seven rest days bridge every date: no reminder ever).
        while left > 0 && date <= stateNow.today + 800 {
            defer { date = date + 1 }
            if date > stateNow.today && (rest.contains(date) || pauses.contains { $0.contains(date) }) { continue }
            left -= 1
            result.append(date)
        }
        return result
    }
}

/// The 30-day refill rule of SPEC §3.
public enum Refill {
    public static let interval: Int64 = 720 * Instant.hour

    /// When the next refill may add a freeze: 30 days after the last refill,
    /// or after the first check-in was stored if there was none.
    public static func nextEligible(lastRefill: Instant?, firstStored: Instant?) -> Instant? {
        (lastRefill ?? firstStored).map { $0 + interval }
    }

    public static func isDue(lastRefill: Instant?, firstStored: Instant?, now: Instant) -> Bool {
        guard let next = nextEligible(lastRefill: lastRefill, firstStored: firstStored) else { return false }
        return now >= next
    }

    /// The freeze count after a refill: one more, up to the maximum.
    public static func apply(freezes: Int, max: Int) -> Int { Swift.min(max, freezes + 1) }
}
