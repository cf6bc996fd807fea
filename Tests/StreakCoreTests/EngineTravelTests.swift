import StreakCore
import StreakTestKit
import Testing

/// Zone changes: history never moves, dates end once, skipped dates are bridged.
@Suite(.fastTier)
struct EngineTravelTests {
    let ny = "America/New_York"
    let la = "America/Los_Angeles"
    let tokyo = "Asia/Tokyo"
    let honolulu = "Pacific/Honolulu"

    @Test func newYorkEveningThenLosAngelesEveningIsOneDate() {
        // 23:00 EDT June 9 = 03:00Z June 10; the user lands in LA (21:00 PDT June 9 = 04:00Z June 10).
        let list = [
            checkin("2027-06-08T12:00:00-04:00", ny), checkin("2027-06-09T23:00:00-04:00", ny),
            checkin("2027-06-09T21:00:00-07:00", la),
        ]
        let h = history(list, in: ny, moves: [("2027-06-10T03:30:00Z", la)])
        let s = Engine.evaluate(h, at: at("2027-06-10T12:00:00-07:00"))
        #expect(s.today == day("2027-06-10"))
        #expect(s.endedThrough == day("2027-06-09"))
        #expect(s.current == 2)
        #expect(s.totalCheckins == 3)
        #expect(marks(s, "2027-06-08", through: "2027-06-10") == [.qualifying, .qualifying, .open])
        // With goal 2 the two check-ins together make June 9 qualify.
        var goal2 = h
        goal2.settings.goal = 2
        let g = Engine.evaluate(goal2, at: at("2027-06-10T12:00:00-07:00"))
        #expect(g.mark(day("2027-06-09")) == .qualifying)
        #expect(g.mark(day("2027-06-08")) == .missed)
        #expect(g.current == 1)
    }

    /// Tokyo, then Honolulu (19 hours behind): the Tokyo check-ins keep their
    /// Tokyo dates, and June 9, ended in Tokyo, is not lived again.
    func tokyoToHonolulu(_ extra: [CheckIn] = []) -> StreakHistory {
        history(
            daily("2027-06-07", through: "2027-06-10", tokyo) + extra, in: tokyo,
            moves: [("2027-06-10T05:00:00Z", honolulu)])
    }

    @Test func tokyoToHonoluluKeepsTodayAndTheStreak() {
        // 06:00Z June 10 is 20:00 HST June 9, but June 9 ended in Tokyo.
        let s = Engine.evaluate(tokyoToHonolulu(), at: at("2027-06-10T06:00:00Z"))
        #expect(s.today == day("2027-06-10"))
        #expect(s.endedThrough == day("2027-06-09"))
        #expect(s.current == 4)
        #expect(s.todaySafe)
        #expect(s.todayCount == 1)
        #expect(s.settlements.isEmpty)
        #expect(marks(s, "2027-06-07", through: "2027-06-10") == [.qualifying, .qualifying, .qualifying, .qualifying])
        // A day later in Honolulu, with a check-in there on June 11: nothing breaks.
        let later = Engine.evaluate(
            tokyoToHonolulu([checkin("2027-06-11T12:00:00-10:00", honolulu)]), at: at("2027-06-12T12:00:00-10:00"))
        #expect(later.today == day("2027-06-12"))
        #expect(later.current == 5)
        #expect(later.settlements.isEmpty)
        #expect(later.mark(day("2027-06-10")) == .qualifying)
    }

    @Test func aLaterDateThanTodayCountsAsToday() {
        // The user's zone is Honolulu, but the phone still says Tokyo: 03:00Z June 10
        // is 12:00 JST June 10 while the user's today is June 9 (17:00 HST).
        let list = daily("2027-06-07", through: "2027-06-08", honolulu) + [checkin("2027-06-10T12:00:00+09:00", tokyo)]
        let h = history(list, in: honolulu)
        let s = Engine.evaluate(h, at: at("2027-06-10T04:00:00Z"))
        #expect(s.today == day("2027-06-09"))
        #expect(s.lastQualifying == day("2027-06-10"))
        #expect(s.todaySafe)
        #expect(s.current == 3)
        #expect(s.aliveBeforeToday == 2)
        #expect(s.settlements.isEmpty)
        // June 9 then ends without a check-in of its own: no break, no freeze.
        let after = Engine.evaluate(h, at: at("2027-06-10T12:00:00Z"))
        #expect(after.today == day("2027-06-10"))
        #expect(after.mark(day("2027-06-09")) == .bridged)
        #expect(after.settlements.isEmpty)
        #expect(after.freezes == 1)
        #expect(after.current == 3)
        #expect(after.todaySafe)
    }

    @Test func honoluluToTokyoMovesTodayByOne() {
        // 23:00Z June 9: 13:00 HST June 9, 08:00 JST June 10. June 9 ends at the move;
        // no date is skipped (Tokyo is at most one date ahead of Honolulu).
        let list =
            daily("2027-06-07", through: "2027-06-08", honolulu) + [
                checkin("2027-06-09T08:00:00-10:00", honolulu), checkin("2027-06-10T20:00:00+09:00", tokyo),
            ]
        let h = history(list, in: honolulu, moves: [("2027-06-09T23:00:00Z", tokyo)])
        let s = Engine.evaluate(h, at: at("2027-06-10T21:00:00+09:00"))
        #expect(s.today == day("2027-06-10"))
        #expect(s.endedThrough == day("2027-06-09"))
        #expect(s.current == 4)
        #expect(s.settlements.isEmpty)
        #expect(!s.marks.values.contains(.bridged))
    }

