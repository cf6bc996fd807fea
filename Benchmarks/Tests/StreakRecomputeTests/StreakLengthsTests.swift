import StreakRecompute
import StreakTestKit
import Testing

@testable import StreakCore

/// `Engine.lengths` answers exactly what `Engine.evaluate` answers, on random histories built to
/// hit its simple walk (one zone, goal 1, no leeway, no freeze events) and everything around it:
/// dates across DST changes and clocks set back over midnight, check-ins near midnight, out of
/// order, repeated, in the future or beyond the backfill cap, and the freeze settings.
@Suite(.fastTier) struct StreakLengthsTests {
    /// Zones whose transitions make dates long, short or repeated (some at midnight).
    static let zoneIDs = [
        "UTC", "Europe/Berlin", "America/New_York", "America/Havana", "America/Santiago", "Asia/Beirut",
        "America/St_Johns", "Australia/Lord_Howe", "Asia/Kathmandu", "Africa/Casablanca", "Asia/Gaza",
        "America/Asuncion", "Europe/Chisinau", "America/Nuuk", "Pacific/Chatham", "Asia/Tehran",
    ]

    static func randomHistory(_ r: inout SplitMix64, zones: [Zone]) -> (StreakHistory, Instant) {
        let home = zones[r.int(0...zones.count - 1)]
        // Any minute of 2025-2027.
        let now = at("2025-01-01T00:00:00Z") + Int64(r.int(0...(3 * 365 * 24 * 60))) * 60
        var checkins: [CheckIn] = []
        let days = r.int(0...20)
        var date = home.date(of: now) - r.int(0...30)
        for _ in 0..<days {
            date = date + (r.chance(80) ? 1 : r.int(0...3))
            for _ in 0..<(r.chance(85) ? 1 : r.int(0...3)) {
                // Mostly daytime; sometimes within an hour of a midnight.
                let seconds =
                    r.chance(70) ? r.int(8 * 3600...22 * 3600) : r.int(0...3600) + (r.chance(50) ? 23 * 3600 : 0)
                let zone = r.chance(95) ? home : zones[r.int(0...zones.count - 1)]
                let instant = home.instant(of: date, secondsIntoDay: seconds)
                let stored = r.chance(90) ? instant : instant + Int64(r.int(0...120)) * Instant.day
                checkins.append(CheckIn(instant: instant, zone: zone, storedAt: stored))
            }
        }
        if r.chance(20) { checkins.shuffle(using: &r) }
        var settings = StreakSettings()
        settings.goal = r.chance(90) ? 1 : 2
        settings.leewayHours = r.chance(90) ? 0 : 2
        settings.freeze.initial = r.int(0...2)
        settings.freeze.max = r.int(1...3)
        settings.freeze.minStreak = r.int(0...4)
        settings.freeze.autoUse = r.chance(80)
        var moves: [ZoneChange] = [ZoneChange(since: early, zone: home)]
        if r.chance(5) {
            moves.append(
                ZoneChange(since: now - Int64(r.int(0...20)) * Instant.day, zone: zones[r.int(0...zones.count - 1)]))
        }
        var events: [FreezeEvent] = []
        if r.chance(10) {
            let at = now - Int64(r.int(-2...20)) * Instant.day
            events.append(FreezeEvent(at: at, kind: r.chance(50) ? .grant : .use(home.date(of: at) - 1)))
        }
        var epochs: [SettingsEpoch] = []
        if r.chance(15) {
            epochs.append(
                SettingsEpoch(
                    since: now - Int64(r.int(-5...30)) * Instant.day, goal: r.chance(70) ? 1 : 2,
                    leewayHours: r.chance(70) ? 0 : 3))
        }
        let history = StreakHistory(
            checkins: checkins, zones: moves, freezeEvents: events, epochs: epochs, settings: settings,
            backfillDays: r.int(1...90))
        return (history, now)
    }

    @Test func lengthsEqualEvaluateOnRandomHistories() {
        let zones = Self.zoneIDs.map(zone)
        var r = SplitMix64(state: 2026)
        var simple = 0
        let count = 20_000
        for i in 0..<count {
            let (history, now) = Self.randomHistory(&r, zones: zones)
            let state = Engine.evaluate(history, at: now)
            let lengths = Engine.lengths(history, at: now)
            if Engine.simpleLengths(history, at: now) != nil { simple += 1 }
            #expect(
                lengths.current == state.current && lengths.longest == state.longest,
                "history \(i) at \(now): lengths \(lengths), evaluate (\(state.current), \(state.longest))")
            if lengths.current != state.current || lengths.longest != state.longest { break }
        }
        // Most of them took the simple walk, and some did not.
        #expect(simple > count / 3 && simple < count)
    }

    @Test func emptyAndFutureOnlyHistoriesAreZero() {
        let now = at("2026-11-21T19:00:00Z")
        #expect(Engine.lengths(history([], in: "Europe/Berlin"), at: now) == (0, 0))
        let later = [checkin("2026-11-23T10:00:00Z", "Europe/Berlin")]
        #expect(Engine.lengths(history(later, in: "Europe/Berlin"), at: now) == (0, 0))
    }
}

extension SplitMix64 {
    mutating func int(_ range: ClosedRange<Int>) -> Int {
        range.lowerBound + Int(next() % UInt64(range.count))
    }
    mutating func chance(_ percent: Int) -> Bool { int(0...99) < percent }
}
