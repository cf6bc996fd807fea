import StreakCore
import StreakTestKit
import Testing

/// Hand-built tables: the one-search local-time answers of `TransitionRules`
/// equal the general search of `ZoneRules.searchInstant(ofLocal:)`.
@Suite(.fastTier)
struct TransitionRulesTests {
    static func rules(_ initial: Int, _ transitions: [(String, Int)], rule: String? = nil) -> TransitionRules {
        let list = transitions.map { (at: at($0.0).seconds, offset: $0.1) }
        return TransitionRules(
            table: TransitionTable(initial: initial, transitions: list, rule: rule.map { PosixTZ($0)! })!)
    }

    /// Every 15 minutes of local time from `first` to `last`, and a second
    /// either side of each quarter hour.
    static func expectSameAsSearch(_ rules: TransitionRules, from first: String, to last: String) {
        var local = at(first).seconds
        var mismatches: [String] = []
        while local <= at(last).seconds {
            for l in local - 1...local + 1 where rules.instant(ofLocal: l) != rules.searchInstant(ofLocal: l) {
                mismatches.append(
                    "\(Instant(seconds: l)) local: \(rules.instant(ofLocal: l)) vs \(rules.searchInstant(ofLocal: l))")
            }
            local += 900
        }
        #expect(mismatches.isEmpty, "\(mismatches.prefix(10))")
    }

    @Test func gapMovesForwardOverlapTakesTheFirst() {
        // New York, 2027.
        let r = Self.rules(-18000, [("2027-03-14T07:00:00Z", -14400), ("2027-11-07T06:00:00Z", -18000)])
        let zone = Zone(identifier: "Test/New_York", rules: r)
        #expect(zone.instant(of: day("2027-03-14"), secondsIntoDay: 9000) == at("2027-03-14T07:30:00Z"))
        #expect(zone.instant(of: day("2027-03-14"), secondsIntoDay: 10800) == at("2027-03-14T07:00:00Z"))
        #expect(zone.instant(of: day("2027-11-07"), secondsIntoDay: 5400) == at("2027-11-07T05:30:00Z"))
        #expect(zone.instant(of: day("2027-11-07"), secondsIntoDay: 7200) == at("2027-11-07T07:00:00Z"))
        #expect(zone.start(of: day("2027-11-08")) == at("2027-11-08T05:00:00Z"))
        #expect(zone.date(of: at("2027-11-08T04:59:59Z")) == day("2027-11-07"))
        Self.expectSameAsSearch(r, from: "2027-03-10T00:00:00Z", to: "2027-11-10T00:00:00Z")
    }

    /// Pacific/Apia skipped 2011-12-30 entirely (-10 to +14).
    @Test func aSkippedDay() {
        let r = Self.rules(-36000, [("2011-12-30T10:00:00Z", 50400)])
        let zone = Zone(identifier: "Test/Apia", rules: r)
        #expect(zone.start(of: day("2011-12-30")) == at("2011-12-30T10:00:00Z"))
        #expect(zone.start(of: day("2011-12-31")) == at("2011-12-30T10:00:00Z"))
        #expect(zone.instant(of: day("2011-12-30"), secondsIntoDay: 72000) == at("2011-12-31T06:00:00Z"))
        Self.expectSameAsSearch(r, from: "2011-12-25T00:00:00Z", to: "2012-01-05T00:00:00Z")
    }

    /// Transitions hours apart (as in some zones' 1940s), where the local
    /// switch points are out of order: answered by the general search.
    @Test func transitionsCloseTogether() {
        let r = Self.rules(
            3600,
            [
                ("1945-04-02T01:00:00Z", 7200), ("1945-04-02T13:00:00Z", 10800), ("1945-04-03T02:00:00Z", 3600),
                ("1945-04-04T12:00:00Z", 7200), ("1945-04-30T12:00:00Z", 3600), ("1945-05-01T00:00:00Z", 50400),
                ("1945-05-01T01:00:00Z", -36000),
            ])
        Self.expectSameAsSearch(r, from: "1945-03-25T00:00:00Z", to: "1945-05-10T00:00:00Z")
    }

    /// Past the expanded table (2200), offsets come from the footer rule.
    @Test func pastTheTable() {
        let r = Self.rules(-18000, [("2026-11-01T06:00:00Z", -18000)], rule: "EST5EDT,M3.2.0,M11.1.0")
        let zone = Zone(identifier: "Test/New_York", rules: r)
        #expect(zone.instant(of: day("2300-03-11"), secondsIntoDay: 9000) == at("2300-03-11T07:30:00Z"))
        #expect(zone.instant(of: day("2300-11-04"), secondsIntoDay: 5400) == at("2300-11-04T05:30:00Z"))
        Self.expectSameAsSearch(r, from: "2200-12-01T00:00:00Z", to: "2201-04-01T00:00:00Z")
        Self.expectSameAsSearch(r, from: "2300-03-01T00:00:00Z", to: "2300-03-20T00:00:00Z")
    }

}
