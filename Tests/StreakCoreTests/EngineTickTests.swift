import StreakCore
import StreakTestKit
import Testing

/// One evaluation after ten quiet days settles them exactly as an evaluation
/// every quarter hour would have (SPEC §2).
@Suite(.fastTier)
struct EngineTickTests {
    let ny = "America/New_York"

    /// Six days checked in around New York's 2027 fall-back, a move to London
    /// on November 6, a 2-hour leeway and two freezes.
    func quietTenDays() -> StreakHistory {
        history(
            daily("2027-10-30", through: "2027-11-04", ny), in: ny, moves: [("2027-11-06T12:00:00Z", "Europe/London")],
            settings: settings(leeway: 2, initial: 2, max: 2))
    }

    let expected = [
        "freeze_used 2027-11-05 len=6 at=2027-11-06T06:00:00Z",  // 00:00 EDT Nov 6 + 2 h
        "freeze_used 2027-11-06 len=6 at=2027-11-07T02:00:00Z",  // in London now: 00:00 GMT Nov 7 + 2 h
        "streak_broken 2027-11-07 len=6 at=2027-11-08T02:00:00Z",
    ]

    @Test func oneLateEvaluationSettlesTheQuietDays() {
        let s = Engine.evaluate(quietTenDays(), at: at("2027-11-15T03:00:00Z"))
        #expect(summary(s.settlements) == expected)
        #expect(s.today == day("2027-11-15"))
        #expect(s.endedThrough == day("2027-11-14"))
        #expect(s.current == 0)
        #expect(s.longest == 6)
        #expect(s.freezes == 0)
        #expect(
            marks(s, "2027-11-04", through: "2027-11-09") == [.qualifying, .frozen, .frozen, .missed, .missed, .missed])
    }

    @Test func everyQuarterHourSeesTheSameSettlements() {
        let h = quietTenDays()
        let end = at("2027-11-15T03:00:00Z")
        let last = Engine.evaluate(h, at: end)
        var seen: [String] = []
        var previous = at("2027-11-04T16:00:00Z")
        var t = previous
        var freezes = 2
        while t <= end {
            let s = Engine.evaluate(h, at: t)
            let list = summary(s.settlements)
            // What an earlier run saw stands; new settlements only append.
            #expect(Array(list.prefix(seen.count)) == seen, "at \(t)")
            for settlement in s.settlements.dropFirst(seen.count) {
                // Each appears at the first run at or after its date's end.
                #expect(settlement.at > previous && settlement.at <= t, "at \(t)")
            }
            seen.append(contentsOf: list.dropFirst(seen.count))
            #expect(s.freezes <= freezes)
            freezes = s.freezes
            #expect(s.today > s.endedThrough)
            previous = t
            t = t + 900
        }
        #expect(seen == expected)
        #expect(summary(last.settlements) == seen)
        #expect(fingerprint(Engine.evaluate(h, at: previous)) == fingerprint(last))
    }
}
