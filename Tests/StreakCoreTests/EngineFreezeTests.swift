import StreakCore
import StreakTestKit
import Testing

/// Streak freezes: automatic use at day end, the minimum streak, manual use, grants (SPEC §3).
@Suite(.fastTier)
struct EngineFreezeTests {
    let ny = "America/New_York"

    func state(
        _ list: [CheckIn], at now: String, _ s: StreakSettings = StreakSettings(), events: [FreezeEvent] = []
    ) -> StreakState {
        Engine.evaluate(history(list, in: ny, freezeEvents: events, settings: s), at: at(now))
    }

    @Test func autoUseCoversAMissedDate() {
        let five = daily("2027-06-01", through: "2027-06-05", ny)
        // June 7, before checking in: kept, not increased.
        let s = state(five, at: "2027-06-07T10:00:00-04:00")
        #expect(s.mark(day("2027-06-06")) == .frozen)
        #expect(summary(s.settlements) == ["freeze_used 2027-06-06 len=5 at=2027-06-07T04:00:00Z"])
        #expect(s.freezes == 0)
        #expect(s.current == 5)
        #expect(s.aliveBeforeToday == 5)
        #expect(s.longest == 5)
        // Checked in on June 7: the run goes on over the frozen date.
        let t = state(five + [checkin("2027-06-07T12:00:00-04:00", ny)], at: "2027-06-07T20:00:00-04:00")
        #expect(t.current == 6)
        #expect(t.longest == 6)
        #expect(t.settlements == s.settlements)
    }

    /// (streak length before the missed date, minimum streak, freezes, auto-use, expected settlement kind).
    @Test(arguments: [
        (2, 3, 1, true, Settlement.Kind.streakBroken),
        (3, 3, 1, true, .freezeUsed),
        (1, 1, 1, true, .freezeUsed),
        (5, 3, 0, true, .streakBroken),
        (5, 3, 1, false, .streakBroken),
        (5, 6, 1, true, .streakBroken),
    ])
    func minimumStreakAndAvailability(length: Int, minStreak: Int, initial: Int, autoUse: Bool, kind: Settlement.Kind) {
        let list = daily("2027-06-01", through: "2027-06-0\(length)", ny)
        let missed = day("2027-06-01") + length
        let s = state(
            list, at: "2027-06-\(length + 2 < 10 ? "0" : "")\(length + 2)T12:00:00-04:00",
            settings(initial: initial, minStreak: minStreak, autoUse: autoUse))
        #expect(s.settlements.map(\.kind) == [kind])
        #expect(s.settlements.first?.date == missed)
        #expect(s.settlements.first?.length == length)
        #expect(s.longest == length)
        if kind == .freezeUsed {
            #expect(s.mark(missed) == .frozen)
            #expect(s.freezes == initial - 1)
            #expect(s.current == length)
        } else {
            #expect(s.mark(missed) == .missed)
            #expect(s.freezes == initial)
            #expect(s.current == 0)
        }
    }

