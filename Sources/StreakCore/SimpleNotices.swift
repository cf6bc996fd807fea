/// `Notices.upcoming` without the engine, for the histories most streaks have: `preview` over a
/// million streaks evaluated each one three or four times (at the window's start and end, and
/// at each reminder), and that was most of its time. `SimpleNoticesTests` proves the two equal.
extension Notices {
    /// What `upcoming(_:policy:from:through:)` answers, for a simple history: the user has always
    /// been in `zone`, the goal is one check-in a day with no leeway and the rest days `rest` (now
    /// and in every epoch), no event was ever recorded but the pauses `pauses` (the kept ones:
    /// `FreezeEvent.pausedDates`, in any order), and `instants` are the check-ins that count
    /// (within the backfill cap, all in `zone`, none later than `from` plus the clock skew, so
    /// every instant of the window counts the same ones), in any order (sorted here). Appends to
    /// `result` and answers true; false, appending nothing, when a later check-in falls on an
    /// earlier date (a clock set back over midnight): the engine then.
    public static func upcoming(
        zone: Zone, instants: UnsafeMutableBufferPointer<Instant>, freeze: FreezeSettings, rest: RestDays,
        pauses: [DateSpan], policy: NoticePolicy, from: Instant, through: Instant, into result: inout [Notice]
    ) -> Bool {
        guard through > from, !instants.isEmpty else { return true }
        var instants = instants
        if zip(instants, instants.dropFirst()).contains(where: { $0 > $1 }) { instants.sort() }
        return withUnsafeTemporaryAllocation(of: LocalDate.self, capacity: instants.count) { dates in
            withUnsafeTemporaryAllocation(of: Instant.self, capacity: instants.count) { firsts in
                var walk = SimpleWalk(zone: zone, freeze: freeze, rest: rest, pauses: pauses)
                guard walk.dates(of: instants, into: dates, firsts: firsts) else { return false }
                walk.upcoming(policy: policy, from: from, through: through, into: &result)
                return true
            }
        }
    }
}

extension Notices {
    /// `upcoming(_:policy:from:through:)` by the simple walk when `history` is simple (see
    /// `upcoming(zone:instants:…)`); nil when it is not, or a date goes backwards.
    public static func upcomingSimple(_ history: StreakHistory, policy: NoticePolicy, from: Instant, through: Instant)
        -> [Notice]?
    {
        var instants: [Instant] = []
        guard SimpleHistory.settings(history.settings, epochs: history.epochs), let zone = history.zones.first?.zone,
            let pauses = SimpleHistory.pauses(
                zones: history.zones.count, events: history.freezeEvents, checkins: history.checkins,
                cap: Int64(history.backfillDays) * Instant.day, latest: from + Engine.clockSkew, into: &instants,
                { ($0.instant, $0.storedAt, $0.zone.identifier == zone.identifier) })
        else { return nil }
        var result: [Notice] = []
        let simple = instants.withUnsafeMutableBufferPointer {
            upcoming(
                zone: zone, instants: $0, freeze: history.settings.freeze, rest: history.settings.restDays,
                pauses: pauses, policy: policy, from: from, through: through, into: &result)
        }
        return simple ? result : nil
    }
}

extension SettingsEpoch {
    /// Whether dates of this epoch walk as a simple history with rest days `rest` does: goal 1,
    /// no leeway, the same rest days.
    public func isSimple(rest: RestDays) -> Bool { goal == 1 && leewayHours == 0 && restDays == rest }
}

extension Notices {
    /// How far a streak's first notice is looked for (`firstDue`).
    public static let firstDueHorizon = 8 * Instant.day

    /// When a streak's next run is due: `earliest` (`next`, the first instant a run could find
    /// something) or, for a simple history, the first instant one will, as `preview` lists it
    /// (`upcomingSimple`, within `firstDueHorizon` after `earliest`; nothing new is assumed, and
    /// every change marks the streak, which plans it again). A run at the end of a day that
    /// qualified finds nothing: a third of the runs at a million users were such. Nil when
    /// nothing can come.
    public static func firstDue(after earliest: Instant?, _ history: StreakHistory, policy: NoticePolicy, now: Instant)
        -> Instant?
    {
        guard let earliest,
            let first = upcomingSimple(history, policy: policy, from: now, through: earliest + firstDueHorizon)?.first
        else { return earliest }
        return first.due
    }
}

/// The engine's walk over ended dates (`Engine.evaluate`) for a simple history, with the state
/// it would answer at any instant of the window read off the one walk.
private struct SimpleWalk {
    let zone: Zone
    let freeze: FreezeSettings
    /// Weekdays and paused dates, bridged when they do not qualify: neither missed nor counted,
    /// no `at_risk`.
    let rest: RestDays
    let pauses: [DateSpan]
    /// Each date with a check-in, in order, and the instant that first made it qualify.
    var dates: UnsafeMutableBufferPointer<LocalDate> = .init(start: nil, count: 0)
    var firsts: UnsafeMutableBufferPointer<Instant> = .init(start: nil, count: 0)

    // The walk so far: every date through `ended` has ended.
    var ended = LocalDate(day: 0)
    var run = 0
    var freezes = 0
    /// The first date with a check-in not walked yet, and the first qualifying instant not passed.
    var next = 0
    var q = 0
    var latestQualified: LocalDate?

