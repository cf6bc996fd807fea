import StreakCore
import StreakTestKit
import Testing

/// TZ strings from the footers of tzdata 2025b, with their 2027 transitions
/// worked out by hand (the same instants as `zdump` lists for those zones).
@Suite(.fastTier)
struct PosixTZTests {
    static let rules: [(String, [(String, Int)])] = [
        ("EST5EDT,M3.2.0,M11.1.0", [("2027-03-14T07:00:00Z", -14400), ("2027-11-07T06:00:00Z", -18000)]),
        ("CET-1CEST,M3.5.0,M10.5.0/3", [("2027-03-28T01:00:00Z", 7200), ("2027-10-31T01:00:00Z", 3600)]),
        // Europe/Dublin: "daylight" is winter, an hour behind standard.
        ("IST-1GMT0,M10.5.0,M3.5.0/1", [("2027-03-28T01:00:00Z", 3600), ("2027-10-31T01:00:00Z", 0)]),
        // America/Nuuk: a negative time, 22:59:59 on the day before.
        ("<-02>2<-01>,M3.5.0/-1,M10.5.0/0", [("2027-03-28T01:00:00Z", -3600), ("2027-10-31T01:00:00Z", -7200)]),
        // Asia/Jerusalem: 26:00 on the Thursday is 02:00 on Friday.
        ("IST-2IDT,M3.4.4/26,M10.5.0", [("2027-03-26T00:00:00Z", 10800), ("2027-10-30T23:00:00Z", 7200)]),
        // Asia/Gaza's footer: 50 hours after the Thursday.
        ("EET-2EEST,M3.4.4/50,M10.4.4/50", [("2027-03-27T00:00:00Z", 10800), ("2027-10-29T23:00:00Z", 7200)]),
        // Southern hemisphere: the year starts in daylight time.
        ("<+1030>-10:30<+11>-11,M10.1.0,M4.1.0", [("2027-04-03T15:00:00Z", 37800), ("2027-10-02T15:30:00Z", 39600)]),
        (
            "<+1245>-12:45<+1345>,M9.5.0/2:45,M4.1.0/3:45",
            [("2027-04-03T14:00:00Z", 45900), ("2027-09-25T14:00:00Z", 49500)]
        ),
        ("<-04>4<-03>,M9.1.6/24,M4.1.6/24", [("2027-04-04T03:00:00Z", -14400), ("2027-09-05T04:00:00Z", -10800)]),
        ("<+0545>-5:45", []),
    ]

    @Test(arguments: rules)
    func transitions2027(text: String, expected: [(String, Int)]) throws {
        let rule = try #require(PosixTZ(text))
        let found = rule.transitions(year: 2027)
        #expect(found.map(\.at) == expected.map { at($0.0).seconds })
        #expect(found.map(\.offset) == expected.map(\.1))
        for (instant, offset) in expected {
            #expect(rule.offset(at: at(instant).seconds) == offset)
            #expect(rule.offset(at: at(instant).seconds - 1) != offset)
        }
    }

    @Test func offsetsAndDefaults() throws {
        #expect(PosixTZ("<+0545>-5:45") == PosixTZ(standard: 20700))
        #expect(PosixTZ("<-00>0") == PosixTZ(standard: 0))
        let newfoundland = try #require(PosixTZ("NST3:30NDT,M3.2.0,M11.1.0"))
        #expect(newfoundland.standard == -12600)
        #expect(newfoundland.daylight?.offset == -9000)
        #expect(newfoundland.daylight?.start.day == .monthWeek(month: 3, week: 2, weekday: 0))
        #expect(newfoundland.daylight?.start.time == 7200)
        #expect(PosixTZ("EST5EDT4,M3.2.0/-1:30:15,M11.1.0")?.daylight?.start.time == -5415)
    }

    /// `Jn` never counts February 29; `n` does.
    @Test func julianDays() throws {
        let j = try #require(PosixTZ("<-03>3<-02>,J60/0,J365/0"))
        #expect(
            j.transitions(year: 2028).map(\.at) == [
                at("2028-03-01T03:00:00Z").seconds, at("2028-12-31T02:00:00Z").seconds,
            ])
        #expect(
            j.transitions(year: 2027).map(\.at) == [
                at("2027-03-01T03:00:00Z").seconds, at("2027-12-31T02:00:00Z").seconds,
            ])
        let n = try #require(PosixTZ("<-03>3<-02>,59/0,365/0"))
        #expect(
            n.transitions(year: 2028).map(\.at) == [
                at("2028-02-29T03:00:00Z").seconds, at("2028-12-31T02:00:00Z").seconds,
            ])
        #expect(n.transitions(year: 2027).first?.at == at("2027-03-01T03:00:00Z").seconds)
    }

    /// RFC 8536's example of daylight time all year: it ends at 25:00 on
    /// December 31, which is when it starts again.
    @Test func daylightAllYear() throws {
        let rule = try #require(PosixTZ("EST5EDT4,0/0,J365/25"))
        let table = try #require(TransitionTable(initial: -18000, transitions: [], rule: rule))
        for instant in ["2027-01-01T05:00:00Z", "2027-06-01T00:00:00Z", "2027-12-31T23:00:00Z", "2300-01-01T05:00:00Z"]
        {
            #expect(table.offset(at: at(instant).seconds) == -14400, "\(instant)")
            #expect(rule.offset(at: at(instant).seconds) == -14400, "\(instant)")
        }
    }

    @Test(arguments: [
        "", "EST", "ES5", "EST5EDT", "EST5EDT,M3.2.0", "EST5EDT,M13.1.0,M11.1.0", "EST5EDT,M3.6.0,M11.1.0",
        "EST5EDT,M3.2.7,M11.1.0", "EST5EDT,M3.2.0/168,M11.1.0", "EST5EDT,J0,J365", "EST5EDT,366,0", "EST25",
        "<+05", "<+05>", "EST5EDT,M3.2.0,M11.1.0,", "EST5:60",
    ])
    func refused(text: String) {
        #expect(PosixTZ(text) == nil, "\(text)")
    }
}
