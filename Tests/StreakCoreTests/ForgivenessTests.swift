import StreakTestKit
import Testing

@testable import StreakCore

/// SPEC §14 in the engine: rest days, pauses and repairs, across zones (DST changes inside the
/// pause and the repair window, a far-east zone and one west of UTC), leeway next to a bridged
/// date, goal 2 and travel during a pause.
@Suite(.fastTier) struct ForgivenessTests {
    static func rest(_ names: [String], goal: Int = 1, leeway: Int = 0) -> StreakSettings {
        var s = settings(goal: goal, leeway: leeway)
        s.restDays = RestDays(names: names)!
        return s
    }

    static func pause(_ from: String, _ until: String, at instant: String) -> FreezeEvent {
        FreezeEvent(at: at(instant), kind: .pause(from: day(from), until: day(until)), author: "ann")
    }

    static func repair(_ from: String, _ until: String, at instant: String) -> FreezeEvent {
        FreezeEvent(at: at(instant), kind: .repair(from: day(from), until: day(until)), author: "ann")
    }

    /// Weekdays only, 2026-11-02 (a Monday) through 2026-11-20: weekends are missing.
    static func weekdays(_ zoneID: String) -> [CheckIn] {
        daily("2026-11-02", through: "2026-11-20", zoneID).filter { $0.zone.date(of: $0.instant).isoWeekday <= 5 }
    }

    @Test func restNamesReadInAnyCaseShortOrFull() {
        #expect(RestDays(names: ["SAT", "sunday"])?.names == ["sat", "sun"])
        #expect(RestDays(names: ["Fri"])?.contains(day("2026-11-27")) == true)
        #expect(RestDays(names: ["funday"]) == nil)
        #expect(RestDays(names: [])?.isEmpty == true)
    }

    @Test(arguments: ["Europe/Berlin", "America/Los_Angeles", "Pacific/Kiritimati"])
    func weekendRestDaysAreBridged(zoneID: String) {
        let now = zone(zoneID).instant(of: day("2026-11-20"), secondsIntoDay: 22 * 3600)
        let kept = Engine.evaluate(history(Self.weekdays(zoneID), in: zoneID, settings: Self.rest(["sat", "sun"])), at: now)
        #expect(kept.current == 15 && kept.longest == 15)
        #expect(kept.settlements.isEmpty)
        #expect(marks(kept, "2026-11-06", through: "2026-11-09") == [.qualifying, .rest, .rest, .qualifying])
        // Without rest days the same history breaks every weekend.
        let broken = Engine.evaluate(history(Self.weekdays(zoneID), in: zoneID, settings: Self.rest([])), at: now)
        #expect(broken.current == 5)
        #expect(broken.settlements.map(\.kind).contains(.streakBroken))
    }

    @Test func aRestDayThatQualifiesCounts() {
        let list = Self.weekdays("Europe/Berlin") + [checkin("2026-11-07T10:00:00+01:00", "Europe/Berlin")]
        let s = Engine.evaluate(
            history(list, in: "Europe/Berlin", settings: Self.rest(["sat", "sun"])), at: at("2026-11-20T22:00:00+01:00"))
        #expect(s.current == 16)
        #expect(s.mark(day("2026-11-07")) == .qualifying && s.mark(day("2026-11-08")) == .rest)
    }

    /// No `at_risk` on a rest day; the one after it counts the length alive through the last
    /// qualifying date.
    @Test func noReminderOnARestDayAndTheNextCountsTheLengthBefore() {
        let h = history(
            daily("2026-11-02", through: "2026-11-06", "Europe/Berlin"), in: "Europe/Berlin",
            settings: Self.rest(["sat", "sun"]))
        let policy = NoticePolicy(remindAt: 20 * 3600, reminders: ReminderPolicy(days: [5]))
        let found = Notices.upcoming(
            h, policy: policy, from: at("2026-11-06T21:00:00+01:00"), through: at("2026-11-09T23:00:00+01:00"))
        #expect(found.map(\.kind) == [.atRisk])
        #expect(found.map(\.date) == [day("2026-11-09")] && found.map(\.length) == [5])
        // status's next reminder skips the weekend too.
        let now = at("2026-11-07T09:00:00+01:00")
        let next = Planner.next(
            history: h, remindAt: 20 * 3600, policy: ReminderPolicy(days: [5]), now: now,
            stateNow: Engine.evaluate(h, at: now))
        #expect(next?.date == day("2026-11-09") && next?.length == 5)
    }

