import StreakCore
import StreakTestKit
import Testing

/// Check-ins older than the backfill cap when first stored never count (SPEC §1).
@Suite(.fastTier)
struct EngineBackfillTests {
    let ny = "America/New_York"
    static let instant = "2027-06-01T12:00:00-04:00"

    /// (seconds between the check-in and its storing, whether it counts), with the default 90 days.
    @Test(
        arguments: [
            (Int64(0), true), (80 * 86400, true), (90 * 86400, true), (90 * 86400 + 1, false), (100 * 86400, false),
        ] as [(Int64, Bool)])
    func backfillCap(delay: Int64, counts: Bool) {
        let stored = at(Self.instant) + delay
        let c = CheckIn(instant: at(Self.instant), zone: zone(ny), storedAt: stored)
        let s = Engine.evaluate(history([c], in: ny), at: stored + 3600)
        #expect(s.totalCheckins == 1)
        #expect(s.firstStored == stored)
        #expect(s.longest == (counts ? 1 : 0))
        #expect(s.lastQualifying == (counts ? day("2027-06-01") : nil))
        #expect(s.mark(day("2027-06-01")) == (counts ? .qualifying : nil))
    }

    @Test func aShorterCapFromTheHistory() {
        let c = checkin(Self.instant, ny, storedAt: "2027-06-20T12:00:00-04:00")
        let s = Engine.evaluate(history([c], in: ny, backfillDays: 7), at: at("2027-06-20T13:00:00-04:00"))
        #expect(s.longest == 0)
        let t = Engine.evaluate(history([c], in: ny, backfillDays: 30), at: at("2027-06-20T13:00:00-04:00"))
        #expect(t.longest == 1)
    }

    @Test func anOldCheckinDoesNotMendAStreak() {
        // June 3 arrives 100 days late: June 3 stays missed.
        let list =
            daily("2027-06-01", through: "2027-06-02", ny) + daily("2027-06-04", through: "2027-06-05", ny)
            + [checkin("2027-06-03T12:00:00-04:00", ny, storedAt: "2027-09-11T12:00:00-04:00")]
        let s = Engine.evaluate(history(list, in: ny), at: at("2027-09-11T13:00:00-04:00"))
        #expect(s.mark(day("2027-06-03")) == .missed)
        #expect(s.longest == 2)
        #expect(s.totalCheckins == 5)
    }
}
