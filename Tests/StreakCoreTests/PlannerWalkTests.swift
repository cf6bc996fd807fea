import StreakTestKit
import Testing

@testable import StreakCore

/// `Planner.next` by the simple walk (`Notices.upcomingSimple`, one walk for every date ahead)
/// answers exactly what evaluating the engine at each date's due instant answers, on the random
/// histories of `SimpleNoticesTests` (simple ones and everything around them).
@Suite(.fastTier) struct PlannerWalkTests {
    @Test func theNextReminderByTheWalkEqualsTheEngines() {
        let zones = SimpleNoticesTests.zoneIDs.map(zone)
        var r = SplitMix64(state: 3232)
        var (simple, found) = (0, 0)
        let count = 3_000
        for i in 0..<count {
            let c = SimpleNoticesTests.randomCase(&r, zones: zones, forgiving: 10)
            guard let remindAt = c.policy.remindAt else { continue }
            let now = c.from
            let state = Engine.evaluate(c.history, at: now)
            let next = Planner.next(
                history: c.history, remindAt: remindAt, policy: c.policy.reminders, now: now, stateNow: state)
            let engine = Planner.nextEvaluating(
                Planner.candidates(history: c.history, stateNow: state), history: c.history, remindAt: remindAt,
                policy: c.policy.reminders, now: now, stateNow: state)
            if Notices.upcomingSimple(c.history, policy: c.policy, from: now, through: now + 1) != nil { simple += 1 }
            if next != nil { found += 1 }
            #expect(
                next == engine,
                "case \(i) at \(now): walk \(String(describing: next)), engine \(String(describing: engine))")
            if next != engine { break }
        }
        // Most took the walk, and many had a reminder ahead.
        #expect(simple > count / 3, "simple histories: \(simple)")
        #expect(found > count / 20, "reminders ahead: \(found)")
    }
}
