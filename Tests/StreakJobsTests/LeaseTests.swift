import StreakTestKit
import Testing

@testable import StreakJobs

/// The lease's decisions (docs/RULES.md, "Leases"), driven with the run's elapsed time as values:
/// no timer, no store.
@Suite(.fastTier) struct LeaseTests {
    /// The default base, 300 s: a heartbeat every 30 s, fenced 240 s after the last good one.
    func lease() -> Lease { Lease(base: 300, hookTimeout: 12.5) }

    @Test func itsLengthBeatAndFenceComeFromTheBase() {
        let l = lease()
        #expect(l.seconds == 313, "the base and the longest delivery, rounded up")
        #expect(l.beatEvery == .seconds(30) && l.fence == .seconds(240))
        let short = Lease(base: 5, hookTimeout: 4)
        #expect(short.beatEvery == .milliseconds(500) && short.fence == .seconds(4))
    }

    @Test func itRegistersOnceAndFencesNothingBefore() {
        var l = lease()
        #expect(l.remaining(at: .seconds(1_000)) == Lease.beforeRegistration)
        #expect(l.register(at: .seconds(10)) == true)
        #expect(l.register(at: .seconds(11)) == false, "the first delivery's transaction registers, no other")
        #expect(l.remaining(at: .seconds(20)) == .seconds(230))
    }

    @Test func aGoodHeartbeatExtendsItFromWhenItStarted() {
        var l = lease()
        _ = l.register(at: .zero)
        #expect(l.beatDue(at: .seconds(30)) == true)
        l.beat(.alive, startedAt: .seconds(30))
        #expect(l.remaining(at: .seconds(31)) == .seconds(239))
        #expect(l.remaining(at: .seconds(269)) == .seconds(1))
        #expect(l.remaining(at: .seconds(270)) == nil, "fenced once the last good beat is 240 s old")
        #expect(l.state == .fenced)
        #expect(l.beatDue(at: .seconds(271)) == false)
    }

    @Test func aHeartbeatThatFindsTheRegistrationGoneFences() {
        var l = lease()
        _ = l.register(at: .zero)
        #expect(l.beatDue(at: .seconds(30)) == true)
        l.beat(.gone, startedAt: .seconds(30))
        #expect(l.remaining(at: .seconds(31)) == nil)
        l.beat(.alive, startedAt: .seconds(60))
        #expect(l.state == .fenced, "fenced for good")
    }

    @Test func aLateHeartbeatFencesInsteadOfBeating() {
        var l = lease()
        _ = l.register(at: .zero)
        // The process was stopped (SIGSTOP) for 5 minutes: others may have taken over meanwhile.
        #expect(l.beatDue(at: .seconds(300)) == false)
        #expect(l.state == .fenced)
        #expect(l.remaining(at: .seconds(300)) == nil)
    }

    @Test func aFailedHeartbeatLetsTheLeaseRunOut() {
        var l = lease()
        _ = l.register(at: .zero)
        for beat in stride(from: 30, through: 210, by: 30) {
            #expect(l.beatDue(at: .seconds(Int64(beat))) == true)
            l.beat(.failed, startedAt: .seconds(Int64(beat)))
        }
        #expect(l.remaining(at: .seconds(239)) == .seconds(1))
        #expect(l.beatDue(at: .seconds(240)) == false)
        #expect(l.remaining(at: .seconds(240)) == nil)
    }

    @Test func theEndGivesUpWhatWasRegistered() {
        var unregistered = lease()
        #expect(unregistered.end() == false)
        var alive = lease()
        _ = alive.register(at: .zero)
        #expect(alive.end() == true)
        #expect(alive.end() == false, "once")
        #expect(alive.remaining(at: .seconds(1)) == nil)
        #expect(alive.beatDue(at: .seconds(30)) == false)
        var fenced = lease()
        _ = fenced.register(at: .zero)
        _ = fenced.remaining(at: .seconds(600))
        #expect(fenced.end() == true, "a fenced run still gives up its registration")
    }
}
