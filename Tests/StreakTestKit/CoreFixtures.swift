import StreakCore
import StreakJobs

/// Fixtures for tests of the rules: zones, instants, dates, check-ins and histories.

/// A named zone with Foundation's rules (the system tzdata).
public func zone(_ identifier: String) -> Zone {
    guard let rules = FoundationZoneRules(identifier: identifier) else {
        fatalError("unknown zone \(identifier)")
    }
    return Zone(identifier: identifier, rules: rules)
}

/// An instant from RFC 3339 text.
public func at(_ text: String) -> Instant {
    guard let instant = RFC3339.parse(text) else { fatalError("bad RFC 3339 text \(text)") }
    return instant
}

/// A date from `YYYY-MM-DD`.
public func day(_ text: String) -> LocalDate {
    guard let date = LocalDate(text) else { fatalError("bad date \(text)") }
    return date
}

/// Long before any test's check-ins: the first zone applies from here.
public let early = at("2020-01-01T00:00:00Z")

/// A check-in at `text` in `zoneID`, stored when it happened unless `storedAt` is given.
public func checkin(_ text: String, _ zoneID: String, id: String? = nil, storedAt: String? = nil) -> CheckIn {
    CheckIn(instant: at(text), zone: zone(zoneID), id: id, storedAt: storedAt.map(at) ?? at(text))
}

/// One check-in per date at local `hour` in `zoneID`, from `first` through `last`.
public func daily(_ first: String, through last: String, hour: Int = 12, _ zoneID: String) -> [CheckIn] {
    let z = zone(zoneID)
    var result: [CheckIn] = []
    var d = day(first)
    while d <= day(last) {
        let i = z.instant(of: d, secondsIntoDay: hour * 3600)
        result.append(CheckIn(instant: i, zone: z, storedAt: i))
        d = d + 1
    }
    return result
}

/// A history for a user who starts in `zoneID` and then follows `moves` (instant, zone).
public func history(
    _ checkins: [CheckIn], in zoneID: String, moves: [(String, String)] = [],
    freezeEvents: [FreezeEvent] = [], epochs: [SettingsEpoch] = [],
    settings: StreakSettings = StreakSettings(), backfillDays: Int = 90
) -> StreakHistory {
    var zones = [ZoneChange(since: early, zone: zone(zoneID))]
    for (since, id) in moves { zones.append(ZoneChange(since: at(since), zone: zone(id))) }
    return StreakHistory(
        checkins: checkins, zones: zones, freezeEvents: freezeEvents, epochs: epochs,
        settings: settings, backfillDays: backfillDays)
}

/// Settings with the given goal, leeway and freeze numbers.
public func settings(
    goal: Int = 1, leeway: Int = 0, initial: Int = 1, max: Int = 1, minStreak: Int = 3, autoUse: Bool = true
)
    -> StreakSettings
{
    var s = StreakSettings()
    s.goal = goal
    s.leewayHours = leeway
    s.freeze.initial = initial
    s.freeze.max = max
    s.freeze.minStreak = minStreak
    s.freeze.autoUse = autoUse
    return s
}

/// The marks of the dates `first` through `last`.
public func marks(_ state: StreakState, _ first: String, through last: String) -> [DayMark?] {
    var result: [DayMark?] = []
    var d = day(first)
    while d <= day(last) {
        result.append(state.mark(d))
        d = d + 1
    }
    return result
}

/// Settlements as short strings, easy to compare and to read in a failure.
public func summary(_ settlements: [Settlement]) -> [String] {
    settlements.map { "\($0.kind.rawValue) \($0.date) len=\($0.length) at=\($0.at)" }
}
