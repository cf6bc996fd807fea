import StreakCore
import StreakTestKit
import Testing

/// Leeway: early check-ins of a date may count for the date before (SPEC §1).
@Suite(.fastTier)
struct EngineLeewayTests {
    let ny = "America/New_York"

    /// (time of the check-in on June 10, whether June 9 already has one, the date it counts for).
    @Test(arguments: [
        ("00:00:00", false, "2027-06-09"),
        ("01:00:00", false, "2027-06-09"),
        ("02:59:59", false, "2027-06-09"),
        ("03:00:00", false, "2027-06-10"),  // not less than 3 hours after midnight
        ("04:00:00", false, "2027-06-10"),
        ("01:00:00", true, "2027-06-10"),  // June 9 qualifies already
    ])
    func leewayThreeHours(time: String, june9: Bool, counts: String) {
        var list = [checkin("2027-06-08T12:00:00-04:00", ny)]
        if june9 { list.append(checkin("2027-06-09T12:00:00-04:00", ny)) }
        list.append(checkin("2027-06-10T\(time)-04:00", ny))
        let s = Engine.evaluate(
            history(list, in: ny, settings: settings(leeway: 3)), at: at("2027-06-10T12:00:00-04:00"))
        let forJune9 = counts == "2027-06-09"
        #expect(s.mark(day("2027-06-09")) == (june9 || forJune9 ? .qualifying : .missed))
        #expect(s.mark(day("2027-06-10")) == (forJune9 ? .open : .qualifying))
        #expect(s.todayCount == (forJune9 ? 0 : 1))
        if june9 || forJune9 {
            #expect(s.settlements.isEmpty)
            #expect(s.current == (forJune9 ? 2 : 3))
        } else {
            // June 9 ended at 03:00 EDT June 10 without a check-in: a 1-day streak broke.
            #expect(summary(s.settlements) == ["streak_broken 2027-06-09 len=1 at=2027-06-10T07:00:00Z"])
            #expect(s.current == 1)
        }
    }

    @Test func aDateEndsLeewayHoursAfterTheNextMidnight() {
        let h = history([checkin("2027-06-08T12:00:00-04:00", ny)], in: ny, settings: settings(leeway: 3))
        let inside = Engine.evaluate(h, at: at("2027-06-10T02:59:59-04:00"))
        #expect(inside.today == day("2027-06-10"))
        #expect(inside.endedThrough == day("2027-06-08"))
        #expect(inside.mark(day("2027-06-09")) == .open)
        #expect(inside.current == 1)
        #expect(inside.settlements.isEmpty)
        let after = Engine.evaluate(h, at: at("2027-06-10T03:00:00-04:00"))
        #expect(after.endedThrough == day("2027-06-09"))
        #expect(after.mark(day("2027-06-09")) == .missed)
        #expect(after.current == 0)
        #expect(after.settlements.count == 1)
    }

    @Test func leewayWithGoalTwo() {
        // June 9 has one check-in; 01:00 June 10 makes it two, 02:00 is June 10's own.
        let list = [
            checkin("2027-06-09T12:00:00-04:00", ny), checkin("2027-06-10T01:00:00-04:00", ny),
            checkin("2027-06-10T02:00:00-04:00", ny),
        ]
        let s = Engine.evaluate(
            history(list, in: ny, settings: settings(goal: 2, leeway: 3)), at: at("2027-06-10T12:00:00-04:00"))
        #expect(s.mark(day("2027-06-09")) == .qualifying)
        #expect(s.todayCount == 1)
        #expect(s.current == 1)
    }

    @Test func leewayIsElapsedTimeAcrossSpringForward() {
        // 2027-03-14 in New York starts at 05:00Z; 02:00-03:00 does not exist, so
        // 3 hours of elapsed time end at 04:00 EDT (08:00Z).
        let list = [checkin("2027-03-12T12:00:00-05:00", ny), checkin("2027-03-14T03:59:59-04:00", ny)]
        let s = Engine.evaluate(
            history(list, in: ny, settings: settings(leeway: 3)), at: at("2027-03-14T12:00:00-04:00"))
        #expect(s.mark(day("2027-03-13")) == .qualifying)
        #expect(s.todayCount == 0)
        #expect(s.current == 2)
        let late = [checkin("2027-03-12T12:00:00-05:00", ny), checkin("2027-03-14T04:00:00-04:00", ny)]
        let t = Engine.evaluate(
            history(late, in: ny, settings: settings(leeway: 3)), at: at("2027-03-14T12:00:00-04:00"))
        #expect(t.todayCount == 1)
        #expect(t.mark(day("2027-03-13")) == .missed)
        #expect(t.endedThrough == day("2027-03-13"))
        #expect(summary(t.settlements) == ["streak_broken 2027-03-13 len=1 at=2027-03-14T08:00:00Z"])
    }
}
