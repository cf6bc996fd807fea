/// The streak rules of SPEC §1–3 as one pure function of a history and an
/// instant. It reads no clock, zone or environment: everything comes in.
public enum Engine {
    /// Check-ins up to this far ahead of `now` are accepted (SPEC §1: clock
    /// skew between devices) and count as present.
    public static let clockSkew: Int64 = 300

    public static func evaluate(_ history: StreakHistory, at now: Instant) -> StreakState {
        let timeline = SettingsTimeline(epochs: history.epochs, current: history.settings, now: now)
        let days = DayEnds(zones: history.zones, timeline: timeline)
        let counting = countingCheckins(history, now: now)
        let start = (counting.first?.instant ?? now) - 2 * Instant.day
        let walk = days.walk(from: start, to: now)
        let forgiven = Forgiveness(history, days: days, walk: walk.ends, now: now)
        let attribution = attribute(counting, timeline: timeline, bridged: forgiven.bridged)
        let qualifying = { (d: LocalDate) -> Bool in
            (attribution.counts[d] ?? 0) >= goal(for: d, days: days, history: history)
        }
        let qualified = qualifyingInstants(counting, attribution: attribution, days: days, history: history)
        let firstDate = attribution.firstDate ?? walk.today
        // A repair is void once the date it mended qualifies (SPEC §14: the repair is given back).
        let repaired = forgiven.repairs.filter { !qualifying($0.span.from) }

        // Freeze credits and debits, in time order.
        let freeze = history.settings.freeze
        // Events outside the plausible instants and dates (a damaged store's) are left out: a use
        // far away would make a table of every date up to it.
        var events = history.freezeEvents.filter { e in
            guard e.isFreeze, e.at <= now, Instant.plausible.contains(e.at) else { return false }
            if case .use(let d) = e.kind { return LocalDate.plausible.contains(d) }
            return true
        }
        // A use on a date that qualifies, rests or is paused needs no freeze: it is given back.
        events.removeAll {
            if case .use(let d) = $0.kind { return qualifying(d) || forgiven.restsOrPaused(d) } else { return false }
        }
        events.sort { $0.at < $1.at }
        var nextEvent = 0
        var freezes = freeze.initial
        var manuallyFrozen = Set<LocalDate>()
        func applyEvents(through t: Instant) {
            while nextEvent < events.count && events[nextEvent].at <= t {
                switch events[nextEvent].kind {
                case .grant, .refill: freezes = min(freeze.max, freezes + 1)
                case .use(let d):
                    if freezes > 0 && !manuallyFrozen.contains(d) {
                        freezes -= 1
                        manuallyFrozen.insert(d)
                    }
                case .pause, .repair: break  // not freeze events: filtered out above
                }
                nextEvent += 1
            }
        }

        var run = 0
        var longest = 0
        var marks = DayMarks()
        var settlements: [Settlement] = []
        var q = 0
        var latestQualified: LocalDate?
        var lastQualifying: LocalDate?
        for end in walk.ends where end.date >= firstDate {
            applyEvents(through: end.at)
            while q < qualified.count && qualified[q].at < end.at {
                latestQualified = max(latestQualified ?? qualified[q].date, qualified[q].date)
                q += 1
            }
            let d = end.date
            if qualifying(d) {
                run += 1
                longest = max(longest, run)
                marks[d] = .qualifying
                lastQualifying = d
            } else if forgiven.paused(d) {
                marks[d] = .paused
            } else if forgiven.rests(d) {
                marks[d] = .rest
            } else if end.bridged || (latestQualified ?? d) > d {
                marks[d] = .bridged
            } else if manuallyFrozen.contains(d) {
                marks[d] = .frozen
            } else if repaired.contains(where: { $0.span.contains(d) }) {
                marks[d] = .repaired
            } else if run >= 1 && run >= freeze.minStreak && freeze.autoUse && freezes > 0 {
                freezes -= 1
                marks[d] = .frozen
                settlements.append(
                    Settlement(kind: .freezeUsed, date: d, at: end.at, length: run, freezesLeft: freezes))
            } else if run >= 1 {
                settlements.append(
                    Settlement(kind: .streakBroken, date: d, at: end.at, length: run, freezesLeft: freezes))
                run = 0
                marks[d] = .missed
            } else {
                marks[d] = .missed
            }
        }
        applyEvents(through: now)

        // Dates not ended yet never break a run.
        let today = walk.today
        var alive = run
        var current = run
        let last = attribution.lastDate ?? today
        var d = walk.endedThrough + 1
        while d <= max(today, last) {
            if qualifying(d) {
                current += 1
                if d < today { alive += 1 }
                marks[d] = .qualifying
                lastQualifying = d
            } else if manuallyFrozen.contains(d) {
                marks[d] = .frozen
            } else if forgiven.paused(d) {
                marks[d] = .paused
            } else if forgiven.rests(d) {
                marks[d] = .rest
            } else if repaired.contains(where: { $0.span.contains(d) }) {
                marks[d] = .repaired
            } else {
                marks[d] = .open
            }
            d = d + 1
        }
        for f in manuallyFrozen where f > max(today, last) { marks[f] = .frozen }
        // Pauses ahead (a bounded look: a pause is at most a year of dates).
        for p in forgiven.pauses where p.until > max(today, last) {
            var f = max(p.from, max(today, last) + 1)
            while f <= min(p.until, today + 400) {
                if marks[f] == nil { marks[f] = .paused }
                f = f + 1
            }
        }
        longest = max(longest, current)
        for r in repaired where r.at <= now {
            settlements.append(
                Settlement(
                    kind: .streakRepaired, date: r.span.from, at: r.at, length: Self.runLength(through: r.span, marks),
                    freezesLeft: freezes))
        }
        if !repaired.isEmpty { settlements.sort { $0.at < $1.at } }

        return StreakState(
            today: today, endedThrough: walk.endedThrough, current: current, longest: longest,
            aliveBeforeToday: alive, freezes: freezes, todayCount: attribution.counts[today] ?? 0,
            goal: timeline.at(now).goal, totalCheckins: history.checkins.count { $0.instant <= now + clockSkew },
            lastQualifying: lastQualifying, settlements: settlements, marks: marks, qualified: qualified,
            firstStored: history.checkins.lazy.map(\.storedAt).min(),
            nextEnd: days.end(of: walk.endedThrough + 1, in: history.zone(at: now)))
    }

