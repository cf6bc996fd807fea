import StreakTestKit
import Testing

@testable import StreakDelivery

/// A fake instant: seconds (and fractions) since an arbitrary origin. Nothing here sleeps.
struct FakeInstant: InstantProtocol {
    var offset: Duration
    static func at(_ seconds: Double) -> FakeInstant { FakeInstant(offset: .milliseconds(Int64(seconds * 1000))) }
    func advanced(by duration: Duration) -> FakeInstant { FakeInstant(offset: offset + duration) }
    func duration(to other: FakeInstant) -> Duration { other.offset - offset }
    static func < (lhs: FakeInstant, rhs: FakeInstant) -> Bool { lhs.offset < rhs.offset }
}

@Suite(.fastTier) struct JournalPacerTests {
    @Test func defaultsAre9500Per30Seconds() {
        let pacer = JournalPacer<FakeInstant>()
        #expect(pacer.burst == 9_500)
        #expect(pacer.interval == .seconds(30))
    }

    @Test func allowsTheBurstThenAnEntryEachTimeOneRunsOut() {
        var pacer = JournalPacer<FakeInstant>(burst: 3, interval: .seconds(30))
        #expect(pacer.request(at: .at(0)) == .send)
        #expect(pacer.request(at: .at(1)) == .send)
        #expect(pacer.request(at: .at(2)) == .send)
        // The entry 3 places back (at 0) must be more than 30 s old (and a millisecond).
        #expect(pacer.wouldWait(at: .at(2)))
        #expect(pacer.request(at: .at(2)) == .wait(until: .at(30.001)))
        #expect(pacer.request(at: .at(30)) == .wait(until: .at(30.001)))
        #expect(pacer.request(at: .at(30.001)) == .send)
        // Then the one sent at 1.
        #expect(pacer.request(at: .at(30.001)) == .wait(until: .at(31.001)))
        #expect(pacer.request(at: .at(40)) == .send)
        #expect(pacer.request(at: .at(40)) == .send)
        #expect(pacer.request(at: .at(40)) == .wait(until: .at(60.002)))
    }

    @Test func anEntryAfterAPauseGoesAtOnce() {
        var pacer = JournalPacer<FakeInstant>(burst: 2, interval: .seconds(30))
        #expect(pacer.request(at: .at(0)) == .send)
        #expect(pacer.request(at: .at(100)) == .send)
        #expect(!pacer.wouldWait(at: .at(101)))
        #expect(pacer.request(at: .at(101)) == .send)
        #expect(pacer.request(at: .at(101)) == .wait(until: .at(130.001)))
    }

    @Test func burstZeroNeverPaces() {
        var pacer = JournalPacer<FakeInstant>.unlimited
        for _ in 0..<100_000 { #expect(pacer.request(at: .at(0)) == .send) }
    }

    /// Simulates 100,000 entries with the default pacer and a fake clock that sending does not
    /// advance: no 30-second span may hold more than 9,500 of them (journald's floor is 10,000).
    @Test func noThirtySecondSpanHoldsMoreThanTheBurst() {
        var pacer = JournalPacer<FakeInstant>()
        var now = FakeInstant.at(0)
        var sentAt: [FakeInstant] = []
        var waits = 0
        while sentAt.count < 100_000 {
            switch pacer.request(at: now) {
            case .send: sentAt.append(now)
            case .wait(let until):
                waits += 1
                now = until
            }
        }
        #expect(waits == 10)
        #expect(now == .at(300.01))
        // Closed spans, as journald counts them (an entry at a window's last instant is in it).
        var first = 0
        var most = 0
        for last in sentAt.indices {
            while sentAt[first].advanced(by: .seconds(30)) < sentAt[last] { first += 1 }
            most = max(most, last - first + 1)
        }
        #expect(most == 9_500)
    }

    /// journald's limiter as systemd 252 has it (journald-rate-limit.c): a window opens at the
    /// first entry after the last one ran out (`begin + interval < now`), and counts what comes
    /// until then. Entries come as a busy tick makes them, 4,096 a transaction every 10 s (or
    /// every 3 s), and another message of the service opened journald's window 0 to 30 s before
    /// the first: no window gets more than the burst and that message. (Fixed windows of the
    /// pacer's own let one get 19,000.)
    @Test func noJournaldWindowGetsMoreThanTheBurstWhereverItOpened() {
        for every in [10.0, 3.0] {
            for opened in stride(from: 0.0, to: 30.0, by: 1.0) {
                var pacer = JournalPacer<FakeInstant>()
                var now = FakeInstant.at(0)
                var begin = FakeInstant.at(-opened)
                var inWindow = 1  // the message that opened it
                var most = 0
                for i in 0..<60_000 {
                    now = max(now, .at(every * Double(i / 4096)))
                    while case .wait(let until) = pacer.request(at: now) { now = until }
                    if begin.advanced(by: .seconds(30)) < now {
                        begin = now
                        inWindow = 0
                    }
                    inWindow += 1
                    most = max(most, inWindow)
                }
                #expect(most <= 9_501, "every \(every) s, a window opened \(opened) s before: \(most)")
            }
        }
    }
}
