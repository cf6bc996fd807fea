import StreakCore
import StreakDelivery
import StreakStore
import enum StreakTestKit.TestTier  // for .fastTier; the kit's Outcome would clash with StreakJobs'
import Testing

@testable import StreakJobs

/// The lane's decisions (docs/RULES.md, "Lanes"), driven event by event: time, stop and lease
/// are values; no thread, no sleep, no store.
@Suite(.fastTier) struct LaneTests {
    static let notification = Notification(
        kind: .atRisk, user: "u", streak: "daily", localDate: LocalDate(year: 2026, month: 11, day: 21)!,
        due: Instant(seconds: 1_795_287_600), timezone: "UTC", localDue: "2026-11-21T19:00:00+00:00",
        streakLength: 7, message: "at risk", title: "Streak")

    func job(_ id: Int64, attempts: Int = 0) -> DeliveryJob {
        DeliveryJob(id: id, notification: Self.notification, sink: "hook:h", attempts: attempts)
    }

    func at(_ ms: Int64, stopping: Bool = false, lease: Duration? = .seconds(200)) -> Lane.Now {
        Lane.Now(elapsed: .milliseconds(ms), stopping: stopping, lease: lease)
    }

    /// Delivers job `id` at `ms` with `result`: asserts the lane said deliver, answers its actions.
    func deliver(
        _ lane: inout Lane, _ id: Int64, _ result: DeliveryOutcome = .delivered, at ms: Int64 = 0, atOnce: Bool = true
    ) -> [Lane.Action] {
        let j = job(id)
        #expect(lane.next(j, atOnce: atOnce, at(ms)) == .deliver(j))
        return lane.finished(j, result, at(ms))
    }

    func delivered(_ id: Int64) -> Outcome { Outcome(job: job(id), state: .delivered, attempts: 1) }

    @Test func fiveFailuresInARowStopTheLaneForThisRun() {
        var lane = Lane()
        for id: Int64 in 1...4 { _ = deliver(&lane, id, .failed("exit 1")) }
        #expect(lane.halted == nil)
        let fifth = deliver(&lane, 5, .failed("exit 1"))
        #expect(fifth.first == .warnFailureLimit(5))
        #expect(fifth.contains(.tellFailed(Outcome(job: job(5), state: .pending, attempts: 1, error: "exit 1"))))
        #expect(lane.halted == .failureLimit)
        #expect(lane.next(job(6), atOnce: true, at(1)) == .defer(job(6)))
        #expect(lane.report.failed == 5 && lane.report.deferred == 1)
    }

    @Test func aDeliveryInBetweenStartsTheCountAgain() {
        var lane = Lane()
        for id: Int64 in 1...4 { _ = deliver(&lane, id, .failed("exit 1")) }
        _ = deliver(&lane, 5)
        // Nor does a stop in flight count as a failure (nor an unreachable sink: see below).
        _ = deliver(&lane, 6, .interrupted("stopped"))
        for id: Int64 in 8...11 { _ = deliver(&lane, id, .failed("exit 1")) }
        #expect(lane.halted == nil && lane.startLimit(at(1)) != nil)
    }

