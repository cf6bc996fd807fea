import StreakTestKit
import Testing

@testable import StreakCore

/// `--remind-at usual` (SPEC §14): the median's rules.
@Suite(.fastTier) struct UsualHourTests {
    let early = 8 * 3600
    let late = 21 * 3600
    let berlin = "Europe/Berlin"

    func time(_ histories: [StreakHistory], at now: String = "2026-11-21T23:30:00Z") -> String {
        Validate.wallTimeText(UsualHour.time(histories, at: at(now), earliest: early, latest: late))
    }

    /// Check-ins at local `times` ("HH:MM") on consecutive dates ending 2026-11-20, in `zoneID`.
    func dated(_ times: [String], _ zoneID: String = "Europe/Berlin") -> [CheckIn] {
        let z = zone(zoneID)
        return times.enumerated().map { i, t in
            let d = day("2026-11-20") - (times.count - 1 - i)
            let instant = z.instant(of: d, secondsIntoDay: Validate.wallTime(t)!)
            return CheckIn(instant: instant, zone: z, storedAt: instant)
        }
    }

    @Test func fewerThanThreeDatesIs2000() {
        #expect(time([]) == "20:00")
        #expect(time([history(dated(["07:10", "07:20"]), in: berlin)]) == "20:00")
        #expect(time([history(dated(["07:10", "07:20", "07:30"]), in: berlin)]) == "08:00")  // clamped
    }

    @Test func theMedianLessHalfAnHourRoundedDownToTheQuarter() {
        #expect(time([history(dated(["18:10", "19:20", "18:40"]), in: berlin)]) == "18:00")
        // An even count takes the lower middle one: 18:00, less 30 minutes.
        #expect(time([history(dated(["17:00", "20:00", "18:00", "19:00"]), in: berlin)]) == "17:30")
        #expect(time([history(dated(["18:44", "18:44", "18:44"]), in: berlin)]) == "18:00")
        #expect(time([history(dated(["18:45", "18:45", "18:45"]), in: berlin)]) == "18:15")
    }

    @Test func onlyTheLatestFourteenDates() {
        let h = history(dated(Array(repeating: "07:00", count: 6) + Array(repeating: "19:00", count: 14)), in: berlin)
        #expect(time([h]) == "18:30")
    }

    @Test func clampedToEarliestAndLatest() {
        #expect(time([history(dated(["05:00", "06:00", "06:30"]), in: berlin)]) == "08:00")
        #expect(time([history(dated(["23:00", "23:30", "23:50"]), in: berlin)]) == "21:00")
    }

    /// A check-in that leeway moved to the date before counts as 24:00 plus its time.
    @Test func leewayCheckinsCountAfterMidnight() {
        let z = zone(berlin)
        var list: [CheckIn] = []
        for d in ["2026-11-18", "2026-11-19", "2026-11-20"] {
            let i = z.instant(of: day(d) + 1, secondsIntoDay: 3600)  // 01:00 the next date
            list.append(CheckIn(instant: i, zone: z, storedAt: i))
        }
        let samples = UsualHour.samples(history(list, in: berlin, settings: settings(leeway: 3)), at: at("2026-11-21T23:00:00Z"))
        #expect(samples.map(\.seconds) == [25 * 3600, 25 * 3600, 25 * 3600])
        #expect(UsualHour.time(samples, earliest: early, latest: 26 * 3600) == 24 * 3600 + 30 * 60)
        #expect(time([history(list, in: berlin, settings: settings(leeway: 3))]) == "21:00")
    }

    /// Each check-in's time of day in its own zone: 19:00 in Tokyo is 19:00, whatever the user's zone.
    @Test func checkinsInOtherZonesUseTheirOwnTime() {
        let list = dated(["19:00", "19:00"], "Asia/Tokyo") + dated(["19:00"], "America/Los_Angeles").map {
            var c = $0
            c.instant = c.instant - 3 * Instant.day
            c.storedAt = c.instant
            return c
        }
        #expect(time([history(list, in: berlin)]) == "18:30")
    }

    /// Of several streaks qualifying one date, the earliest check-in; dates of all streaks count.
    @Test func allStreaksAndOneTimePerDate() {
        let daily = history(dated(["19:00", "19:00", "19:00"]), in: berlin)
        let workout = history(dated(["07:00", "07:00", "07:00"]), in: berlin)
        #expect(time([daily, workout]) == "08:00")  // 06:30, clamped
        let reading = history(dated(["12:00", "12:00", "12:00", "12:00", "12:00", "12:00"]).map {
            var c = $0
            c.instant = c.instant - 3 * Instant.day
            c.storedAt = c.instant
            return c
        }, in: berlin)
        // Dates 2026-11-12 … 11-17 at 12:00 and 11-18 … 11-20 at 19:00: median 12:00.
        #expect(time([daily, reading]) == "11:30")
    }

    /// Recomputed from what is stored: any arrival order, and goal 2 takes the check-in that
    /// reached the goal.
    @Test func arrivalOrderDoesNotMatterAndGoalTwoTakesTheSecond() {
        let list = dated(["08:00", "08:30", "09:00", "20:00", "20:30", "21:00"])
        let sorted = history(list, in: berlin)
        var r = SplitMix64(state: 7)
        for _ in 0..<5 {
            var shuffled = sorted
            shuffled.checkins.shuffle(using: &r)
            #expect(time([shuffled]) == time([sorted]))
        }
        #expect(time([sorted]) == "08:30")  // lower middle of six: 09:00
        // Goal 2, two check-ins a date (09:00 and 19:00): the second reached the goal.
        let z = zone(berlin)
        var two: [CheckIn] = []
        for d in ["2026-11-18", "2026-11-19", "2026-11-20"] {
            for h in [9, 19] {
                let i = z.instant(of: day(d), secondsIntoDay: h * 3600)
                two.append(CheckIn(instant: i, zone: z, storedAt: i))
            }
        }
        #expect(time([history(two, in: berlin, settings: settings(goal: 2))]) == "18:30")
    }
}