    /// Leeway never moves a check-in onto a bridged date that does not qualify.
    @Test func leewayNextToABridgedDateStaysOnItsOwnDate() {
        // Saturday rests; Sunday 01:00 is within a 3-hour leeway of Saturday.
        let list = daily("2026-11-02", through: "2026-11-06", "Europe/Berlin") + [
            checkin("2026-11-08T01:00:00+01:00", "Europe/Berlin")
        ]
        let now = at("2026-11-08T12:00:00+01:00")
        let s = Engine.evaluate(history(list, in: "Europe/Berlin", settings: Self.rest(["sat"], leeway: 3)), at: now)
        #expect(s.mark(day("2026-11-07")) == .rest)
        #expect(s.mark(day("2026-11-08")) == .qualifying && s.todayCount == 1 && s.current == 6)
        // A paused date is bridged the same way.
        let p = Engine.evaluate(
            history(
                list, in: "Europe/Berlin", freezeEvents: [Self.pause("2026-11-07", "2026-11-07", at: "2026-11-06T08:00:00Z")],
                settings: settings(leeway: 3)), at: now)
        #expect(p.mark(day("2026-11-07")) == .paused && p.mark(day("2026-11-08")) == .qualifying)
        // Without the bridge it goes to Saturday, as leeway says.
        let plain = Engine.evaluate(history(list, in: "Europe/Berlin", settings: settings(leeway: 3)), at: now)
        #expect(plain.mark(day("2026-11-07")) == .qualifying && plain.todayCount == 0)
    }

    @Test func goalTwoOnARestDayNeitherBreaksNorCounts() {
        let z = "America/New_York"
        var list: [CheckIn] = []
        for d in ["2026-11-02", "2026-11-03", "2026-11-04", "2026-11-05", "2026-11-06", "2026-11-09"] {
            list += [checkin("\(d)T09:00:00-05:00", z), checkin("\(d)T18:00:00-05:00", z)]
        }
        list.append(checkin("2026-11-07T09:00:00-05:00", z))  // one of two on Saturday
        let s = Engine.evaluate(
            history(list, in: z, settings: Self.rest(["sat", "sun"], goal: 2)), at: at("2026-11-09T20:00:00-05:00"))
        #expect(s.current == 6 && s.settlements.isEmpty)
        #expect(marks(s, "2026-11-07", through: "2026-11-08") == [.rest, .rest])
    }

    /// A pause across a DST change, in a zone west of UTC and in the far east: the run goes on
    /// through it, and no reminder is due during it.
    @Test(arguments: [
        ("America/Los_Angeles", "2026-10-29", "2026-11-04"), ("Europe/Berlin", "2026-10-22", "2026-10-28"),
        ("Pacific/Kiritimati", "2026-10-29", "2026-11-04"),
    ])
    func aPauseBridgesItsDates(zoneID: String, from: String, until: String) {
        let z = zone(zoneID)
        let before = daily("2026-10-10", through: from, zoneID).dropLast()
        let after = daily(until, through: "2026-11-12", zoneID).dropFirst()
        let recorded = z.instant(of: day("2026-10-15"), secondsIntoDay: 9 * 3600).description
        let h = history(
            Array(before) + Array(after), in: zoneID, freezeEvents: [Self.pause(from, until, at: recorded)],
            settings: settings(initial: 0, max: 0))
        let s = Engine.evaluate(h, at: z.instant(of: day("2026-11-12"), secondsIntoDay: 22 * 3600))
        #expect(s.settlements.isEmpty)
        #expect(s.current == before.count + after.count)
        #expect(s.mark(day(from)) == .paused && s.mark(day(until)) == .paused)
        let policy = NoticePolicy(remindAt: 20 * 3600, reminders: ReminderPolicy(days: Array(1...60)))
        let start = z.instant(of: day(from), secondsIntoDay: 0)
        let found = Notices.upcoming(
            history(Array(before), in: zoneID, freezeEvents: [Self.pause(from, until, at: recorded)]), policy: policy,
            from: start, through: start + 10 * Instant.day)
        #expect(found.allSatisfy { $0.date > day(until) })
        // The first reminder after the pause counts the length before it.
        #expect(found.first.map { "\($0.kind.rawValue) \($0.date) \($0.length)" } == "at_risk \(day(until) + 1) \(before.count)")
    }

