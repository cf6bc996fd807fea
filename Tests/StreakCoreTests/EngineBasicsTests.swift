import StreakCore
import Testing

/// Counting days in one zone: midnights, several check-ins a date, empty histories.
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
        let s = Engine.evaluate(history([c, c], in: ny, settings: settings(goal: 2)), at: at("2027-06-10T12:00:00-04:00"))
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
        #expect(marks(s, "2027-06-05", through: "2027-06-09") == [.qualifying, .missed, .missed, .qualifying, .qualifying])
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
}
