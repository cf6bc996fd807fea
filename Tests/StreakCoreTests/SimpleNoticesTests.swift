import StreakTestKit
import Testing

@testable import StreakCore

/// `Notices.upcomingSimple` (preview's walk without the engine) answers exactly what
/// `Notices.upcoming` answers, on random histories built to hit it (one zone, goal 1, no leeway,
/// rest days or none, pauses or none, no other events) and everything around it: dates across DST changes and clocks set back over
/// midnight, check-ins near midnight, out of order, repeated, ahead of now or beyond the backfill
/// cap, the freeze and reminder settings, and windows from an hour to over a week.
@Suite(.fastTier) struct SimpleNoticesTests {
    /// Zones whose transitions make dates long, short or repeated (some at midnight).
    static let zoneIDs = [
        "UTC", "Europe/Berlin", "America/New_York", "America/Havana", "America/Santiago", "Asia/Beirut",
        "America/St_Johns", "Australia/Lord_Howe", "Asia/Kathmandu", "Africa/Casablanca", "Asia/Gaza",
        "America/Asuncion", "Europe/Chisinau", "America/Nuuk", "Pacific/Chatham", "Asia/Tehran", "Pacific/Kiritimati",
        "Pacific/Pago_Pago",
    ]

    /// `forgiving`: the percent chance of each of rest days, a pause and a repair (SPEC §14).
    static func randomCase(_ r: inout SplitMix64, zones: [Zone], forgiving: Int = 3)
        -> (history: StreakHistory, policy: NoticePolicy, from: Instant, through: Instant)
    {
        let home = zones[r.int(0...zones.count - 1)]
        // Any minute of 2025-2027.
        let from = at("2025-01-01T00:00:00Z") + Int64(r.int(0...(3 * 365 * 24 * 60))) * 60
        var checkins: [CheckIn] = []
        // Runs of dates ending about now, or some days ago.
        let days = r.int(0...20)
        var date = home.date(of: from) - days - (r.chance(60) ? r.int(0...2) : r.int(0...15))
        for _ in 0..<days {
            date = date + (r.chance(80) ? 1 : r.int(0...3))
            for _ in 0..<(r.chance(85) ? 1 : r.int(0...3)) {
                // Mostly daytime; sometimes within an hour of a midnight.
                let seconds =
                    r.chance(70) ? r.int(8 * 3600...22 * 3600) : r.int(0...3600) + (r.chance(50) ? 23 * 3600 : 0)
                let zone = r.chance(97) ? home : zones[r.int(0...zones.count - 1)]
                let instant = home.instant(of: date, secondsIntoDay: seconds)
                guard r.chance(95) || instant <= from else { continue }
                let stored = r.chance(90) ? max(instant, from - 40 * Instant.day) : instant + Int64(r.int(0...120)) * Instant.day
                checkins.append(CheckIn(instant: instant, zone: zone, storedAt: stored))
            }
        }
        // Mostly check-ins up to now (as stored ones are), sometimes one a little or much later.
        checkins.removeAll { $0.instant > from + Engine.clockSkew && r.chance(90) }
        if r.chance(20) { checkins.shuffle(using: &r) }
        var settings = StreakSettings()
        settings.goal = r.chance(95) ? 1 : 2
        settings.leewayHours = r.chance(95) ? 0 : 2
        settings.freeze.initial = r.int(0...2)
        settings.freeze.max = r.int(1...3)
        settings.freeze.minStreak = r.int(0...4)
        settings.freeze.autoUse = r.chance(80)
        var moves: [ZoneChange] = [ZoneChange(since: early, zone: home)]
        if r.chance(3) {
            moves.append(
                ZoneChange(since: from - Int64(r.int(0...20)) * Instant.day, zone: zones[r.int(0...zones.count - 1)]))
        }
        var events: [FreezeEvent] = []
        if r.chance(3) {
            let at = from - Int64(r.int(-2...20)) * Instant.day
            events.append(FreezeEvent(at: at, kind: r.chance(50) ? .grant : .use(home.date(of: at) - 1)))
        }
        // SPEC §14: weekend or random rest days, a pause and a repair, each recorded before `from`
        // (preview assumes nothing new).
        if r.chance(forgiving) {
            settings.restDays = r.chance(50) ? RestDays(names: ["sat", "sun"])! : RestDays(bits: UInt8(r.int(1...127)))
        }
        if r.chance(forgiving) {
            let start = home.date(of: from) + r.int(-10...3)
            events.append(
                FreezeEvent(at: from - Int64(r.int(0...20)) * Instant.day - 1, kind: .pause(from: start, until: start + r.int(0...12))))
        }
        if r.chance(forgiving) {
            let start = home.date(of: from) - r.int(1...6)
            events.append(
                FreezeEvent(at: from - Int64(r.int(0...3)) * 3600 - 1, kind: .repair(from: start, until: start + r.int(0...2))))
        }
        var epochs: [SettingsEpoch] = []
        if r.chance(10) {
            epochs.append(
                SettingsEpoch(
                    since: from - Int64(r.int(-5...30)) * Instant.day, goal: r.chance(80) ? 1 : 2,
                    leewayHours: r.chance(80) ? 0 : 3))
        }
        let history = StreakHistory(
            checkins: checkins, zones: moves, freezeEvents: events, epochs: epochs, settings: settings,
            backfillDays: r.int(1...90))
        let reminderDays = r.chance(50) ? [5, 7, 14] : (0..<r.int(1...8)).map { _ in r.int(1...15) }
        let remindAt = r.chance(90) ? (r.chance(50) ? 20 * 3600 : 60 * r.int(0...1439)) : nil
        let policy = NoticePolicy(remindAt: remindAt, reminders: ReminderPolicy(days: reminderDays))
        let through = from + Int64(r.int(1...(9 * 24 * 60))) * 60
        return (history, policy, from, through)
    }

