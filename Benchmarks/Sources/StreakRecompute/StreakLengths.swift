import StreakCore

extension Engine {
    /// The current and longest streak at `now`: exactly `evaluate(history, at: now)`'s, with
    /// no marks, settlements or notices. Work over every streak at once (recomputation)
    /// takes it. Most histories are simple (one zone, a goal of one check-in a day, no leeway,
    /// no freeze events by `now`), and for them it walks the dates directly; anything else
    /// goes through `evaluate`. `StreakLengthsTests` proves the two equal.
    public static func lengths(_ history: StreakHistory, at now: Instant) -> (current: Int, longest: Int) {
        if let simple = simpleLengths(history, at: now) { return simple }
        let state = evaluate(history, at: now)
        return (state.current, state.longest)
    }

    /// `evaluate`'s walk with goal 1, no leeway, one zone and no freeze events: a date
    /// qualifies when a check-in falls on it; every ended date from the first check-in's on
    /// extends the run, is bridged by a later date that qualified before it ended, takes an
    /// automatic freeze, or breaks the run.
    public static func simpleLengths(_ history: StreakHistory, at now: Instant) -> (current: Int, longest: Int)? {
        guard history.zones.count == 1, history.settings.goal == 1, history.settings.leewayHours == 0 else {
            return nil
        }
        for e in history.epochs where e.since <= now && (e.goal != 1 || e.leewayHours != 0) { return nil }
        for e in history.freezeEvents where e.at <= now { return nil }
        let zone = history.zones[0].zone
        let cap = Int64(history.backfillDays) * Instant.day
        for c in history.checkins where c.zone.identifier != zone.identifier {
            if c.instant <= now + clockSkew && c.instant >= c.storedAt - cap { return nil }
        }
        return withUnsafeTemporaryAllocation(of: Instant.self, capacity: history.checkins.count) { buffer in
            var n = 0
            for c in history.checkins where c.instant <= now + clockSkew && c.instant >= c.storedAt - cap {
                buffer[n] = c.instant
                n += 1
            }
            return simpleLengths(
                zone: zone, instants: UnsafeMutableBufferPointer(rebasing: buffer[..<n]),
                freeze: history.settings.freeze,
                now: now)
        }
    }

    /// The simple walk over the instants of the check-ins that count (`countingCheckins`), all in
    /// `zone`, in any order (sorted here): the user has always been in `zone`, the goal is one
    /// check-in a day with no leeway, and no freeze event happened by `now`. Nil when a later
    /// check-in falls on an earlier date (a clock set back over midnight): `evaluate` then.
    public static func simpleLengths(
        zone: Zone, instants: UnsafeMutableBufferPointer<Instant>, freeze: FreezeSettings, now: Instant
    ) -> (current: Int, longest: Int)? {
        var instants = instants
        if zip(instants, instants.dropFirst()).contains(where: { $0 > $1 }) { instants.sort() }
        return withUnsafeTemporaryAllocation(of: LocalDate.self, capacity: instants.count) { dates in
            withUnsafeTemporaryAllocation(of: Instant.self, capacity: instants.count) { firsts in
                walk(zone: zone, instants: instants, dates: dates, firsts: firsts, freeze: freeze, now: now)
            }
        }
    }

    /// `dates` and `firsts`: room for as many dates as instants.
    private static func walk(
        zone: Zone, instants: UnsafeMutableBufferPointer<Instant>, dates: UnsafeMutableBufferPointer<LocalDate>,
        firsts: UnsafeMutableBufferPointer<Instant>, freeze: FreezeSettings, now: Instant
    ) -> (current: Int, longest: Int)? {
        // Each date with a check-in, in order, and the instant that first made it qualify.
        var count = 0
        for t in instants {
            let d = zone.date(of: t)
            if count > 0 && d <= dates[count - 1] {
                if d == dates[count - 1] { continue }
                return nil
            }
            dates[count] = d
            firsts[count] = t
            count += 1
        }
        var freezes = freeze.initial
        let start = (instants.first ?? now) - 2 * Instant.day
        var ended = zone.date(of: start) - 1
        while zone.start(of: ended + 1) > start { ended = ended - 1 }
        var next = 0  // the first date not walked yet
        var q = 0  // the first date whose qualifying instant is not passed yet
        var latestQualified: LocalDate?
        var run = 0
        var longest = 0
        while true {
            let end = zone.start(of: ended + 2)
            guard end < now + 1 else { break }
            ended = ended + 1
            guard count > 0, ended >= dates[0] else { continue }
            while q < count && firsts[q] < end {
                latestQualified = max(latestQualified ?? dates[q], dates[q])
                q += 1
            }
            while next < count && dates[next] < ended { next += 1 }
            if next < count && dates[next] == ended {
                run += 1
                longest = max(longest, run)
            } else if (latestQualified ?? ended) > ended {
                // bridged
            } else if run >= 1 && run >= freeze.minStreak && freeze.autoUse && freezes > 0 {
                freezes -= 1
            } else {
                run = 0
            }
        }
        // Dates not ended yet never break a run.
        let today = max(zone.date(of: now), ended + 1)
        var current = run
        let last = count > 0 ? dates[count - 1] : today
        while next < count && dates[next] <= ended { next += 1 }
        while next < count && dates[next] <= max(today, last) {
            current += 1
            next += 1
        }
        return (current, max(longest, current))
    }
}