    /// Check-ins that count: not in the future of `now`, not older than the backfill cap when
    /// they were stored, and within `Instant.plausible` (the walk over dates starts at the
    /// first: a damaged store's instant of 2^60 seconds ago would walk for billions of days).
    /// Sorted by (instant, zone, id).
    static func countingCheckins(_ history: StreakHistory, now: Instant) -> [CheckIn] {
        let cap = Int64(history.backfillDays) * Instant.day
        return history.checkins
            .filter {
                Instant.plausible.contains($0.instant) && Instant.plausible.contains($0.storedAt)
                    && $0.instant <= now + clockSkew && $0.instant >= $0.storedAt - cap
            }
            .sorted {
                if $0.instant != $1.instant { return $0.instant < $1.instant }
                if $0.zone.identifier != $1.zone.identifier { return $0.zone.identifier < $1.zone.identifier }
                return ($0.id ?? "") < ($1.id ?? "")
            }
    }

    struct Attribution {
        var dates: [LocalDate] = []  // per counting check-in, in order
        var counts = DayTable<Int>()
        var firstDate: LocalDate? { dates.min() }
        var lastDate: LocalDate? { dates.max() }
    }

    /// Gives each check-in its date: its local date, or the date before when it
    /// falls within the leeway and that date does not qualify yet.
    /// Leeway never moves a check-in onto a `bridged` date (rest, pause, travel: SPEC §14).
    static func attribute(
        _ checkins: [CheckIn], timeline: SettingsTimeline, bridged: (LocalDate) -> Bool = { _ in false }
    ) -> Attribution {
        var result = Attribution()
        for c in checkins {
            var date = c.zone.date(of: c.instant)
            let epoch = timeline.at(c.instant)
            let leeway = Int64(epoch.leewayHours) * Instant.hour
            if leeway > 0, c.instant - c.zone.start(of: date) < leeway, (result.counts[date - 1] ?? 0) < epoch.goal,
                !bridged(date - 1)
            {
                date = date - 1
            }
            result.dates.append(date)
            result.counts[date] = (result.counts[date] ?? 0) + 1
        }
        return result
    }

    /// The goal of a date: the one in force when it was due to end.
    static func goal(for date: LocalDate, days: DayEnds, history: StreakHistory) -> Int {
        epoch(for: date, days: days, history: history).goal
    }

    /// The settings of a date: those in force when it was due to end.
    static func epoch(for date: LocalDate, days: DayEnds, history: StreakHistory) -> SettingsEpoch {
        if days.timeline.epochs.count == 1 { return days.timeline.epochs[0] }
        let zone = history.zone(at: history.zones[0].zone.start(of: date + 1))
        // SPEC §3: a change of goal applies to every date that has not ended
        // when it is made. A date ends `leeway` hours after the next midnight,
        // not at it, so a change made inside the leeway still applies to it:
        // take the goal in force just before the date's end.
        return days.timeline.at(days.end(of: date, in: zone) - 1)
    }

    /// The length a repair restored: the qualifying dates of the run through its span, up to its
    /// last date (SPEC §14: the length before the break plus those qualified since).
    static func runLength(through span: DateSpan, _ marks: DayMarks) -> Int {
        var n = 0
        var d = span.until
        while let m = marks[d], m != .missed {
            if m == .qualifying { n += 1 }
            d = d - 1
        }
        return n
    }

    /// For each qualifying date, the instant of the check-in that made it qualify.
    static func qualifyingInstants(
        _ checkins: [CheckIn], attribution: Attribution, days: DayEnds, history: StreakHistory
    ) -> [(at: Instant, date: LocalDate)] {
        var seen = DayTable<Int>()
        var result: [(at: Instant, date: LocalDate)] = []
        for (c, d) in zip(checkins, attribution.dates) {
            let n = (seen[d] ?? 0) + 1
            seen[d] = n
            if n == goal(for: d, days: days, history: history) { result.append((c.instant, d)) }
        }
        return result
    }
}
