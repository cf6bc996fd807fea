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

    @Test func allowsTheBurstThenWaitsForTheWindowToRunOut() {
        var pacer = JournalPacer<FakeInstant>(burst: 3, interval: .seconds(30))
        #expect(pacer.request(at: .at(0)) == .send)
        #expect(pacer.request(at: .at(1)) == .send)
        #expect(pacer.request(at: .at(2)) == .send)
        #expect(pacer.request(at: .at(2)) == .wait(until: .at(30)))
        #expect(pacer.request(at: .at(29.999)) == .wait(until: .at(30)))
        // The window renews when it has run out, and the new one starts at that instant.
        #expect(pacer.request(at: .at(30)) == .send)
        #expect(pacer.request(at: .at(30)) == .send)
        #expect(pacer.request(at: .at(59)) == .send)
        #expect(pacer.request(at: .at(59.5)) == .wait(until: .at(60)))
    }

    @Test func aWindowStartsAtTheFirstEntryAfterAPause() {
        var pacer = JournalPacer<FakeInstant>(burst: 2, interval: .seconds(30))
        #expect(pacer.request(at: .at(0)) == .send)
        #expect(pacer.request(at: .at(100)) == .send)
        #expect(pacer.request(at: .at(101)) == .send)
        #expect(pacer.request(at: .at(101)) == .wait(until: .at(130)))
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
        #expect(now == .at(300))
        // Sliding window over the send times (sorted by construction).
        var first = 0
        var most = 0
        for last in sentAt.indices {
            while sentAt[first].advanced(by: .seconds(30)) <= sentAt[last] { first += 1 }
            most = max(most, last - first + 1)
        }
        #expect(most == 9_500)
    }
}