    /// After a 30-day pause the next reminder is a month away.
    @Test func nextReminderAfterAMonthsPause() {
        let h = history(
            daily("2026-11-01", through: "2026-11-10", "Europe/Berlin"), in: "Europe/Berlin",
            freezeEvents: [Self.pause("2026-11-11", "2026-12-10", at: "2026-11-10T12:00:00Z")])
        let now = at("2026-11-10T22:00:00+01:00")
        let next = Planner.next(
            history: h, remindAt: 20 * 3600, policy: ReminderPolicy(days: [10]), now: now,
            stateNow: Engine.evaluate(h, at: now))
        #expect(next?.date == day("2026-12-11") && next?.length == 10)
        #expect(next?.due == at("2026-12-11T20:00:00+01:00"))
    }

    /// Travel during a pause: dates skipped by the flight and paused dates alike are bridged.
    @Test func travelDuringAPause() {
        let list = daily("2026-11-01", through: "2026-11-09", "Europe/Berlin")
            + daily("2026-11-16", through: "2026-11-18", "Asia/Tokyo")
        let h = history(
            list, in: "Europe/Berlin", moves: [("2026-11-13T10:00:00Z", "Asia/Tokyo")],
            freezeEvents: [Self.pause("2026-11-10", "2026-11-15", at: "2026-11-09T08:00:00Z")],
            settings: settings(initial: 0, max: 0))
        let s = Engine.evaluate(h, at: at("2026-11-18T22:00:00+09:00"))
        #expect(s.current == 12 && s.settlements.isEmpty)
        #expect(marks(s, "2026-11-10", through: "2026-11-15").allSatisfy { $0 == .paused })
    }

    /// A repair within a window that holds a DST change mends the break: the run goes on through
    /// the repaired date and joins what qualified since; `streak_repaired` carries the restored
    /// length. A check-in stored later for the broken date gives the repair back.
    @Test(arguments: ["Europe/Berlin", "America/Sao_Paulo", "Pacific/Kiritimati"])
    func aRepairMendsTheLatestBreak(zoneID: String) {
        let z = zone(zoneID)
        let list = daily("2026-10-14", through: "2026-10-23", zoneID) + daily("2026-10-25", through: "2026-10-25", zoneID)
        let repairedAt = z.instant(of: day("2026-10-25"), secondsIntoDay: 20 * 3600)
        let mended = Self.repair("2026-10-24", "2026-10-24", at: repairedAt.description)
        let h = history(list, in: zoneID, freezeEvents: [mended], settings: settings(initial: 0, max: 0))
        // Before the repair the streak broke on 2026-10-24.
        let before = Engine.evaluate(h, at: repairedAt - 60)
        #expect(summary(before.settlements).first?.hasPrefix("streak_broken 2026-10-24 len=10") == true)
        #expect(before.current == 1)
        let s = Engine.evaluate(h, at: repairedAt + 60)
        #expect(s.current == 11 && s.mark(day("2026-10-24")) == .repaired)
        #expect(s.settlements.map(\.kind) == [.streakRepaired])
        #expect(s.settlements.first?.date == day("2026-10-24") && s.settlements.first?.at == repairedAt)
        #expect(s.settlements.first?.length == 10)
        // The check-in for the date, stored later: it qualifies, the repair is void.
        let late = CheckIn(
            instant: z.instant(of: day("2026-10-24"), secondsIntoDay: 12 * 3600), zone: z,
            storedAt: repairedAt + 3600)
        let back = Engine.evaluate(
            history(list + [late], in: zoneID, freezeEvents: [mended], settings: settings(initial: 0, max: 0)),
            at: repairedAt + 7200)
        #expect(back.current == 12 && back.settlements.isEmpty)
    }

