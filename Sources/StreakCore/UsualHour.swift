/// `--remind-at usual` (SPEC §14): the reminder time as a function of the stored history. Pure.
///
/// Take the user's latest 14 qualifying dates over all streaks; for each, its qualifying check-in
/// (the one that reached the goal; of several streaks qualifying the same date, the earliest of
/// theirs) and that check-in's local time of day in its own zone (24:00 plus its time when leeway
/// moved it to the date before). The median (of an even count, the lower middle one) minus 30
/// minutes, rounded down to the quarter hour, kept within [earliest, latest]. Fewer than 3 such
/// dates: 20:00.
public enum UsualHour {
    public static let fallback = 20 * 3600
    public static let dates = 14

    /// One qualifying date: its qualifying check-in's time of day, seconds after the date's local
    /// midnight in the check-in's zone (86,400 and more when leeway moved it from the next date).
    public struct Sample: Equatable, Sendable {
        public var date: LocalDate
        public var at: Instant
        public var seconds: Int
        public init(date: LocalDate, at: Instant, seconds: Int) {
            self.date = date
            self.at = at
            self.seconds = seconds
        }
    }

    /// The reminder time, seconds after local midnight, from the samples of every streak (in any
    /// order).
    public static func time(_ samples: [Sample], earliest: Int, latest: Int) -> Int {
        // Per date the earliest qualifying check-in (ties: the earlier time of day), then the latest dates.
        var byDate: [LocalDate: Sample] = [:]
        for s in samples {
            if let o = byDate[s.date], (o.at, o.seconds) <= (s.at, s.seconds) { continue }
            byDate[s.date] = s
        }
        let latestDates = byDate.values.sorted { $0.date > $1.date }.prefix(dates)
        guard latestDates.count >= 3 else { return fallback }
        let times = latestDates.map(\.seconds).sorted()
        let median = times[(times.count - 1) / 2]
        let quarter = 15 * 60
        var t = median - 30 * 60
        t = t >= 0 ? t / quarter * quarter : -((-t + quarter - 1) / quarter) * quarter
        return min(max(t, earliest), latest)
    }

    /// The samples of one streak's history as of `now`: each qualifying date's qualifying check-in.
    public static func samples(_ history: StreakHistory, at now: Instant) -> [Sample] {
        let state = Engine.evaluate(history, at: now)
        guard !state.qualified.isEmpty else { return [] }
        let counting = Engine.countingCheckins(history, now: now)
        var zoneAt: [Instant: Zone] = [:]
        for c in counting where zoneAt[c.instant] == nil { zoneAt[c.instant] = c.zone }  // the first in (instant, zone, id) order
        return state.qualified.compactMap { q in
            guard let zone = zoneAt[q.at] else { return nil }
            let wall = Int(((q.at.seconds + Int64(zone.offset(at: q.at))) % 86_400 + 86_400) % 86_400)
            let moved = zone.date(of: q.at) > q.date
            return Sample(date: q.date, at: q.at, seconds: wall + (moved ? 86_400 : 0))
        }
    }

    /// The reminder time of a user whose streaks' histories are `histories`, as of `now`.
    public static func time(_ histories: [StreakHistory], at now: Instant, earliest: Int, latest: Int) -> Int {
        time(histories.flatMap { samples($0, at: now) }, earliest: earliest, latest: latest)
    }
}
