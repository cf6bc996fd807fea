import StreakCore
import StreakTestKit
import Testing

/// A small deterministic generator, so shuffles repeat from run to run.

/// Everything in a state that must not depend on the order of the input.
func fingerprint(_ s: StreakState) -> String {
    let m = s.marks.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value.rawValue)" }.joined(separator: ",")
    return [
        "today=\(s.today) ended=\(s.endedThrough) current=\(s.current) longest=\(s.longest)",
        "alive=\(s.aliveBeforeToday) freezes=\(s.freezes) todayCount=\(s.todayCount) goal=\(s.goal)",
        "total=\(s.totalCheckins) last=\(s.lastQualifying.map(\.description) ?? "nil")",
        summary(s.settlements).joined(separator: ";"), m,
    ].joined(separator: "\n")
}

/// Arrival order never changes a result (SPEC §2).
@Suite(.fastTier)
struct EngineOrderTests {
    let ny = "America/New_York"

    /// Goal 2 and a 3-hour leeway make attribution depend on the order of
    /// instants, so any dependence on the order of the array would show.
    func checkins() -> [CheckIn] {
        [
            checkin("2027-06-01T09:00:00-04:00", ny, id: "a"), checkin("2027-06-01T21:00:00-04:00", ny, id: "b"),
            checkin("2027-06-02T10:00:00-04:00", ny), checkin("2027-06-03T01:00:00-04:00", ny),
            checkin("2027-06-03T02:00:00-04:00", ny), checkin("2027-06-03T18:00:00-04:00", ny, id: "c"),
            checkin("2027-06-03T18:00:00-04:00", ny, id: "d"), checkin("2027-06-04T12:00:00-04:00", ny),
            checkin("2027-06-04T13:00:00-04:00", ny), checkin("2027-06-05T12:00:00-04:00", ny),
            checkin("2027-06-05T12:30:00-04:00", ny), checkin("2027-06-09T08:00:00-04:00", ny),
            checkin("2027-06-09T12:00:00+01:00", "Europe/London"), checkin("2027-06-10T08:00:00-04:00", ny),
        ]
    }

    func state(_ list: [CheckIn], at now: String) -> StreakState {
        Engine.evaluate(
            history(list, in: ny, settings: settings(goal: 2, leeway: 3, initial: 1, max: 2)), at: at(now))
    }

    @Test(arguments: Array(UInt64(1)...UInt64(12)))
    func shuffledInputGivesTheSameState(seed: UInt64) {
        var rng = SplitMix64(state: seed)
        let sorted = checkins()
        for now in ["2027-06-03T02:30:00-04:00", "2027-06-07T12:00:00-04:00", "2027-06-10T20:00:00-04:00"] {
            #expect(fingerprint(state(sorted.shuffled(using: &rng), at: now)) == fingerprint(state(sorted, at: now)))
        }
    }

    @Test func theSortedStateIsAsExpected() {
        let s = state(checkins(), at: "2027-06-10T20:00:00-04:00")
        // June 2 has one check-in of its own, plus the 01:00 one of June 3 by leeway;
        // the 02:00 one finds June 2 qualifying and stays on June 3.
        #expect(
            marks(s, "2027-06-01", through: "2027-06-10")
                == [
                    .qualifying, .qualifying, .qualifying, .qualifying, .qualifying, .frozen, .missed, .missed,
                    .qualifying, .open,
                ])
        #expect(
            summary(s.settlements) == [
                "freeze_used 2027-06-06 len=5 at=2027-06-07T07:00:00Z",
                "streak_broken 2027-06-07 len=5 at=2027-06-08T07:00:00Z",
            ])
        #expect(s.current == 1)
        #expect(s.longest == 5)
        #expect(s.todayCount == 1)
        #expect(s.freezes == 0)
    }
}