    @Test func aFullGroupIsCommitted() {
        var lane = Lane()
        for id in 1..<Int64(Lane.groupSize) { #expect(deliver(&lane, id) == []) }
        let last = deliver(&lane, Int64(Lane.groupSize))
        #expect(last == [.commit((1...Int64(Lane.groupSize)).map(delivered))])
        lane.committed()
        #expect(lane.flush() == nil, "nothing is left unsaved")
    }

    @Test func aGroupIsCommittedOnceItIsOld() {
        var lane = Lane()
        #expect(deliver(&lane, 1, at: 1_000) == [])
        #expect(deliver(&lane, 2, at: 1_099) == [])
        #expect(deliver(&lane, 3, at: 1_100) == [.commit([delivered(1), delivered(2), delivered(3)])])
    }

    @Test func whatWentBeforeIsCommittedBeforeASlowDelivery() {
        var lane = Lane()
        _ = deliver(&lane, 1)
        _ = deliver(&lane, 2)
        // The sink may take time (a hook, a paced journal): commit first, then ask again.
        #expect(lane.next(job(3), atOnce: false, at(5)) == .commit([delivered(1), delivered(2)]))
        lane.committed()
        #expect(lane.next(job(3), atOnce: false, at(6)) == .deliver(job(3)))
        #expect(lane.finished(job(3), .delivered, at(900)) == [], "one outcome, not yet old")
        #expect(lane.flush() == .commit([delivered(3)]), "the end of the lane's jobs commits the rest")
    }

    @Test func aDeadDeliveryIsToldAndCommittedAtOnce() {
        var lane = Lane()
        let j = job(1, attempts: 4)
        #expect(lane.next(j, atOnce: true, at(0)) == .deliver(j))
        let dead = Outcome(job: j, state: .dead, attempts: 5, error: "exit 2")
        #expect(lane.finished(j, .failed("exit 2"), at(0)) == [.tellDead(dead), .commit([dead])])
        #expect(lane.report.dead == 1 && lane.report.failed == 0)
    }

    @Test func aStoppedRunStartsNothingAndAStopInFlightIsNotAnAttempt() {
        var lane = Lane()
        #expect(lane.startLimit(at(0, stopping: true)) == nil)
        #expect(lane.next(job(1), atOnce: true, at(0, stopping: true)) == .defer(job(1)))
        let j = job(2, attempts: 1)
        #expect(lane.next(j, atOnce: true, at(1)) == .deliver(j))
        let interrupted = Outcome(job: j, state: .pending, attempts: 1, error: "interrupted: stopped")
        #expect(lane.finished(j, .interrupted("stopped"), at(2, stopping: true)) == [])
        #expect(lane.flush() == .commit([interrupted]))
        #expect(lane.report.deferred == 1 && lane.report.interrupted == 1)
    }

    @Test func nothingStartsPastTheRunsBudget() {
        let lane = Lane()
        let budget = Lane.runBudget / .milliseconds(1)
        #expect(lane.startLimit(at(Int64(budget) - 1_000, lease: .seconds(200))) == .seconds(1))
        #expect(lane.startLimit(at(Int64(budget), lease: .seconds(200))) == nil)
        #expect(lane.startLimit(at(0, lease: .seconds(3))) == .seconds(3), "the lease comes first")
    }

    @Test func aFencedRunStartsNothing() {
        var lane = Lane()
        #expect(lane.next(job(1), atOnce: true, at(0, lease: nil)) == .defer(job(1)))
        #expect(lane.startLimit(at(0, lease: .zero)) == nil)
        // The sink asked again right before it started, and the lease was out: nothing started.
        #expect(lane.next(job(2), atOnce: true, at(0)) == .deliver(job(2)))
        #expect(lane.finished(job(2), nil, at(0, lease: nil)) == [.defer(job(2))])
        #expect(lane.report.deferred == 2 && lane.flush() == nil)
    }

    @Test func aLateHeartbeatFencesTheLane() {
        var lease = Lease(base: 300, hookTimeout: 10)
        #expect(lease.register(at: .zero) == true)
        var lane = Lane()
        let early = Duration.seconds(100)
        #expect(
            lane.next(job(1), atOnce: true, Lane.Now(elapsed: early, lease: lease.remaining(at: early)))
                == .deliver(job(1)))
        // The process was stopped past the fence; its heartbeat comes late and writes nothing.
        let late = Duration.seconds(250)
        #expect(lease.beatDue(at: late) == false)
        #expect(
            lane.next(job(2), atOnce: true, Lane.Now(elapsed: late, lease: lease.remaining(at: late))) == .defer(job(2))
        )
    }

    /// Issue 31 (12): a sink that cannot be reached (a notification server that does not answer
    /// costs its whole time-out) is called once a run: one warning, and its other jobs are
    /// recorded expired without another call.
    @Test func anUnreachableSinkIsCalledOnceAndWarnedAboutOnce() {
        var lane = Lane()
        #expect(deliver(&lane, 1, .unavailable("no reply within 5s")) == [.warnUnavailable("no reply within 5s")])
        #expect(lane.unreachable == "no reply within 5s" && lane.halted == nil, "not a failure")
        let again = "no reply within 5s (not tried again in this run)"
        for id: Int64 in 2...3 {
            #expect(lane.next(job(id), atOnce: false, at(1)) == .expire(job(id), again), "not delivered")
            #expect(lane.expired(job(id), again, at(1)) == [], "no second warning")
        }
        #expect(lane.report.unavailable == 3 && lane.report.delivered == 0)
        #expect(
            lane.flush()
                == .commit(
                    [Outcome(job: job(1), state: .expired, attempts: 1, error: "no reply within 5s")]
                        + [2, 3].map { Outcome(job: job($0), state: .expired, attempts: 0, error: again) }))
        // A stopped run expires nothing more either: what is left waits for the next run.
        #expect(lane.next(job(4), atOnce: true, at(2, stopping: true)) == .defer(job(4)))
    }

    func retry(_ id: Int64, _ check: DeliveryJob.Retry, attempts: Int = 1) -> DeliveryJob {
        var j = job(id, attempts: attempts)
        j.retry = check
        return j
    }

    /// Issue 31 (3): a retry found stale (no longer fresh, or its date done since) is recorded
    /// expired for the sink with the reason, and told; one still due is delivered.
    @Test func aStaleRetryIsExpiredNotDelivered() {
        var lane = Lane()
        let stale = retry(1, .stale("checked in since: 2026-11-21 qualifies"))
        #expect(lane.next(stale, atOnce: false, at(0)) == .expire(stale, "checked in since: 2026-11-21 qualifies"))
        let expired = Outcome(job: stale, state: .expired, attempts: 1, error: "checked in since: 2026-11-21 qualifies")
        #expect(lane.expired(stale, "checked in since: 2026-11-21 qualifies", at(0)) == [.tellStale(expired)])
        let due = retry(2, .stillDue)
        #expect(lane.next(due, atOnce: false, at(1)) == .commit([expired]), "what went before first")
        lane.committed()
        #expect(lane.next(due, atOnce: false, at(1)) == .deliver(due))
        #expect(lane.report.stale == 1 && lane.report.unavailable == 0)
        // Handed over like any outcome when the run delivers beside recording.
        var beside = Lane(handOver: true)
        #expect(beside.next(stale, atOnce: true, at(0)) == .expire(stale, "checked in since: 2026-11-21 qualifies"))
        #expect(
            beside.expired(stale, "checked in since: 2026-11-21 qualifies", at(0))
                == [.tellStale(expired), .handOver([expired])])
    }

    @Test func handedOverOutcomesGoToTheNextTransaction() {
        var lane = Lane(handOver: true)
        #expect(deliver(&lane, 1) == [.handOver([delivered(1)])])
        #expect(lane.next(job(2), atOnce: false, at(0)) == .deliver(job(2)), "no commit of its own first")
        #expect(lane.finished(job(2), .delivered, at(500)) == [.handOver([delivered(2)])])
        #expect(lane.flush() == nil)
    }

    /// Issue 31 (1): an outcome not stored stops the lane, and says what it had delivered.
    @Test func anOutcomeNotStoredStopsTheLane() {
        var lane = Lane()
        _ = deliver(&lane, 1)
        _ = deliver(&lane, 2, .failed("exit 1"))
        #expect(
            lane.next(job(3), atOnce: false, at(1))
                == .commit([delivered(1), Outcome(job: job(2), state: .pending, attempts: 1, error: "exit 1")]))
        #expect(lane.commitFailed() == [.notStored(delivered: [delivered(1)])])
        #expect(lane.halted == .notStored && lane.report.notStored == 1 && lane.report.delivered == 1)
        #expect(lane.next(job(3), atOnce: false, at(2)) == .defer(job(3)))
        #expect(lane.flush() == nil)
    }
}
