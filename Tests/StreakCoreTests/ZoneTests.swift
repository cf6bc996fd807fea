import StreakCore
import StreakJobs
import StreakTestKit
import Testing

/// Expected values worked out by hand from the 2027 transitions that
/// `zdump -v -c 2026,2028 ZONE` lists on this machine:
///
/// - America/New_York: 2027-03-14 02:00 EST → 03:00 EDT (07:00Z); 2027-11-07 02:00 EDT → 01:00 EST (06:00Z)
/// - Europe/London: 2027-03-28 01:00 GMT → 02:00 BST (01:00Z); 2027-10-31 02:00 BST → 01:00 GMT (01:00Z)
/// - Australia/Sydney: 2027-04-04 03:00 AEDT → 02:00 AEST (16:00Z Apr 3); 2027-10-03 02:00 AEST → 03:00 AEDT (16:00Z Oct 2)
/// - Australia/Lord_Howe: 2027-04-04 02:00 +11 → 01:30 +1030 (15:00Z Apr 3); 2027-10-03 02:00 +1030 → 02:30 +11 (15:30Z Oct 2)
/// - America/Santiago: 2027-04-04 00:00 -03 → 2027-04-03 23:00 -04 (03:00Z); 2027-09-05 00:00 -04 → 01:00 -03 (04:00Z)
/// - Pacific/Chatham: 2027-04-04 03:45 +1345 → 02:45 +1245 (14:00Z Apr 3); 2027-09-26 02:45 +1245 → 03:45 +1345 (14:00Z Sep 25)
/// - Asia/Kathmandu +05:45, Pacific/Kiritimati +14, Pacific/Pago_Pago -11: no transitions.
@Suite(.fastTier)
struct ZoneTests {
    /// (zone, instant, its local date in that zone): instants on both sides of local midnights.
    static let dates: [(String, String, String)] = [
        ("America/New_York", "2027-03-14T04:59:59Z", "2027-03-13"),
        ("America/New_York", "2027-03-14T05:00:00Z", "2027-03-14"),
        ("America/New_York", "2027-03-15T03:59:59Z", "2027-03-14"),
        ("America/New_York", "2027-03-15T04:00:00Z", "2027-03-15"),
        ("America/New_York", "2027-11-07T03:59:59Z", "2027-11-06"),
        ("America/New_York", "2027-11-07T04:00:00Z", "2027-11-07"),
        ("America/New_York", "2027-11-08T04:59:59Z", "2027-11-07"),
        ("America/New_York", "2027-11-08T05:00:00Z", "2027-11-08"),
        ("Europe/London", "2027-03-27T23:59:59Z", "2027-03-27"),
        ("Europe/London", "2027-03-28T00:00:00Z", "2027-03-28"),
        ("Europe/London", "2027-03-28T22:59:59Z", "2027-03-28"),
        ("Europe/London", "2027-03-28T23:00:00Z", "2027-03-29"),
        ("Europe/London", "2027-10-30T22:59:59Z", "2027-10-30"),
        ("Europe/London", "2027-10-30T23:00:00Z", "2027-10-31"),
        ("Europe/London", "2027-10-31T23:59:59Z", "2027-10-31"),
        ("Europe/London", "2027-11-01T00:00:00Z", "2027-11-01"),
        ("Australia/Sydney", "2027-04-03T12:59:59Z", "2027-04-03"),
        ("Australia/Sydney", "2027-04-03T13:00:00Z", "2027-04-04"),
        ("Australia/Sydney", "2027-04-04T13:59:59Z", "2027-04-04"),
        ("Australia/Sydney", "2027-04-04T14:00:00Z", "2027-04-05"),
        ("Australia/Sydney", "2027-10-02T13:59:59Z", "2027-10-02"),
        ("Australia/Sydney", "2027-10-02T14:00:00Z", "2027-10-03"),
        ("Australia/Sydney", "2027-10-03T12:59:59Z", "2027-10-03"),
        ("Australia/Sydney", "2027-10-03T13:00:00Z", "2027-10-04"),
        ("Australia/Lord_Howe", "2027-04-03T12:59:59Z", "2027-04-03"),
        ("Australia/Lord_Howe", "2027-04-03T13:00:00Z", "2027-04-04"),
        ("Australia/Lord_Howe", "2027-04-04T13:29:59Z", "2027-04-04"),
        ("Australia/Lord_Howe", "2027-04-04T13:30:00Z", "2027-04-05"),
        ("Australia/Lord_Howe", "2027-10-02T13:29:59Z", "2027-10-02"),
        ("Australia/Lord_Howe", "2027-10-02T13:30:00Z", "2027-10-03"),
        ("Australia/Lord_Howe", "2027-10-03T12:59:59Z", "2027-10-03"),
        ("Australia/Lord_Howe", "2027-10-03T13:00:00Z", "2027-10-04"),
        // The hour 23:00-24:00 of 2027-04-03 happens twice; 2027-04-04 starts at 04:00Z.
        ("America/Santiago", "2027-04-04T02:59:59Z", "2027-04-03"),
        ("America/Santiago", "2027-04-04T03:00:00Z", "2027-04-03"),
        ("America/Santiago", "2027-04-04T03:59:59Z", "2027-04-03"),
        ("America/Santiago", "2027-04-04T04:00:00Z", "2027-04-04"),
        // 2027-09-04 23:59:59 -04 is followed by 2027-09-05 01:00 -03.
        ("America/Santiago", "2027-09-05T03:59:59Z", "2027-09-04"),
        ("America/Santiago", "2027-09-05T04:00:00Z", "2027-09-05"),
        ("America/Santiago", "2027-09-06T02:59:59Z", "2027-09-05"),
        ("America/Santiago", "2027-09-06T03:00:00Z", "2027-09-06"),
        ("Asia/Kathmandu", "2027-06-09T18:14:59Z", "2027-06-09"),
        ("Asia/Kathmandu", "2027-06-09T18:15:00Z", "2027-06-10"),
        ("Pacific/Chatham", "2027-04-03T10:14:59Z", "2027-04-03"),
        ("Pacific/Chatham", "2027-04-03T10:15:00Z", "2027-04-04"),
        ("Pacific/Chatham", "2027-04-04T11:14:59Z", "2027-04-04"),
        ("Pacific/Chatham", "2027-04-04T11:15:00Z", "2027-04-05"),
        ("Pacific/Chatham", "2027-09-25T11:14:59Z", "2027-09-25"),
        ("Pacific/Chatham", "2027-09-25T11:15:00Z", "2027-09-26"),
        ("Pacific/Chatham", "2027-09-26T10:14:59Z", "2027-09-26"),
        ("Pacific/Chatham", "2027-09-26T10:15:00Z", "2027-09-27"),
        ("Pacific/Kiritimati", "2027-06-09T09:59:59Z", "2027-06-09"),
        ("Pacific/Kiritimati", "2027-06-09T10:00:00Z", "2027-06-10"),
        ("Pacific/Pago_Pago", "2027-06-10T10:59:59Z", "2027-06-09"),
        ("Pacific/Pago_Pago", "2027-06-10T11:00:00Z", "2027-06-10"),
    ]

