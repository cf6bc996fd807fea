import StreakCore
import StreakDelivery
import StreakStore
import enum StreakTestKit.TestTier  // for .fastTier; the kit's Outcome would clash with StreakJobs'
import Testing

@testable import StreakJobs

/// A wide lane's commits (`Lane.wide`: a webhook's or a hook's `concurrency`): groups of half
/// `groupSize` committed while deliveries go on, one commit at a time, and no delivery started
/// while a whole group is delivered and not stored (docs/RULES.md, "Lanes").
@Suite(.fastTier) struct WideLaneTests {
    let t = LaneTests()
    var half: Int64 { Int64(Lane.groupSize / 2) }

    @Test func halfAGroupIsCommittedAndDeliveriesGoOnMeanwhile() {
        var lane = Lane(wide: true)
        for id in 1..<half { #expect(t.deliver(&lane, id) == []) }
        #expect(t.deliver(&lane, half) == [.commit((1...half).map(t.delivered))])
        // The commit is being written: deliveries go on, and no second commit starts beside it.
        for id in (half + 1)...(2 * half - 1) { #expect(t.deliver(&lane, id) == []) }
        #expect(t.deliver(&lane, 2 * half) == [])
        // A whole group delivered and not stored: hold, nothing deferred, the same job asked again.
        #expect(lane.next(t.job(2 * half + 1), atOnce: true, t.at(1)) == .hold)
        #expect(lane.report.deferred == 0)
        #expect(lane.flush() == nil, "one commit at a time")
        // The commit back: the group that came meanwhile is committed next, and the lane goes on.
        #expect(lane.committed() == .commit(((half + 1)...(2 * half)).map(t.delivered)))
        #expect(t.deliver(&lane, 2 * half + 1) == [])
        #expect(lane.committed() == nil)
        #expect(lane.flush() == .commit([t.delivered(2 * half + 1)]))
    }

    @Test func aDeadOutcomeIsCommittedRightAfterTheCommitInFlight() {
        var lane = Lane(wide: true)
        for id in 1...half { _ = t.deliver(&lane, id) }
        let dead = t.deliver(&lane, half + 1, .answered(status: 410, retryAfter: nil, detail: "410 Gone"))
        #expect(!dead.contains { if case .commit = $0 { true } else { false } })
        guard case .commit(let next)? = lane.committed() else {
            Issue.record("the dead outcome waits for no more")
            return
        }
        #expect(next.map(\.state) == [.dead])
    }

    @Test func aCommitThatFailsStopsTheLaneAndTheNextGroupIsStillTried() {
        var lane = Lane(wide: true)
        for id in 1...(2 * half) { _ = t.deliver(&lane, id) }
        let actions = lane.commitFailed()
        #expect(actions.first == .notStored(delivered: (1...half).map(t.delivered)))
        #expect(actions.dropFirst().first == .commit(((half + 1)...(2 * half)).map(t.delivered)))
        #expect(lane.next(t.job(999), atOnce: true, t.at(1)) == .defer(t.job(999)))
    }

    @Test func aNarrowLaneNeverHolds() {
        var lane = Lane()
        for id in 1..<Int64(Lane.groupSize) { #expect(t.deliver(&lane, id) == []) }
        #expect(lane.next(t.job(9999), atOnce: true, t.at(1)) == .deliver(t.job(9999)))
    }
}
