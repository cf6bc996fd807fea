import StreakTestKit
import Testing

@testable import StreakCore

/// What preview announces and what a tick at the due instant finds, across the DST and zone table.
@Suite(.fastTier) struct NoticesTests {
    /// A 7-day streak ending the day before `today`; reminders at `remindAt`.
    func sevenDays(_ zoneID: String, today: String) -> StreakHistory {
        let z = zone(zoneID)
        let t = day(today)
        let checkins = (1...7).map { k -> CheckIn in
            let at = z.instant(of: t - k, secondsIntoDay: 12 * 3600)
            return CheckIn(instant: at, zone: z, storedAt: at)
        }
        return StreakHistory(checkins: checkins, zones: [ZoneChange(since: at("2026-01-01T00:00:00Z"), zone: z)])
    }

    @Test(arguments: [
        // zone, today, remind at, at_risk due, freeze_used due (the end of today)
        ("America/New_York", "2027-03-14", 2 * 3600 + 1800, "2027-03-14T07:30:00Z", "2027-03-15T04:00:00Z"),
        ("America/New_York", "2027-11-07", 1 * 3600 + 1800, "2027-11-07T05:30:00Z", "2027-11-08T05:00:00Z"),
        ("Europe/London", "2027-03-28", 1 * 3600 + 1800, "2027-03-28T01:30:00Z", "2027-03-28T23:00:00Z"),
        ("America/Santiago", "2026-09-05", 20 * 3600, "2026-09-06T00:00:00Z", "2026-09-06T04:00:00Z"),
        ("Australia/Lord_Howe", "2027-10-03", 2 * 3600 + 900, "2027-10-02T15:45:00Z", "2027-10-03T13:00:00Z"),
        ("Asia/Kathmandu", "2026-11-21", 20 * 3600, "2026-11-21T14:15:00Z", "2026-11-21T18:15:00Z"),
        ("Pacific/Chatham", "2026-11-21", 20 * 3600, "2026-11-21T06:15:00Z", "2026-11-21T10:15:00Z"),
        ("Pacific/Kiritimati", "2026-11-21", 20 * 3600, "2026-11-21T06:00:00Z", "2026-11-21T10:00:00Z"),
        ("Pacific/Pago_Pago", "2026-11-21", 20 * 3600, "2026-11-22T07:00:00Z", "2026-11-22T11:00:00Z"),
    ])
    func previewAndTickAgree(zoneID: String, today: String, remindAt: Int, atRisk: String, freezeUsed: String) {
        let h = sevenDays(zoneID, today: today)
        let policy = NoticePolicy(remindAt: remindAt)
        let from = zone(zoneID).start(of: day(today)) + 1
        let upcoming = Notices.upcoming(h, policy: policy, from: from, through: at(freezeUsed))
        #expect(upcoming.map(\.kind) == [.atRisk, .freezeUsed])
        #expect(upcoming.map(\.due) == [at(atRisk), at(freezeUsed)])
        #expect(upcoming.map(\.length) == [7, 7])
        #expect(upcoming.map(\.date) == [day(today), day(today)])
        // A tick at each due instant, the previous one just before it, finds the same.
        for n in upcoming {
            let found = Notices.due(
                h, policy: policy, since: n.due - 900, now: n.due, state: Engine.evaluate(h, at: n.due))
            #expect(found.filter(\.fresh).map(\.notice).contains(n))
        }
    }

    @Test func settlementsAreFreshForADayAfterTheDateEnded() {
        let h = sevenDays("UTC", today: "2026-11-21")
        let policy = NoticePolicy(remindAt: nil)
        let fresh = Notices.due(
            h, policy: policy, since: nil, now: at("2026-11-23T00:00:01Z"),
            state: Engine.evaluate(h, at: at("2026-11-23T00:00:01Z")))
        #expect(
            fresh.map { "\($0.notice.kind.rawValue) \($0.notice.date) \($0.fresh)" } == [
                "freeze_used 2026-11-21 false", "streak_broken 2026-11-22 true",
            ])
    }

    @Test func aRunOverAnUnchangedHistoryFindsOnlySettlementsSinceTheLastOne() {
        let h = sevenDays("UTC", today: "2026-11-21")
        let policy = NoticePolicy(remindAt: nil)
        let now = at("2026-11-23T00:00:01Z")
        let state = Engine.evaluate(h, at: now)
        func found(settledThrough: String?) -> [String] {
            Notices.due(h, policy: policy, since: nil, now: now, state: state, settledThrough: settledThrough.map(at))
                .map { "\($0.notice.kind.rawValue) \($0.notice.date)" }
        }
        #expect(found(settledThrough: nil) == ["freeze_used 2026-11-21", "streak_broken 2026-11-22"])
        // A settlement at the last run's instant was that run's to find.
        #expect(found(settledThrough: "2026-11-22T00:00:00Z") == ["streak_broken 2026-11-22"])
        #expect(
            found(settledThrough: "2026-11-21T23:59:59Z") == ["freeze_used 2026-11-21", "streak_broken 2026-11-22"])
        #expect(found(settledThrough: "2026-11-23T00:00:00Z") == [])
    }

    @Test func aLeewayMovesTheReminderToTheEndOfTheDayBefore() {
        var h = sevenDays("UTC", today: "2026-11-21")
        h.settings.leewayHours = 3
        // 01:00 is inside the leeway of the 20th: the reminder for the 21st waits for 03:00.
        #expect(
            Notices.reminderDue(of: day("2026-11-21"), remindAt: 3600, zone: zone("UTC"), leewayHours: 3)
                == at("2026-11-21T03:00:00Z"))
        #expect(
            Notices.reminderDue(of: day("2026-11-21"), remindAt: 20 * 3600, zone: zone("UTC"), leewayHours: 3)
                == at("2026-11-21T20:00:00Z"))
        let n = Notices.upcoming(
            h, policy: NoticePolicy(remindAt: 3600), from: at("2026-11-21T00:30:00Z"),
            through: at("2026-11-21T06:00:00Z"))
        #expect(n.map(\.due) == [at("2026-11-21T03:00:00Z")])
    }
}