    @Test(arguments: dates)
    func dateOfInstant(zoneID: String, instant: String, date: String) {
        #expect(zone(zoneID).date(of: at(instant)) == day(date))
    }

    /// (zone, date, local wall time, the instant it maps to).
    static let wallTimes: [(String, String, String, String)] = [
        ("America/New_York", "2027-03-13", "20:00", "2027-03-14T01:00:00Z"),
        ("America/New_York", "2027-03-14", "20:00", "2027-03-15T00:00:00Z"),
        ("America/New_York", "2027-03-14", "01:59", "2027-03-14T06:59:00Z"),
        ("America/New_York", "2027-03-14", "02:00", "2027-03-14T07:00:00Z"),  // gap: 03:00 EDT
        ("America/New_York", "2027-03-14", "02:30", "2027-03-14T07:30:00Z"),  // gap: 03:30 EDT
        ("America/New_York", "2027-03-14", "03:00", "2027-03-14T07:00:00Z"),
        ("America/New_York", "2027-11-07", "00:30", "2027-11-07T04:30:00Z"),
        ("America/New_York", "2027-11-07", "01:00", "2027-11-07T05:00:00Z"),  // twice: EDT first
        ("America/New_York", "2027-11-07", "01:30", "2027-11-07T05:30:00Z"),  // twice: EDT first
        ("America/New_York", "2027-11-07", "02:00", "2027-11-07T07:00:00Z"),
        ("America/New_York", "2027-11-07", "20:00", "2027-11-08T01:00:00Z"),
        ("Europe/London", "2027-03-27", "20:00", "2027-03-27T20:00:00Z"),
        ("Europe/London", "2027-03-28", "01:30", "2027-03-28T01:30:00Z"),  // gap: 02:30 BST
        ("Europe/London", "2027-03-28", "20:00", "2027-03-28T19:00:00Z"),
        ("Europe/London", "2027-10-31", "01:30", "2027-10-31T00:30:00Z"),  // twice: BST first
        ("Europe/London", "2027-10-31", "20:00", "2027-10-31T20:00:00Z"),
        ("Australia/Sydney", "2027-04-04", "02:30", "2027-04-03T15:30:00Z"),  // twice: AEDT first
        ("Australia/Sydney", "2027-04-04", "20:00", "2027-04-04T10:00:00Z"),
        ("Australia/Sydney", "2027-10-03", "02:30", "2027-10-02T16:30:00Z"),  // gap: 03:30 AEDT
        ("Australia/Sydney", "2027-10-03", "20:00", "2027-10-03T09:00:00Z"),
        ("Australia/Lord_Howe", "2027-04-04", "01:45", "2027-04-03T14:45:00Z"),  // twice: +11 first
        ("Australia/Lord_Howe", "2027-04-04", "20:00", "2027-04-04T09:30:00Z"),
        ("Australia/Lord_Howe", "2027-10-03", "02:15", "2027-10-02T15:45:00Z"),  // gap of 30 min: 02:45 +11
        ("Australia/Lord_Howe", "2027-10-03", "20:00", "2027-10-03T09:00:00Z"),
        ("America/Santiago", "2027-04-03", "20:00", "2027-04-03T23:00:00Z"),
        ("America/Santiago", "2027-04-03", "23:30", "2027-04-04T02:30:00Z"),  // twice: -03 first
        ("America/Santiago", "2027-04-04", "20:00", "2027-04-05T00:00:00Z"),
        ("America/Santiago", "2027-09-05", "00:30", "2027-09-05T04:30:00Z"),  // gap: 01:30 -03
        ("America/Santiago", "2027-09-05", "20:00", "2027-09-05T23:00:00Z"),
        ("Asia/Kathmandu", "2027-06-10", "20:00", "2027-06-10T14:15:00Z"),
        ("Pacific/Chatham", "2027-04-04", "03:00", "2027-04-03T13:15:00Z"),  // twice: +1345 first
        ("Pacific/Chatham", "2027-04-04", "20:00", "2027-04-04T07:15:00Z"),
        ("Pacific/Chatham", "2027-09-26", "03:00", "2027-09-25T14:15:00Z"),  // gap: 04:00 +1345
        ("Pacific/Chatham", "2027-09-26", "20:00", "2027-09-26T06:15:00Z"),
        ("Pacific/Kiritimati", "2027-06-10", "20:00", "2027-06-10T06:00:00Z"),
        ("Pacific/Pago_Pago", "2027-06-10", "20:00", "2027-06-11T07:00:00Z"),
    ]

