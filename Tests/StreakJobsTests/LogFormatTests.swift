import StreakCore
import StreakDelivery
import StreakSQLite
import StreakStore
import StreakTestKit
import Testing

@testable import StreakJobs

/// `log`'s time arguments and lines, without a journal.
@Suite(.fastTier) struct LogFormatTests {
    let now = RFC3339.parse("2026-11-21T19:30:15Z")!  // a Saturday; 20:30:15 in Berlin
    let berlin = try! ZoneBook().zone("Europe/Berlin").get()

    func time(_ text: String, utc: Bool = false) -> String? {
        TimeArgument.parse(text, now: now, zone: utc ? LocalZone.utc : berlin, zones: ZoneBook())?.description
    }

    @Test func timesTakeJournalctlsFormsInTheLocalZone() {
        #expect(time("2026-11-21T19:00:00Z") == "2026-11-21T19:00:00Z")
        #expect(time("2026-11-21T20:00:00.75+01:00") == "2026-11-21T19:00:00Z")
        #expect(time("2026-11-23 20:00") == "2026-11-23T19:00:00Z")
        #expect(time("2026-11-23 20:00:30") == "2026-11-23T19:00:30Z")
        #expect(time("2026-11-23T20:00") == "2026-11-23T19:00:00Z")
        #expect(time("2026-11-23 20:00 UTC") == "2026-11-23T20:00:00Z")
        #expect(time("2026-11-23 20:00:00+05:30") == "2026-11-23T14:30:00Z")
        #expect(time("2026-11-23 20:00 America/New_York") == "2026-11-24T01:00:00Z")
        #expect(time("Mon 2026-11-23 20:00") == "2026-11-23T19:00:00Z")
        #expect(time("2026-11-20") == "2026-11-19T23:00:00Z")
        #expect(time("21:00") == "2026-11-21T20:00:00Z")
        #expect(time("21:00:30") == "2026-11-21T20:00:30Z")
        #expect(time("now") == "2026-11-21T19:30:15Z")
        #expect(time("today") == "2026-11-20T23:00:00Z")
        #expect(time("yesterday") == "2026-11-19T23:00:00Z")
        #expect(time("tomorrow") == "2026-11-21T23:00:00Z")
        // A day's name with a time (issue 34: `checkin --at "yesterday 21:00"` reads it too).
        #expect(time("yesterday 21:00") == "2026-11-20T20:00:00Z")
        #expect(time("today 07:30:05") == "2026-11-21T06:30:05Z")
        #expect(time("tomorrow 08:00 UTC") == "2026-11-22T08:00:00Z")
        #expect(time("yesterday") == "2026-11-19T23:00:00Z")
        #expect(time("yesterday 25:00") == nil && time("yesterday 2026-11-20") == nil)
        #expect(time("@1795287600") == "2026-11-21T19:00:00Z")
        #expect(time("-90m") == "2026-11-21T18:00:15Z")
        #expect(time("90m ago") == "2026-11-21T18:00:15Z")
        #expect(time("2 hours ago") == "2026-11-21T17:30:15Z")
        #expect(time("1h 30min ago") == "2026-11-21T18:00:15Z")
        #expect(time("-2h") == "2026-11-21T17:30:15Z")
        #expect(time("1d ago") == "2026-11-20T19:30:15Z")
        #expect(time("-1w") == "2026-11-14T19:30:15Z")
        #expect(time("+1d") == "2026-11-22T19:30:15Z")
        #expect(time("3 days left") == "2026-11-24T19:30:15Z")
        #expect(time("1.5h ago") == "2026-11-21T18:00:15Z")
        // A spring-forward gap moves on by its length, as everywhere in streakd.
        #expect(time("2026-03-29 02:30") == "2026-03-29T01:30:00Z")
    }

    @Test func utcReadsTimesInUTC() {
        #expect(time("today", utc: true) == "2026-11-21T00:00:00Z")
        #expect(time("2026-11-20", utc: true) == "2026-11-20T00:00:00Z")
        #expect(time("21:00", utc: true) == "2026-11-21T21:00:00Z")
    }

    @Test func nonsenseIsNoTime() {
        for bad in [
            "", "2h", "-2", "2 h", "--2h", "-+2h", "Today", "2026-13-01", "2026-11-21 25:00", "Tue 2026-11-23 20:00",
            "2026-11-23 20:00 Mars/Olympus", "@", "@x", "12", "1 fortnight ago", "20:00:00:00",
        ] {
            #expect(time(bad) == nil, "\(bad)")
        }
    }

    static let notification = StreakDelivery.Notification(
        kind: .atRisk, user: "alice", streak: "daily", localDate: LocalDate("2026-11-21")!,
        due: RFC3339.parse("2026-11-21T19:00:00Z")!, timezone: "Europe/Berlin",
        localDue: "2026-11-21T20:00:00+01:00", streakLength: 7, message: "At risk!\nCheck in \u{1b}[31mtoday\u{85}.")
    static let logged: UInt64 = 1_795_287_603_500_000

    @Test func shortLinesAreOneLineInTheLocalZone() {
        let entry = LogEntry(notification: Self.notification, realtimeMicroseconds: Self.logged, host: "h1")
        #expect(
            Context.shortLine(entry, zone: berlin)
                == "2026-11-21T20:00:03+01:00 h1 at_risk alice/daily 2026-11-21: At risk! Check in  [31mtoday .")
        #expect(
            Context.shortLine(entry, zone: LocalZone.utc)
                == "2026-11-21T19:00:03Z h1 at_risk alice/daily 2026-11-21: At risk! Check in  [31mtoday .")
        let dead = DeadDelivery(sink: "hook:notify", attempts: 1, error: "exit 3: 503 Service Unavailable")
        #expect(
            Context.shortLine(LogEntry(notification: Self.notification, realtimeMicroseconds: Self.logged, dead: dead))
                == "2026-11-21T19:00:03Z DEAD hook:notify at_risk alice/daily 2026-11-21 after 1 attempt: exit 3: "
                + "503 Service Unavailable")
        let failed = FailedDelivery(
            sink: "hook:notify", attempts: 2, error: "timed out after 10s",
            retry: RFC3339.parse("2026-11-21T19:05:03Z")!)
        #expect(
            Context.shortLine(
                LogEntry(notification: Self.notification, realtimeMicroseconds: Self.logged, failed: failed),
                zone: berlin)
                == "2026-11-21T20:00:03+01:00 FAILED hook:notify at_risk alice/daily 2026-11-21 (attempt 2, next try "
                + "from 2026-11-21T20:05:03+01:00): timed out after 10s")
    }

    @Test func catIsTheMessageAndVerboseEveryField() {
        var entry = LogEntry(notification: Self.notification, realtimeMicroseconds: Self.logged)
        entry.cursor = "s=1;i=2"
        entry.allFields = [.init("MESSAGE", "At risk!\nnow"), .init("PRIORITY", "5")]
        #expect(Context.line(entry, format: .cat, zone: berlin) == "At risk! Check in  [31mtoday .")
        #expect(
            Context.line(entry, format: .verbose, zone: berlin)
                == "2026-11-21T20:00:03.500000+01:00 [s=1;i=2]\n    MESSAGE=At risk! now\n    PRIORITY=5")
    }
}
