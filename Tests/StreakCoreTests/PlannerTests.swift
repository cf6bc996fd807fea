import StreakJobs
import StreakTestKit
import Testing

@testable import StreakCore

private func plannerZone(_ id: String) -> Zone { Zone(identifier: id, rules: FoundationZoneRules(identifier: id)!) }
private func instant(_ s: String) -> Instant { RFC3339.parse(s)! }

/// A streak of `days` days ending the day before `today` (check-ins at local noon).
private func history(zone: String, today: String, days: Int) -> StreakHistory {
    let z = plannerZone(zone)
    let t = LocalDate(today)!
    let checkins = (1...days).map { k in
        let at = z.instant(of: t - k, secondsIntoDay: 12 * 3600)
        return CheckIn(instant: at, zone: z, storedAt: at)
    }
    return StreakHistory(checkins: checkins, zones: [ZoneChange(since: instant("2026-01-01T00:00:00Z"), zone: z)])
}

@Suite(.fastTier) struct PlannerTests {
    @Test(arguments: [
        // zone, date, remind at, expected due: ordinary, spring-forward gap (moves forward), fall-back (first occurrence)
        ("America/New_York", "2027-03-13", 20 * 3600, "2027-03-14T01:00:00Z"),
        ("America/New_York", "2027-03-14", 2 * 3600 + 1800, "2027-03-14T07:30:00Z"),
        ("America/New_York", "2027-11-07", 1 * 3600 + 1800, "2027-11-07T05:30:00Z"),
        ("Europe/London", "2027-03-28", 1 * 3600 + 1800, "2027-03-28T01:30:00Z"),
        ("Australia/Lord_Howe", "2027-10-03", 2 * 3600 + 900, "2027-10-02T15:45:00Z"),
        ("Asia/Kathmandu", "2026-11-21", 20 * 3600, "2026-11-21T14:15:00Z"),
        ("Pacific/Chatham", "2026-11-21", 20 * 3600, "2026-11-21T06:15:00Z"),
        ("Pacific/Kiritimati", "2026-11-21", 20 * 3600, "2026-11-21T06:00:00Z"),
        ("Pacific/Pago_Pago", "2026-11-21", 20 * 3600, "2026-11-22T07:00:00Z"),
    ])
    func atRiskDueInstants(zone: String, date: String, remindAt: Int, due: String) {
        let h = history(zone: zone, today: date, days: 7)
        let now = plannerZone(zone).start(of: LocalDate(date)!) + 60
        let state = Engine.evaluate(h, at: now)
        let r = Planner.atRisk(
            on: LocalDate(date)!, history: h, remindAt: remindAt, policy: ReminderPolicy(), now: now, stateNow: state)
        #expect(r == PlannedReminder(date: LocalDate(date)!, due: instant(due), length: 7))
    }

    @Test func noReminderForLengthsOutsideTheListOrWhenCheckedIn() {
        let h = history(zone: "Europe/Berlin", today: "2026-11-21", days: 6)
        let now = instant("2026-11-21T08:00:00Z")
        let state = Engine.evaluate(h, at: now)
        #expect(Planner.next(history: h, remindAt: 72000, policy: ReminderPolicy(), now: now, stateNow: state) == nil)
        var done = history(zone: "Europe/Berlin", today: "2026-11-21", days: 7)
        let z = plannerZone("Europe/Berlin")
        done.checkins.append(CheckIn(instant: now - 60, zone: z, storedAt: now))
        let doneState = Engine.evaluate(done, at: now)
        #expect(
            Planner.atRisk(
                on: LocalDate("2026-11-21")!, history: done, remindAt: 72000, policy: ReminderPolicy(), now: now,
                stateNow: doneState) == nil)
    }

    @Test func aFreezeKeepsTheStreakAtRiskTheNextDay() {
        let h = history(zone: "Europe/Berlin", today: "2026-11-21", days: 7)
        let now = instant("2026-11-21T20:00:00Z")  // 21:00 local: today's reminder has passed
        let state = Engine.evaluate(h, at: now)
        let next = Planner.next(history: h, remindAt: 72000, policy: ReminderPolicy(), now: now, stateNow: state)
        #expect(
            next == PlannedReminder(date: LocalDate("2026-11-22")!, due: instant("2026-11-22T19:00:00Z"), length: 7))
    }

    @Test func refillEveryThirtyDays() {
        let first = instant("2026-10-01T00:00:00Z")
        #expect(!Refill.isDue(lastRefill: nil, firstStored: nil, now: first + 100 * Instant.day))
        #expect(!Refill.isDue(lastRefill: nil, firstStored: first, now: first + 720 * Instant.hour - 1))
        #expect(Refill.isDue(lastRefill: nil, firstStored: first, now: first + 720 * Instant.hour))
        #expect(!Refill.isDue(lastRefill: first + 10 * Instant.day, firstStored: first, now: first + 30 * Instant.day))
        #expect(Refill.nextEligible(lastRefill: first, firstStored: nil) == first + 30 * Instant.day)
        #expect(Refill.apply(freezes: 0, max: 1) == 1)
        #expect(Refill.apply(freezes: 1, max: 1) == 1)
    }
}
