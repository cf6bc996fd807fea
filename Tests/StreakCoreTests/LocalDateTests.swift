import StreakCore
import StreakTestKit
import Testing

@Suite(.fastTier)
struct LocalDateTests {
    /// (text, day number since 1970-01-01, ISO weekday 1 = Monday), worked out independently.
    static let known: [(String, Int, Int)] = [
        ("1970-01-01", 0, 4),
        ("1969-12-31", -1, 3),
        ("1900-03-01", -25508, 4),
        ("1972-02-29", 789, 2),
        ("2000-01-01", 10957, 6),
        ("2000-02-29", 11016, 2),
        ("2000-03-01", 11017, 3),
        ("2024-02-29", 19782, 4),
        ("2026-11-21", 20778, 6),
        ("2027-03-14", 20891, 7),
        ("2100-02-28", 47540, 7),
        ("2100-03-01", 47541, 1),
        ("2100-12-31", 47846, 5),
    ]

    @Test(arguments: known)
    func knownDates(text: String, number: Int, weekday: Int) {
        let date = LocalDate(text)
        #expect(date?.day == number)
        #expect(date?.isoWeekday == weekday)
        #expect(LocalDate(day: number).description == text)
    }

    static func isLeap(_ y: Int) -> Bool { (y % 4 == 0 && y % 100 != 0) || y % 400 == 0 }

    @Test(arguments: Array(stride(from: 1970, through: 2100, by: 1)))
    func yearRoundTrips(year: Int) throws {
        let jan1 = try #require(LocalDate(year: year, month: 1, day: 1))
        let next = try #require(LocalDate(year: year + 1, month: 1, day: 1))
        #expect(next - jan1 == (Self.isLeap(year) ? 366 : 365))
        // Every date of the year converts back to the same components, in order.
        var d = jan1
        for month in 1...12 {
            let length = month == 2 ? (Self.isLeap(year) ? 29 : 28) : [4, 6, 9, 11].contains(month) ? 30 : 31
            for dom in 1...length {
                let c = d.components
                #expect(c.year == year && c.month == month && c.day == dom)
                #expect(LocalDate(year: year, month: month, day: dom) == d)
                d = d + 1
            }
            #expect(LocalDate(year: year, month: month, day: length + 1) == nil)
        }
        #expect(d == next)
    }

    @Test func leapDays() {
        #expect(LocalDate(year: 2000, month: 2, day: 29) != nil)
        #expect(LocalDate(year: 2024, month: 2, day: 29) != nil)
        #expect(LocalDate(year: 1900, month: 2, day: 29) == nil)
        #expect(LocalDate(year: 2100, month: 2, day: 29) == nil)
        #expect(LocalDate(year: 2027, month: 2, day: 29) == nil)
    }

    @Test func weekdaysCycle() {
        // Seven consecutive dates from a Monday give 1…7.
        let monday = LocalDate("2027-03-08")!
        #expect((0..<7).map { (monday + $0).isoWeekday } == [1, 2, 3, 4, 5, 6, 7])
        // Before 1970 too.
        #expect((LocalDate("1969-12-29")!).isoWeekday == 1)
    }

    @Test(arguments: [
        "2026-02-30", "2026-02-29", "2026-04-31", "2026-13-01", "2026-00-10", "2026-01-00", "2026-1-01",
        "2026-01-1", "26-01-01", "2026/01/01", "2026-01-01T", " 2026-01-01", "2026-01-01 ", "2026-0a-01",
        "+026-01-01", "2026-01--1", "", "20260101",
    ])
    func rejectsBadDates(text: String) {
        #expect(LocalDate(text) == nil)
    }

    @Test(arguments: ["2026-02-28", "2024-02-29", "0001-01-01", "9999-12-31", "2027-12-31"])
    func acceptsGoodDates(text: String) {
        #expect(LocalDate(text)?.description == text)
    }

    @Test func arithmetic() {
        let d = LocalDate("2027-12-31")!
        #expect((d + 1).description == "2028-01-01")
        #expect((LocalDate("2028-03-01")! - 1).description == "2028-02-29")
        #expect(LocalDate("2028-03-01")! - d == 61)
        #expect(d < d + 1)
    }
}
