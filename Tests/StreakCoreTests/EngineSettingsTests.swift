import StreakCore
import StreakTestKit
import Testing

/// A change of goal applies to dates that have not ended (SPEC §3).
@Suite(.fastTier)
struct EngineSettingsTests {
    let ny = "America/New_York"

    func epoch(_ since: Instant, goal: Int, leeway: Int = 0) -> SettingsEpoch {
        SettingsEpoch(since: since, goal: goal, leewayHours: leeway)
    }

    @Test func raisingTheGoalLeavesEndedDatesAlone() {
        // One check-in a day June 1–5; the goal goes to 2 at 08:00 June 5.
        let list = daily("2027-06-01", through: "2027-06-05", ny)
        let epochs = [epoch(early, goal: 1), epoch(at("2027-06-05T08:00:00-04:00"), goal: 2)]
        let h = history(list, in: ny, epochs: epochs, settings: settings(goal: 2))
        let s = Engine.evaluate(h, at: at("2027-06-05T20:00:00-04:00"))
        #expect(s.goal == 2)
        #expect(
            marks(s, "2027-06-01", through: "2027-06-05") == [
                .qualifying, .qualifying, .qualifying, .qualifying, .open,
            ])
        #expect(s.todayCount == 1)
        #expect(s.current == 4)
        // June 5 ends short of the new goal.
        let t = Engine.evaluate(h, at: at("2027-06-06T12:00:00-04:00"))
        #expect(t.mark(day("2027-06-05")) == .frozen)
        #expect(summary(t.settlements) == ["freeze_used 2027-06-05 len=4 at=2027-06-06T04:00:00Z"])
    }

    @Test func unrecordedSettingsApplyFromNow() {
        // The store never recorded an epoch for goal 2: it applies from `now` on.
        let list = daily("2027-06-01", through: "2027-06-05", ny)
        let h = history(list, in: ny, epochs: [epoch(early, goal: 1)], settings: settings(goal: 2))
        let s = Engine.evaluate(h, at: at("2027-06-05T20:00:00-04:00"))
        #expect(s.goal == 2)
        #expect(s.current == 4)
        #expect(s.mark(day("2027-06-05")) == .open)
    }

    @Test func loweringTheGoalDoesNotReviveEndedDates() {
        // Goal 2 through June 4; June 3 had one check-in and ended missed. Goal 1 from June 4, 08:00.
        let list =
            daily("2027-06-01", through: "2027-06-04", ny) + daily("2027-06-01", through: "2027-06-02", hour: 18, ny)
            + [checkin("2027-06-05T12:00:00-04:00", ny)]
        let epochs = [epoch(early, goal: 2), epoch(at("2027-06-04T08:00:00-04:00"), goal: 1)]
        let s = Engine.evaluate(
            history(list, in: ny, epochs: epochs, settings: settings(goal: 1)), at: at("2027-06-05T20:00:00-04:00"))
        #expect(
            marks(s, "2027-06-01", through: "2027-06-05") == [
                .qualifying, .qualifying, .missed, .qualifying, .qualifying,
            ])
        #expect(summary(s.settlements) == ["streak_broken 2027-06-03 len=2 at=2027-06-04T04:00:00Z"])
        #expect(s.current == 2)
        #expect(s.longest == 2)
    }

    @Test func aGoalChangeInsideTheLeewayAppliesToTheDateNotEnded() {
        // Leeway 3 h: June 9 ends at 03:00 EDT June 10. The goal goes to 2 at 01:00
        // June 10, while June 9 has not ended, so June 9 needs two check-ins.
        let list = daily("2027-06-07", through: "2027-06-09", ny)
        let epochs = [epoch(early, goal: 1, leeway: 3), epoch(at("2027-06-10T01:00:00-04:00"), goal: 2, leeway: 3)]
        let s = Engine.evaluate(
            history(list, in: ny, epochs: epochs, settings: settings(goal: 2, leeway: 3)),
            at: at("2027-06-10T12:00:00-04:00"))
        #expect(s.mark(day("2027-06-08")) == .qualifying)
        #expect(s.mark(day("2027-06-09")) == .missed)
        #expect(summary(s.settlements) == ["streak_broken 2027-06-09 len=2 at=2027-06-10T07:00:00Z"])
    }

    /// (when the goal goes from 1 to 2, with no leeway, and whether June 9 with one check-in qualifies).
    @Test(arguments: [
        ("2027-06-09T23:59:59-04:00", false),
        ("2027-06-10T00:00:00-04:00", true),  // June 9 ended at that very instant
        ("2027-06-10T00:00:01-04:00", true),
    ])
    func aGoalChangeAtMidnight(since: String, june9Qualifies: Bool) {
        let list = daily("2027-06-08", through: "2027-06-09", ny)
        let epochs = [epoch(early, goal: 1), epoch(at(since), goal: 2)]
        let s = Engine.evaluate(
            history(list, in: ny, epochs: epochs, settings: settings(goal: 2)), at: at("2027-06-10T12:00:00-04:00"))
        #expect(s.mark(day("2027-06-09")) == (june9Qualifies ? .qualifying : .missed))
        #expect(s.goal == 2)
    }
}
