import StreakCore
import StreakTestKit
import Testing

/// Counting days in one zone: midnights, several check-ins a date, empty histories.
@Suite(.fastTier)
struct EngineBasicsTests {
    let ny = "America/New_York"

    @Test func midnightBoundaryMakesTwoDays() {
        let h = history(
            [checkin("2027-06-09T23:59:59-04:00", ny), checkin("2027-06-10T00:00:01-04:00", ny)], in: ny)
        let s = Engine.evaluate(h, at: at("2027-06-10T12:00:00-04:00"))
        #expect(s.today == day("2027-06-10"))
        #expect(s.endedThrough == day("2027-06-09"))
        #expect(s.current == 2)
        #expect(s.longest == 2)
        #expect(s.aliveBeforeToday == 1)
        #expect(s.todayCount == 1)
        #expect(s.todaySafe)
        #expect(s.lastQualifying == day("2027-06-10"))
        #expect(marks(s, "2027-06-09", through: "2027-06-10") == [.qualifying, .qualifying])
        #expect(s.settlements.isEmpty)
        #expect(s.freezes == 1)
    }

    @Test func severalCheckinsOnOneDateCountOnce() {
        let h = history(
            [
                checkin("2027-06-09T07:00:00-04:00", ny), checkin("2027-06-09T12:00:00-04:00", ny),
                checkin("2027-06-09T23:00:00-04:00", ny), checkin("2027-06-10T09:00:00-04:00", ny),
            ], in: ny)
        let s = Engine.evaluate(h, at: at("2027-06-10T12:00:00-04:00"))
        #expect(s.current == 2)
        #expect(s.longest == 2)
        #expect(s.totalCheckins == 4)
        #expect(s.todayCount == 1)
    }

    @Test func identicalCheckinsWithoutIDsAreNotMerged() {
        // Same instant, same zone, no id: two check-ins (SPEC §1), so goal 2 is met.
        let c = checkin("2027-06-10T09:00:00-04:00", ny)
        let s = Engine.evaluate(
            history([c, c], in: ny, settings: settings(goal: 2)), at: at("2027-06-10T12:00:00-04:00"))
        #expect(s.todayCount == 2)
        #expect(s.current == 1)
        #expect(s.mark(day("2027-06-10")) == .qualifying)
    }

    @Test(arguments: [0, 1, 2])
    func noCheckinsYet(initial: Int) {
        let s = Engine.evaluate(
            history([], in: ny, settings: settings(initial: initial, max: 2)), at: at("2027-06-10T12:00:00-04:00"))
        #expect(s.today == day("2027-06-10"))
        #expect(s.current == 0)
        #expect(s.longest == 0)
        #expect(s.freezes == initial)
        #expect(s.todayCount == 0)
        #expect(s.totalCheckins == 0)
        #expect(s.lastQualifying == nil)
        #expect(s.firstStored == nil)
        #expect(s.settlements.isEmpty)
        #expect(!s.todaySafe)
    }

    @Test func checkinsAfterNowDoNotCount() {
        let h = history([checkin("2027-06-09T12:00:00-04:00", ny), checkin("2027-06-10T13:00:00-04:00", ny)], in: ny)
        let s = Engine.evaluate(h, at: at("2027-06-10T12:00:00-04:00"))
        #expect(s.current == 1)
        #expect(s.todayCount == 0)
        #expect(s.totalCheckins == 1)
        #expect(s.mark(day("2027-06-10")) == .open)
        #expect(!s.todaySafe)
    }

    @Test func breakWithoutFreezes() {
        let h = history(
            daily("2027-06-01", through: "2027-06-05", ny) + daily("2027-06-08", through: "2027-06-09", ny), in: ny,
            settings: settings(initial: 0))
        let s = Engine.evaluate(h, at: at("2027-06-09T20:00:00-04:00"))
        #expect(summary(s.settlements) == ["streak_broken 2027-06-06 len=5 at=2027-06-07T04:00:00Z"])
        #expect(
            marks(s, "2027-06-05", through: "2027-06-09") == [.qualifying, .missed, .missed, .qualifying, .qualifying])
        #expect(s.current == 2)
        #expect(s.longest == 5)
        #expect(s.freezes == 0)
    }

    @Test func yesterdayKeepsTheStreakUntilTodayEnds() {
        let h = history(daily("2027-06-01", through: "2027-06-09", ny), in: ny)
        let s = Engine.evaluate(h, at: at("2027-06-10T23:59:59-04:00"))
        #expect(s.current == 9)
        #expect(s.aliveBeforeToday == 9)
        #expect(s.mark(day("2027-06-10")) == .open)
        #expect(!s.todaySafe)
        #expect(s.settlements.isEmpty)
    }

    @Test func aDateWhoseMidnightDoesNotExist() {
        // Santiago skips 00:00–01:00 on 2027-09-05: 23:59:59 -04 is followed by 01:00 -03.
        let santiago = "America/Santiago"
        let list = [checkin("2027-09-04T23:30:00-04:00", santiago), checkin("2027-09-05T01:00:00-03:00", santiago)]
        let h = history(list, in: santiago)
        // (More than Engine.clockSkew before the second check-in, which would count at once.)
        let before = Engine.evaluate(h, at: at("2027-09-05T03:54:59Z"))
        #expect(before.today == day("2027-09-04"))
        #expect(before.current == 1)
        let s = Engine.evaluate(h, at: at("2027-09-05T04:00:00Z"))
        #expect(s.today == day("2027-09-05"))
        #expect(s.endedThrough == day("2027-09-04"))
        #expect(s.current == 2)
        #expect(s.todayCount == 1)
    }

    @Test func springForwardAndFallBackDatesCountOnce() {
        // The 23-hour and 25-hour dates of New York in 2027, each checked in during the odd hour.
        let list = [
            checkin("2027-03-13T12:00:00-05:00", ny), checkin("2027-03-14T03:30:00-04:00", ny),
            checkin("2027-03-15T12:00:00-04:00", ny), checkin("2027-11-06T12:00:00-04:00", ny),
            checkin("2027-11-07T01:30:00-04:00", ny), checkin("2027-11-07T01:30:00-05:00", ny),
            checkin("2027-11-08T00:00:00-05:00", ny),
        ]
        let spring = Engine.evaluate(history(list, in: ny), at: at("2027-03-15T20:00:00-04:00"))
        #expect(spring.current == 3)
        let fall = Engine.evaluate(history(list, in: ny), at: at("2027-11-08T20:00:00-05:00"))
        #expect(marks(fall, "2027-11-06", through: "2027-11-08") == [.qualifying, .qualifying, .qualifying])
        #expect(fall.current == 3)
        #expect(fall.longest == 3)
    }
}