    init(zone: Zone, freeze: FreezeSettings, rest: RestDays, pauses: [DateSpan]) {
        self.zone = zone
        self.freeze = freeze
        self.rest = rest
        self.pauses = pauses
        freezes = freeze.initial
    }

    /// Fills `dates` and `firsts` from sorted instants; false when a date goes backwards.
    mutating func dates(
        of instants: UnsafeMutableBufferPointer<Instant>, into dates: UnsafeMutableBufferPointer<LocalDate>,
        firsts: UnsafeMutableBufferPointer<Instant>
    ) -> Bool {
        var count = 0
        for t in instants {
            let d = zone.date(of: t)
            if count > 0 && d <= dates[count - 1] {
                if d == dates[count - 1] { continue }
                return false
            }
            dates[count] = d
            firsts[count] = t
            count += 1
        }
        self.dates = UnsafeMutableBufferPointer(rebasing: dates[..<count])
        self.firsts = UnsafeMutableBufferPointer(rebasing: firsts[..<count])
        // The engine walks from two days before the first check-in.
        let start = instants[0] - 2 * Instant.day
        ended = zone.date(of: start) - 1
        while zone.start(of: ended + 1) > start { ended = ended - 1 }
        return true
    }

    /// Settles every date that ends by `t` (a date ends when the next one starts), appending the
    /// settlements after `from` to `result`.
    mutating func advance(to t: Instant, from: Instant, into result: inout [Notice]) {
        while true {
            let end = zone.start(of: ended + 2)
            guard end <= t else { return }
            ended = ended + 1
            guard ended >= dates[0] else { continue }
            while q < firsts.count && firsts[q] < end {
                latestQualified = max(latestQualified ?? dates[q], dates[q])
                q += 1
            }
            while next < dates.count && dates[next] < ended { next += 1 }
            if next < dates.count && dates[next] == ended {
                run += 1
            } else if bridged(ended) || (latestQualified ?? ended) > ended {
                // Bridged: a rest day, a paused date, or a later date qualified before this one ended.
            } else if run >= 1 && run >= freeze.minStreak && freeze.autoUse && freezes > 0 {
                freezes -= 1
                if end > from {
                    result.append(
                        Notice(kind: .freezeUsed, date: ended, due: end, length: run, freezes: freezes))
                }
            } else if run >= 1 {
                if end > from {
                    result.append(
                        Notice(kind: .streakBroken, date: ended, due: end, length: run, freezes: freezes))
                }
                run = 0
            }
        }
    }

    /// Dates with a check-in after the ended ones and before `date`.
    func qualifyingOpen(before date: LocalDate) -> Int {
        var n = 0
        var i = next
        while i < dates.count && dates[i] <= ended { i += 1 }
        while i < dates.count && dates[i] < date {
            n += 1
            i += 1
        }
        return n
    }

    /// `Notices.upcoming`: settlements as the dates end, and each `at_risk` as the state at its
    /// due instant finds it (the walk stops there first: dues come in date order).
    mutating func upcoming(policy: NoticePolicy, from: Instant, through: Instant, into result: inout [Notice]) {
        let first = result.count
        advance(to: from, from: from, into: &result)  // settles what ended by `from`: nothing to tell
        var today = max(zone.date(of: from), ended + 1)
        let last = dates[dates.count - 1]
        // The guard of `Notices.reminders`: the length at risk is today's or the current one.
        let alive = run + qualifyingOpen(before: today)
        let current = run + qualifyingOpen(before: max(today, last) + 1)
        if let remindAt = policy.remindAt,
            policy.reminders.reminds(alive) || policy.reminders.reminds(current)
        {
            var date = today
            while true {
                // A date whose day has not begun by `through` has no reminder due by then.
                guard zone.start(of: date) <= through else { break }
                defer { date = date + 1 }
                guard let due = Notices.reminderDue(of: date, remindAt: remindAt, zone: zone, leewayHours: 0),
                    due > from, due <= through
                else { continue }
                advance(to: due, from: from, into: &result)
                today = max(zone.date(of: due), ended + 1)
                // `atRisk`: evaluated at its due instant, `date` must be today then, open, not
                // made safe by a later qualifying date, and the length at risk one of the days.
                guard today == date, !has(date), last <= date, !bridged(date) else { continue }
                let length = run + qualifyingOpen(before: date)
                guard length >= 1, policy.reminders.reminds(length) else { continue }
                result.append(Notice(kind: .atRisk, date: date, due: due, length: length, freezes: freezes))
            }
        }
        advance(to: through, from: from, into: &result)
        // Most often one or two, already in order: sorting a slice copies it.
        if (first + 1..<max(first + 1, result.count)).contains(where: { Notice.dueOrder(result[$0], result[$0 - 1]) }) {
            result[first...].sort(by: Notice.dueOrder)
        }
    }

    /// A rest day or a paused date.
    func bridged(_ date: LocalDate) -> Bool {
        rest.contains(date) || (!pauses.isEmpty && pauses.contains { $0.contains(date) })
    }

    func has(_ date: LocalDate) -> Bool {
        var lo = 0
        var hi = dates.count
        while lo < hi {
            let mid = (lo + hi) / 2
            if dates[mid] < date { lo = mid + 1 } else { hi = mid }
        }
        return lo < dates.count && dates[lo] == date
    }
}