    @Test func theSimpleWalkEqualsTheEngineOnRandomHistories() {
        let zones = Self.zoneIDs.map(zone)
        var r = SplitMix64(state: 2026)
        var (simple, resting, pausing) = (0, 0, 0)
        var kinds: [NotificationKind: Int] = [:]
        let count = 20_000
        for i in 0..<count {
            let c = Self.randomCase(&r, zones: zones)
            let engine = Notices.upcoming(c.history, policy: c.policy, from: c.from, through: c.through)
            guard let walk = Notices.upcomingSimple(c.history, policy: c.policy, from: c.from, through: c.through)
            else { continue }
            simple += 1
            if !c.history.settings.restDays.isEmpty { resting += 1 }
            if c.history.freezeEvents.contains(where: \.isPause) { pausing += 1 }
            for n in walk { kinds[n.kind, default: 0] += 1 }
            #expect(walk == engine, "case \(i) from \(c.from) through \(c.through): walk \(walk), engine \(engine)")
            if walk != engine { break }
        }
        // Most of them took the simple walk, and some did not; and they had notices of every kind.
        #expect(simple > count / 2 && simple < count)
        #expect(resting > 200, "simple walks with rest days: \(resting)")
        #expect(pausing > 200, "simple walks with a pause: \(pausing)")
        for kind in [NotificationKind.atRisk, .freezeUsed, .streakBroken] { #expect(kinds[kind, default: 0] > count / 40) }
    }

    /// What `preview` announces (`Notices.upcoming`) is what runs every quarter hour over the
    /// window find (`Notices.due`), on random histories with rest days, pauses and repairs among
    /// the rest: no notice missed, none invented.
    @Test func previewEqualsQuarterHourRunsWithRestPauseAndRepair() {
        let zones = Self.zoneIDs.map(zone)
        var r = SplitMix64(state: 2028)
        var (cases, forgiving) = (0, 0)
        while cases < 200 {
            var c = Self.randomCase(&r, zones: zones, forgiving: 25)
            // Shorter windows (a run every quarter hour is an evaluation each), from a quarter hour.
            let from = Instant(seconds: c.from.seconds - c.from.seconds % 900)
            c.through = from + Int64(r.int(1...96)) * 900
            // Nothing new within the window: no check-in, no event, no configuration change not
            // recorded yet (the engine sees one at its evaluation instant).
            let s = c.history.settings
            guard c.history.checkins.allSatisfy({ $0.instant <= from }), c.history.freezeEvents.allSatisfy({ $0.at <= from }),
                c.history.epochs.allSatisfy({ $0.goal == s.goal && $0.leewayHours == s.leewayHours && $0.restDays == s.restDays })
            else { continue }
            cases += 1
            let h = c.history
            if !h.settings.restDays.isEmpty || h.freezeEvents.contains(where: { !$0.isFreeze }) { forgiving += 1 }
            func key(_ n: Notice) -> String { "\(n.kind.rawValue) \(n.date) \(n.due) \(n.length)" }
            let announced = Set(Notices.upcoming(h, policy: c.policy, from: from, through: c.through).map(key))
            var found = Set<String>()
            var t = from + 900
            while t <= c.through {
                let state = Engine.evaluate(h, at: t)
                for f in Notices.due(h, policy: c.policy, since: t - 900, now: t, state: state) where f.notice.due > from {
                    found.insert(key(f.notice))
                }
                t = t + 900
            }
            #expect(found == announced, "case \(cases): missed \(announced.subtracting(found)), invented \(found.subtracting(announced))")
            if found != announced {
                print("DEBUG zones", h.zones.map { "\($0.since) \($0.zone.identifier)" }, "settings", h.settings, "epochs", h.epochs)
                print("DEBUG events", h.freezeEvents, "from", from, "through", c.through, "policy", c.policy.remindAt as Any)
                print("DEBUG checkins", h.checkins.map { "\($0.instant) \($0.zone.identifier) stored \($0.storedAt)" })
                break
            }
        }
        #expect(forgiving > 60, "cases with rest days, a pause or a repair: \(forgiving)")
    }

    /// A streak's next run (`firstDue`) comes after nothing the engine finds due after now (where
    /// `Notices.next`'s did not), and after `next`'s instant only for a simple history, at its
    /// first notice: the run at the end of a qualified day, which finds nothing, is left out.
    @Test func theFirstDueRunMissesNothing() {
        let zones = Self.zoneIDs.map(zone)
        var r = SplitMix64(state: 2027)
        var (later, count) = (0, 20_000)
        for i in 0..<count {
            let c = Self.randomCase(&r, zones: zones)
            let state = Engine.evaluate(c.history, at: c.from)
            let next = Notices.next(c.history, policy: c.policy, now: c.from, state: state)
            let first = Notices.firstDue(after: next, c.history, policy: c.policy, now: c.from)
            // What the engine finds over a long window after now: nothing before the run.
            let engine = Notices.upcoming(c.history, policy: c.policy, from: c.from, through: c.from + 20 * Instant.day)
            // (Where `next` itself is later than a notice, a check-in ahead of now counts then:
            // `firstDue` changes nothing there.)
            if let due = engine.first?.due, let next, next <= due {
                #expect(first != nil && first! <= due, "case \(i): run at \(String(describing: first)), a notice at \(due)")
            }
            guard let first, let next else {
                #expect(first == next, "case \(i)")
                continue
            }
            #expect(first > c.from)
            if first != next {
                later += 1
                #expect(first > next, "case \(i)")
                #expect(Notices.upcomingSimple(c.history, policy: c.policy, from: c.from, through: c.through) != nil)
                #expect(engine.first?.due == first, "case \(i): the run is at the first notice")
            }
            if !(first == next || engine.first?.due == first) { break }
        }
        #expect(later > count / 20, "runs after the first instant one could find something: \(later)")
    }
}

extension SplitMix64 {
    mutating func int(_ range: ClosedRange<Int>) -> Int {
        range.lowerBound + Int(next() % UInt64(range.count))
    }
    mutating func chance(_ percent: Int) -> Bool { int(0...99) < percent }
}
