import StreakCore
import StreakTestKit
import Testing

@Suite(.fastTier)
struct RFC3339Tests {
    /// 2026-11-21T00:03:00Z: day 20778 since 1970, plus 180 s.
    static let base: Int64 = 20778 * 86400 + 180

    @Test(arguments: [
        ("2026-11-21T00:03:00Z", base),
        ("2026-11-21T00:03:00z", base),
        ("2026-11-21t00:03:00Z", base),
        ("2026-11-21 00:03:00Z", base),
        ("2026-11-21T00:03:00+00:00", base),
        ("2026-11-21T00:03:00-00:00", base),
        ("2026-11-20T19:03:00-05:00", base),
        ("2026-11-21T05:48:00+05:45", base),
        ("2026-11-21T14:03:00+14:00", base),
        ("2026-11-20T13:03:00-11:00", base),
        ("2026-11-21T12:48:00+12:45", base),
        // Fractions are dropped, never rounded.
        ("2026-11-21T00:03:00.999Z", base),
        ("2026-11-21T00:03:00.1-05:00", base + 5 * 3600),
        ("2026-11-21T00:03:00.123456789Z", base),
        // A leap second reads as the second before it.
        ("2026-11-21T00:03:60Z", base + 59),
        ("1970-01-01T00:00:00Z", 0),
        ("1969-12-31T23:59:59Z", -1),
    ])
    func parses(text: String, seconds: Int64) {
        #expect(RFC3339.parse(text) == Instant(seconds: seconds))
    }

    @Test(arguments: [
        "2026-11-21T00:03:00",  // no offset
        "2026-11-21T00:03",
        "2026-11-21",
        "2026-11-21T00:03:00+0500",
        "2026-11-21T00:03:00+05",
        "2026-11-21T00:03:00 +05:00",
        "2026-11-21T00:03:00+24:00",
        "2026-11-21T00:03:00+05:60",
        "2026-11-21T00:03:00.Z",
        "2026-11-21T00:03:00.1234567890Z",
        "2026-11-21T00:03:00ZZ",
        "2026-11-21T00:03:00Z ",
        "2026-11-21T24:00:00Z",
        "2026-11-21T23:60:00Z",
        "2026-11-21T23:59:61Z",
        "2026-02-30T00:00:00Z",
        "2026-13-01T00:00:00Z",
        "2026-11-21X00:03:00Z",
        "2026-11-21T00-03-00Z",
        "2026-11-21T0a:03:00Z",
        "2026-11-21T00:03:00UTC",
        "",
    ])
    func rejects(text: String) {
        #expect(RFC3339.parse(text) == nil)
    }

    @Test(
        arguments: [
            (base, 0, true, "2026-11-21T00:03:00Z"),
            (base, 0, false, "2026-11-21T00:03:00+00:00"),
            (base, -5 * 3600, true, "2026-11-20T19:03:00-05:00"),
            (base, 5 * 3600 + 45 * 60, false, "2026-11-21T05:48:00+05:45"),
            (base, 14 * 3600, false, "2026-11-21T14:03:00+14:00"),
            (base, -(9 * 3600 + 30 * 60), false, "2026-11-20T14:33:00-09:30"),
            (-1, 0, true, "1969-12-31T23:59:59Z"),
        ] as [(Int64, Int, Bool, String)])
    func formats(seconds: Int64, offset: Int, utcZ: Bool, text: String) {
        let instant = Instant(seconds: seconds)
        #expect(RFC3339.format(instant, offset: offset, utcZ: utcZ) == text)
        #expect(RFC3339.parse(text) == instant)
    }

    @Test func descriptionIsUTCWithoutFraction() {
        #expect(at("2027-03-14T02:30:00.75-05:00").description == "2027-03-14T07:30:00Z")
    }
}
