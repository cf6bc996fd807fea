import StreakCore
import StreakTestKit
import Testing

/// Goal-based days (goal > 1).
@Suite(.fastTier)
struct EngineGoalTests {
    let ny = "America/New_York"

    /// (check-ins today, does today qualify, current streak) with goal 2 and June 8–9 met.
    @Test(arguments: [(0, false, 2), (1, false, 2), (2, true, 3), (3, true, 3)])
    func goalTwo(today: Int, qualifies: Bool, current: Int) {
        var list = (0..<2).flatMap { k in
            [checkin("2027-06-0\(8 + k)T09:00:00-04:00", ny), checkin("2027-06-0\(8 + k)T18:00:00-04:00", ny)]
        }
        for i in 0..<today { list.append(checkin("2027-06-10T0\(i + 6):00:00-04:00", ny)) }
        let s = Engine.evaluate(history(list, in: ny, settings: settings(goal: 2)), at: at("2027-06-10T12:00:00-04:00"))
        #expect(s.goal == 2)
        #expect(s.todayCount == today)
        #expect(s.todaySafe == qualifies)
        #expect(s.mark(day("2027-06-10")) == (qualifies ? .qualifying : .open))
        #expect(s.current == current)
        #expect(s.aliveBeforeToday == 2)
    }

    @Test func anEndedDateShortOfTheGoalIsMissed() {
        let list = [
            checkin("2027-06-08T09:00:00-04:00", ny), checkin("2027-06-08T10:00:00-04:00", ny),
            checkin("2027-06-09T09:00:00-04:00", ny), checkin("2027-06-10T09:00:00-04:00", ny),
            checkin("2027-06-10T10:00:00-04:00", ny),
        ]
        let s = Engine.evaluate(history(list, in: ny, settings: settings(goal: 2)), at: at("2027-06-10T12:00:00-04:00"))
        #expect(marks(s, "2027-06-08", through: "2027-06-10") == [.qualifying, .missed, .qualifying])
        #expect(summary(s.settlements) == ["streak_broken 2027-06-09 len=1 at=2027-06-10T04:00:00Z"])
        #expect(s.current == 1)
        #expect(s.longest == 1)
        #expect(s.totalCheckins == 5)
    }
}