    @Test func pagoPagoToKiritimatiBridgesTheSkippedDate() {
        // 10:30Z June 10: 23:30 SST June 9 in Pago Pago, 00:30 June 11 on Kiritimati
        // (25 hours ahead). June 9 ends at the move; June 10 is skipped and bridged.
        let pago = "Pacific/Pago_Pago"
        let kiritimati = "Pacific/Kiritimati"
        let list = daily("2027-06-07", through: "2027-06-09", pago)
        let h = history(list, in: pago, moves: [("2027-06-10T10:30:00Z", kiritimati)])
        let s = Engine.evaluate(h, at: at("2027-06-11T12:00:00+14:00"))
        #expect(s.today == day("2027-06-11"))
        #expect(s.endedThrough == day("2027-06-10"))
        #expect(marks(s, "2027-06-09", through: "2027-06-11") == [.qualifying, .bridged, .open])
        #expect(s.current == 3)
        #expect(s.settlements.isEmpty)
        #expect(s.freezes == 1)
        // Checked in on June 11: the streak goes on as if June 10 never was.
        var checked = h
        checked.checkins.append(checkin("2027-06-11T12:00:00+14:00", kiritimati))
        let c = Engine.evaluate(checked, at: at("2027-06-12T12:00:00+14:00"))
        #expect(c.current == 4)
        #expect(c.settlements.isEmpty)
        #expect(c.mark(day("2027-06-10")) == .bridged)
    }

    @Test(arguments: [
        ("Europe/London", "2027-06-06T10:00:00Z", "America/New_York"),
        ("America/New_York", "2027-06-06T10:00:00Z", "Europe/London"),
        ("Asia/Kathmandu", "2027-06-06T03:00:00Z", "Pacific/Chatham"),
        ("Australia/Sydney", "2027-06-06T03:00:00Z", "America/Santiago"),
    ])
    func zoneChangeMidStreakKeepsTheStreak(from: String, when: String, to: String) {
        let list =
            daily("2027-06-01", through: "2027-06-05", from) + daily("2027-06-06", through: "2027-06-08", hour: 20, to)
        let h = history(list, in: from, moves: [(when, to)])
        let s = Engine.evaluate(h, at: zone(to).instant(of: day("2027-06-08"), secondsIntoDay: 21 * 3600))
        #expect(s.today == day("2027-06-08"))
        #expect(s.current == 8)
        #expect(s.longest == 8)
        #expect(s.settlements.isEmpty)
        #expect(s.freezes == 1)
    }

    @Test func todayIsNeverEarlierThanTheDayAfterTheLatestEndedDate() {
        // 04:30Z June 10: 00:30 EDT June 10 (June 9 has ended), 21:30 PDT June 9.
        let h = history(daily("2027-06-08", through: "2027-06-09", ny), in: ny, moves: [("2027-06-10T04:30:00Z", la)])
        for (now, today, ended) in [
            ("2027-06-10T04:29:59Z", "2027-06-10", "2027-06-09"),
            ("2027-06-10T05:00:00Z", "2027-06-10", "2027-06-09"),
            // June 10 ends at midnight in LA, 07:00Z June 11.
            ("2027-06-11T06:59:59Z", "2027-06-10", "2027-06-09"),
            ("2027-06-11T07:00:00Z", "2027-06-11", "2027-06-10"),
        ] {
            let s = Engine.evaluate(h, at: at(now))
            #expect(s.today == day(today), "at \(now)")
            #expect(s.endedThrough == day(ended), "at \(now)")
            #expect(s.today > s.endedThrough)
        }
    }

    @Test func kiritimatiToPagoPagoDoesNotLiveADateTwice() {
        // 10:30Z June 10: 00:30 June 11 on Kiritimati, 23:30 June 9 in Pago Pago.
        // June 10 has ended; June 11 lasts until midnight in Pago Pago (11:00Z June 12).
        let kiritimati = "Pacific/Kiritimati"
        let pago = "Pacific/Pago_Pago"
        let list = daily("2027-06-08", through: "2027-06-10", kiritimati) + [checkin("2027-06-11T12:00:00-11:00", pago)]
        let h = history(list, in: kiritimati, moves: [("2027-06-10T10:30:00Z", pago)])
        for (now, today, ended) in [
            ("2027-06-10T10:30:00Z", "2027-06-11", "2027-06-10"),
            ("2027-06-11T11:00:00Z", "2027-06-11", "2027-06-10"),  // midnight of June 11 in Pago Pago
            ("2027-06-12T10:59:59Z", "2027-06-11", "2027-06-10"),
            ("2027-06-12T11:00:00Z", "2027-06-12", "2027-06-11"),
        ] {
            let s = Engine.evaluate(h, at: at(now))
            #expect(s.today == day(today), "at \(now)")
            #expect(s.endedThrough == day(ended), "at \(now)")
            #expect(s.settlements.isEmpty, "at \(now)")
            #expect(!s.marks.values.contains(.bridged), "at \(now)")
        }
        // The Pago Pago check-in at 12:00 June 11 (23:00Z) counts for June 11.
        let s = Engine.evaluate(h, at: at("2027-06-12T11:00:00Z"))
        #expect(s.current == 4)
        #expect(s.mark(day("2027-06-11")) == .qualifying)
    }
}
