import StreakCore
import StreakDelivery
import StreakStore
import enum StreakTestKit.TestTier  // for .fastTier; the kit's Outcome would clash with StreakJobs'
import Testing

@testable import StreakJobs

/// What a lane makes of an HTTP server's answer (SPEC §12, docs/RULES.md "Webhooks and hooks at
/// scale"), event by event.
@Suite(.fastTier) struct LaneAnswerTests {
    let t = LaneTests()

    func answered(_ status: Int, retryAfter: Int64? = nil) -> DeliveryOutcome {
        .answered(status: status, retryAfter: retryAfter, detail: "\(status) Reason")
    }

    @Test func a2xxIsDelivered() {
        var lane = Lane()
        for (id, status) in [(Int64(1), 200), (2, 204), (3, 299)] {
            #expect(t.deliver(&lane, id, answered(status)) == [])
        }
        #expect(lane.report.delivered == 3 && lane.halted == nil)
    }

    @Test func goneIsDeadAtOnce() {
        var lane = Lane()
        let actions = t.deliver(&lane, 1, answered(410))
        let dead = Outcome(job: t.job(1), state: .dead, attempts: 1, error: "HTTP 410 Reason")
        #expect(actions == [.tellDead(dead), .commit([dead])])
        #expect(lane.report.dead == 1 && lane.halted == nil)
    }

    @Test func otherStatusesAreFailuresOnTheBackOff() {
        var lane = Lane()
        let actions = t.deliver(&lane, 1, answered(500))
        #expect(actions == [.tellFailed(Outcome(job: t.job(1), state: .pending, attempts: 1, error: "HTTP 500 Reason"))])
        #expect(lane.report.failed == 1 && lane.halted == nil)
    }

    /// A Retry-After is kept with the outcome (the earliest next try) and halts the lane.
    @Test func retryAfterHaltsTheLaneAndIsKept() {
        var lane = Lane()
        let actions = t.deliver(&lane, 1, answered(429, retryAfter: 3600))
        let failed = Outcome(job: t.job(1), state: .pending, attempts: 1, error: "HTTP 429 Reason", retryAfter: 3600)
        #expect(actions == [.warnThrottled(3600), .tellFailed(failed)])
        #expect(lane.halted == .throttled)
        #expect(lane.next(t.job(2), atOnce: true, t.at(1)) == .defer(t.job(2)))
    }

    /// The last attempt's 410 is dead without a Retry-After kept.
    @Test func aDeadDeliveryKeepsNoRetryAfter() {
        var lane = Lane()
        let j = t.job(1, attempts: 4)
        #expect(lane.next(j, atOnce: true, t.at(0)) == .deliver(j))
        let actions = lane.finished(j, answered(503, retryAfter: 60), t.at(0))
        let dead = Outcome(job: j, state: .dead, attempts: 5, error: "HTTP 503 Reason")
        #expect(actions == [.tellDead(dead), .commit([dead])])
    }
}