    /// A repair covers every date from the break up to the day before it that did not qualify.
    @Test func aRepairCoversTheDatesUpToYesterday() {
        let z = "Europe/Berlin"
        let list = daily("2026-11-01", through: "2026-11-07", z) + daily("2026-11-09", through: "2026-11-09", z)
        let h = history(
            list, in: z, freezeEvents: [Self.repair("2026-11-08", "2026-11-10", at: "2026-11-11T09:00:00+01:00")],
            settings: settings(initial: 0, max: 0))
        let s = Engine.evaluate(h, at: at("2026-11-11T10:00:00+01:00"))
        #expect(marks(s, "2026-11-08", through: "2026-11-11") == [.repaired, .qualifying, .repaired, .open])
        #expect(s.current == 8 && s.aliveBeforeToday == 8)
        #expect(s.settlements.map(\.kind) == [.streakRepaired] && s.settlements.first?.length == 8)
    }

    /// A history with rest days, leeway, a pause across a DST change, a freeze, a break and its
    /// repair (America/Los_Angeles).
    static func scenario() -> (StreakHistory, NoticePolicy, Instant, Instant) {
        let z = "America/Los_Angeles"
        var list = daily("2026-10-20", through: "2026-10-28", z) + daily("2026-11-05", through: "2026-11-09", z)
            + Self.weekdays(z).filter {
                $0.instant > at("2026-11-10T00:00:00Z")
                    && ![day("2026-11-16"), day("2026-11-17")].contains($0.zone.date(of: $0.instant))
            }
        list.append(checkin("2026-10-24T01:30:00-07:00", z))
        let events = [
            Self.pause("2026-10-29", "2026-11-04", at: "2026-10-26T08:00:00Z"),
            FreezeEvent(at: at("2026-10-27T08:00:00Z"), kind: .grant),
            Self.repair("2026-11-17", "2026-11-17", at: "2026-11-18T09:00:00-08:00"),
        ]
        var s = Self.rest(["sat", "sun"], leeway: 2)
        s.freeze.initial = 0
        let now = at("2026-11-20T21:00:00-08:00")
        let policy = NoticePolicy(remindAt: 18 * 3600, reminders: ReminderPolicy(days: Array(1...40)))
        let from = at("2026-10-20T00:00:00-07:00")
        return (history(list, in: z, freezeEvents: events, settings: s), policy, from, now)
    }

    /// Arrival order never matters: check-ins and events shuffled or reversed give the same
    /// state and notices.
    @Test(arguments: Array(UInt64(1)...UInt64(4)))
    func orderDoesNotMatter(seed: UInt64) {
        let (sorted, policy, from, now) = Self.scenario()
        var rng = SplitMix64(state: seed)
        var shuffled = sorted
        shuffled.checkins.shuffle(using: &rng)
        shuffled.freezeEvents.shuffle(using: &rng)
        var reversed = sorted
        reversed.checkins.reverse()
        reversed.freezeEvents.reverse()
        for h in [shuffled, reversed] {
            #expect(fingerprint(Engine.evaluate(h, at: now)) == fingerprint(Engine.evaluate(sorted, at: now)))
            #expect(
                Notices.upcoming(h, policy: policy, from: from, through: now)
                    == Notices.upcoming(sorted, policy: policy, from: from, through: now))
        }
    }

    /// One run after quiet days finds what runs every quarter hour found (the `streak_broken` a
    /// later repair mended aside: the runs before the repair found it).
    @Test func oneRunEqualsQuarterHourRuns() {
        let (sorted, policy, from, now) = Self.scenario()
        // Quarter-hour runs against one run at the end: the same notices, by key.
        func key(_ n: Notice) -> String { "\(n.kind.rawValue)/\(n.date)/\(n.length)" }
        var many = Set<String>()
        var since: Instant? = from
        var t = from + 900
        while t <= now {
            let state = Engine.evaluate(sorted, at: t)
            for f in Notices.due(sorted, policy: policy, since: since, now: t, state: state) { many.insert(key(f.notice)) }
            since = t
            t = t + 900
        }
        let once = Set(
            Notices.due(sorted, policy: policy, since: from, now: now, state: Engine.evaluate(sorted, at: now)).map {
                key($0.notice)
            })
        // The settlements a state at the end holds are the final ones (a repair replaced the
        // break it mended: that `streak_broken` was found by the runs before the repair).
        #expect(once.subtracting(many).isEmpty, "\(once.subtracting(many))")
        #expect(many.subtracting(once) == ["streak_broken/2026-11-17/18"], "\(many.subtracting(once))")
        #expect(once.contains("streak_repaired/2026-11-17/18") && once.contains("freeze_used/2026-11-16/18"))
    }
}