    @Test func consecutiveMissedDatesEachTakeAFreeze() {
        let s = state(
            daily("2027-06-01", through: "2027-06-05", ny), at: "2027-06-09T12:00:00-04:00",
            settings(initial: 2, max: 2))
        #expect(
            summary(s.settlements) == [
                "freeze_used 2027-06-06 len=5 at=2027-06-07T04:00:00Z",
                "freeze_used 2027-06-07 len=5 at=2027-06-08T04:00:00Z",
                "streak_broken 2027-06-08 len=5 at=2027-06-09T04:00:00Z",
            ])
        #expect(marks(s, "2027-06-05", through: "2027-06-09") == [.qualifying, .frozen, .frozen, .missed, .open])
        #expect(s.freezes == 0)
        #expect(s.current == 0)
        #expect(s.longest == 5)
    }

    @Test func aLateCheckinForAFrozenDateGivesTheFreezeBack() {
        let five = daily("2027-06-01", through: "2027-06-05", ny) + [checkin("2027-06-07T12:00:00-04:00", ny)]
        let before = state(five, at: "2027-06-08T10:00:00-04:00")
        #expect(before.mark(day("2027-06-06")) == .frozen)
        #expect(before.freezes == 0)
        #expect(before.current == 6)
        // The June 6 check-in syncs on June 8.
        let late = checkin("2027-06-06T20:00:00-04:00", ny, storedAt: "2027-06-08T09:00:00-04:00")
        let after = state(five + [late], at: "2027-06-08T10:00:00-04:00")
        #expect(after.mark(day("2027-06-06")) == .qualifying)
        #expect(after.settlements.isEmpty)
        #expect(after.freezes == 1)
        #expect(after.current == 7)
        #expect(after.longest == 7)
    }

    @Test func aLateCheckinUndoesABreak() {
        let list = daily("2027-06-01", through: "2027-06-02", ny) + [checkin("2027-06-04T12:00:00-04:00", ny)]
        let broken = state(list, at: "2027-06-04T20:00:00-04:00")
        #expect(summary(broken.settlements) == ["streak_broken 2027-06-03 len=2 at=2027-06-04T04:00:00Z"])
        #expect(broken.current == 1)
        let late = checkin("2027-06-03T21:00:00-04:00", ny, storedAt: "2027-06-04T19:00:00-04:00")
        let mended = state(list + [late], at: "2027-06-04T20:00:00-04:00")
        #expect(mended.settlements.isEmpty)
        #expect(mended.current == 4)
    }

    @Test func manualUseForToday() {
        let five = daily("2027-06-01", through: "2027-06-05", ny)
        let use = FreezeEvent(at: at("2027-06-06T09:00:00-04:00"), kind: .use(day("2027-06-06")))
        let s = state(five, at: "2027-06-06T10:00:00-04:00", events: [use])
        #expect(s.freezes == 0)
        #expect(s.mark(day("2027-06-06")) == .frozen)
        #expect(s.todaySafe)
        #expect(s.current == 5)
        // The frozen date ends: no settlement (the user chose it), the streak stays.
        let next = state(five, at: "2027-06-07T12:00:00-04:00", events: [use])
        #expect(next.mark(day("2027-06-06")) == .frozen)
        #expect(next.settlements.isEmpty)
        #expect(next.freezes == 0)
        #expect(next.current == 5)
        // The frozen date qualifies after all: the freeze comes back.
        let checked = state(
            five + [checkin("2027-06-06T20:00:00-04:00", ny)], at: "2027-06-06T21:00:00-04:00", events: [use])
        #expect(checked.mark(day("2027-06-06")) == .qualifying)
        #expect(checked.freezes == 1)
        #expect(checked.current == 6)
    }

    @Test func manualUseInAdvance() {
        let five = daily("2027-06-01", through: "2027-06-05", ny)
        let use = FreezeEvent(at: at("2027-06-05T20:00:00-04:00"), kind: .use(day("2027-06-07")))
        let s = state(five, at: "2027-06-05T21:00:00-04:00", events: [use])
        #expect(s.freezes == 0)
        #expect(s.mark(day("2027-06-07")) == .frozen)
        // June 6 checked in, June 7 frozen in advance, June 8 checked in.
        let list = five + [checkin("2027-06-06T12:00:00-04:00", ny), checkin("2027-06-08T12:00:00-04:00", ny)]
        let t = state(list, at: "2027-06-08T20:00:00-04:00", events: [use])
        #expect(marks(t, "2027-06-06", through: "2027-06-08") == [.qualifying, .frozen, .qualifying])
        #expect(t.current == 7)
        #expect(t.settlements.isEmpty)
    }

    @Test func manualUseWithoutAFreezeDoesNothing() {
        let five = daily("2027-06-01", through: "2027-06-05", ny)
        let use = FreezeEvent(at: at("2027-06-06T09:00:00-04:00"), kind: .use(day("2027-06-06")))
        let s = state(five, at: "2027-06-06T10:00:00-04:00", settings(initial: 0), events: [use])
        #expect(s.freezes == 0)
        #expect(s.mark(day("2027-06-06")) == .open)
        #expect(!s.todaySafe)
    }

    /// (initial, max, grants and refills before now, expected freezes).
    @Test(arguments: [
        (1, 1, 1, 1), (1, 1, 3, 1), (0, 1, 1, 1), (0, 2, 1, 1), (0, 2, 2, 2), (0, 2, 5, 2), (1, 3, 1, 2),
    ])
    func grantsAndRefillsAreCappedAtTheMaximum(initial: Int, max: Int, count: Int, expected: Int) {
        let events = (0..<count).map { k in
            FreezeEvent(at: at("2027-06-0\(k % 5 + 1)T08:00:00-04:00") + Int64(k), kind: k % 2 == 0 ? .grant : .refill)
        }
        let s = state(
            daily("2027-06-01", through: "2027-06-09", ny), at: "2027-06-09T20:00:00-04:00",
            settings(initial: initial, max: max), events: events)
        #expect(s.freezes == expected)
    }

    @Test func aGrantAfterAUseRefillsTheFreeze() {
        let list = daily("2027-06-01", through: "2027-06-05", ny) + daily("2027-06-07", through: "2027-06-08", ny)
        let grant = FreezeEvent(at: at("2027-06-08T09:00:00-04:00"), kind: .grant)
        let s = state(list, at: "2027-06-10T12:00:00-04:00", events: [grant])
        // June 6 took the initial freeze; June 9 takes the granted one.
        #expect(
            summary(s.settlements) == [
                "freeze_used 2027-06-06 len=5 at=2027-06-07T04:00:00Z",
                "freeze_used 2027-06-09 len=7 at=2027-06-10T04:00:00Z",
            ])
        #expect(s.freezes == 0)
        #expect(s.current == 7)
    }

    @Test func longestIsKeptAfterABreak() {
        let list = daily("2027-06-01", through: "2027-06-05", ny) + daily("2027-06-09", through: "2027-06-10", ny)
        let s = state(list, at: "2027-06-10T20:00:00-04:00")
        #expect(
            summary(s.settlements) == [
                "freeze_used 2027-06-06 len=5 at=2027-06-07T04:00:00Z",
                "streak_broken 2027-06-07 len=5 at=2027-06-08T04:00:00Z",
            ])
        #expect(s.current == 2)
        #expect(s.longest == 5)
        #expect(marks(s, "2027-06-06", through: "2027-06-08") == [.frozen, .missed, .missed])
    }
}
