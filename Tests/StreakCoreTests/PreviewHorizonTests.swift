import StreakTestKit
import Testing

@testable import StreakCore

/// Issue 17: `preview --until 520w` took 27 s for 2 users. A year's look must cost about what a
/// week's does once the streak is gone, and find every reminder the long way does.
@Suite(.fastTier) struct PreviewHorizonTests {
    /// Two years of daily check-ins in Berlin, the last yesterday; `freezes` to start with.
    func twoYears(freezes: Int) -> StreakHistory {
        history(
            daily("2024-11-21", through: "2026-11-20", "Europe/Berlin"), in: "Europe/Berlin",
            settings: settings(initial: freezes, max: freezes))
    }

    let from = at("2026-11-21T09:00:00Z")
    let policy = NoticePolicy(remindAt: 20 * 3600, reminders: ReminderPolicy(days: [7, 730]))

    /// Every at_risk the slow way: the rules at each date's reminder instant, to the horizon.
    func everyDay(_ h: StreakHistory, through: Instant) -> [Notice] {
        let z = zone("Europe/Berlin")
        var result: [Notice] = []
        var date = z.date(of: from)
        while let due = Notices.reminderDue(of: date, remindAt: 20 * 3600, zone: z, leewayHours: 0), due <= through {
            if due > from, let n = Notices.atRisk(date, due: due, state: Engine.evaluate(h, at: due), policy: policy) {
                result.append(n)
            }
            date = date + 1
        }
        return result
    }

    @Test(arguments: [1, 40])
    func aYearFindsWhatEveryDayFinds(freezes: Int) {
        let h = twoYears(freezes: freezes)
        let through = from + 365 * Instant.day
        let found = Notices.upcoming(h, policy: policy, from: from, through: through).filter { $0.kind == .atRisk }
        #expect(found == everyDay(h, through: from + 60 * Instant.day))
        #expect(found.count == freezes + 1, "today, then each frozen date keeps the streak at risk")
    }

    @Test func aYearCostsAboutWhatAWeekDoes() {
        let h = twoYears(freezes: 1)
        func fastest(_ days: Int64) -> Duration {
            (0..<3).map { _ in
                ContinuousClock().measure {
                    _ = Notices.upcoming(h, policy: policy, from: from, through: from + days * Instant.day)
                }
            }.min()!
        }
        let week = fastest(7)
        let year = fastest(365)
        // Quadratic, a year was some 80 times a week here; now the look ends when the streak does.
        #expect(year < week * 5, "a week \(week), a year \(year)")
    }
}