    @Test(arguments: wallTimes)
    func instantOfWallTime(zoneID: String, date: String, wall: String, expected: String) throws {
        let seconds = try #require(Validate.wallTime(wall))
        let instant = zone(zoneID).instant(of: day(date), secondsIntoDay: seconds)
        #expect(instant == at(expected))
        // Whatever the wall time became, it stays on its date.
        #expect(zone(zoneID).date(of: instant) == day(date))
    }

    /// (zone, date, the first instant of that date).
    static let starts: [(String, String, String)] = [
        ("America/New_York", "2027-03-14", "2027-03-14T05:00:00Z"),
        ("America/New_York", "2027-03-15", "2027-03-15T04:00:00Z"),
        ("America/New_York", "2027-11-07", "2027-11-07T04:00:00Z"),
        ("America/New_York", "2027-11-08", "2027-11-08T05:00:00Z"),
        ("Europe/London", "2027-03-29", "2027-03-28T23:00:00Z"),
        ("Europe/London", "2027-11-01", "2027-11-01T00:00:00Z"),
        ("Australia/Lord_Howe", "2027-04-05", "2027-04-04T13:30:00Z"),
        ("Australia/Lord_Howe", "2027-10-04", "2027-10-03T13:00:00Z"),
        ("America/Santiago", "2027-04-04", "2027-04-04T04:00:00Z"),
        // Midnight does not exist: the date starts at the transition, 01:00 -03.
        ("America/Santiago", "2027-09-05", "2027-09-05T04:00:00Z"),
        ("America/Santiago", "2027-09-06", "2027-09-06T03:00:00Z"),
        ("Asia/Kathmandu", "2027-06-10", "2027-06-09T18:15:00Z"),
        ("Pacific/Chatham", "2027-09-27", "2027-09-26T10:15:00Z"),
        ("Pacific/Kiritimati", "2027-06-10", "2027-06-09T10:00:00Z"),
        ("Pacific/Pago_Pago", "2027-06-10", "2027-06-10T11:00:00Z"),
    ]

    @Test(arguments: starts)
    func startOfDate(zoneID: String, date: String, expected: String) {
        let z = zone(zoneID)
        let start = z.start(of: day(date))
        #expect(start == at(expected))
        #expect(z.date(of: start) == day(date))
        #expect(z.date(of: start - 1) == day(date) - 1)
    }

    @Test(arguments: [
        ("Asia/Kathmandu", "2027-06-10T00:00:00Z", 20700),
        ("Pacific/Chatham", "2027-06-10T00:00:00Z", 45900),
        ("Pacific/Chatham", "2027-12-10T00:00:00Z", 49500),
        ("Pacific/Kiritimati", "2027-06-10T00:00:00Z", 50400),
        ("Pacific/Pago_Pago", "2027-06-10T00:00:00Z", -39600),
        ("Australia/Lord_Howe", "2027-06-10T00:00:00Z", 37800),
        ("Australia/Lord_Howe", "2027-12-10T00:00:00Z", 39600),
    ])
    func offsets(zoneID: String, instant: String, offset: Int) {
        #expect(zone(zoneID).offset(at: at(instant)) == offset)
    }

    @Test func unknownZoneIsNil() {
        #expect(FoundationZoneRules(identifier: "Mars/Olympus_Mons") == nil)
    }
}
