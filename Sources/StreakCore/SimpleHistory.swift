/// What makes a history simple, so that `Notices.upcoming(zone:instants:…)` walks it without
/// the engine (docs/ARCHITECTURE.md, "The next run"). One definition for its three readers: the
/// engine's history (`Notices.upcomingSimple`), and the history as stored, when a write plans
/// a streak's next run and when `preview` plans its notices.
public enum SimpleHistory {
    /// Whether a streak under `settings` walks simply through `epochs`: a goal of one check-in a
    /// day with no leeway, and the same rest days, now and in every epoch.
    public static func settings(_ settings: StreakSettings, epochs: [SettingsEpoch]) -> Bool {
        settings.goal == 1 && settings.leewayHours == 0 && epochs.allSatisfy { $0.isSimple(rest: settings.restDays) }
    }

    /// The history's kept pauses (`FreezeEvent.pausedDates`), with the instants of the check-ins
    /// that count (stored within the backfill cap `cap`) appended to `instants`, when the history
    /// is simple: the user has had one zone (`zones` changes), every event is a pause, and every
    /// check-in that counts is in that zone (`at` answers a check-in's instant, when it was stored
    /// and whether it is in the zone) and no later than `latest` (so each instant of the window
    /// counts the same ones). Nil when it is not; `instants` may then hold some.
    @inlinable
    public static func pauses<Checkins: Sequence>(
        zones: Int, events: [FreezeEvent], checkins: Checkins, cap: Int64, latest: Instant,
        into instants: inout [Instant], _ at: (Checkins.Element) -> (instant: Instant, storedAt: Instant, inZone: Bool)
    ) -> [DateSpan]? {
        guard zones == 1, events.allSatisfy(\.isPause) else { return nil }
        for c in checkins {
            let (instant, storedAt, inZone) = at(c)
            guard instant >= storedAt - cap else { continue }  // never counts (backfill)
            guard inZone, instant <= latest else { return nil }
            instants.append(instant)
        }
        return events.compactMap(\.pausedDates)
    }
}
