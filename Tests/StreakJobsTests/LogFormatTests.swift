import StreakCore
import StreakDelivery
import StreakSQLite
import StreakStore
import StreakTestKit
import Testing

@testable import StreakJobs

/// `log`'s time arguments and short lines, without a journal.
@Suite struct LogFormatTests {
    let now = RFC3339.parse("2026-11-21T19:30:15Z")!

    func time(_ text: String) -> String? { TimeArgument.parse(text, now: now)?.description }

    @Test func timesAreInstantsDatesNamedDaysOrRelative() {
        #expect(time("2026-11-21T19:00:00Z") == "2026-11-21T19:00:00Z")
        #expect(time("2026-11-21T20:00:00.75+01:00") == "2026-11-21T19:00:00Z")
        #expect(time("2026-11-20") == "2026-11-20T00:00:00Z")
        #expect(time("now") == "2026-11-21T19:30:15Z")
        #expect(time("today") == "2026-11-21T00:00:00Z")
        #expect(time("yesterday") == "2026-11-20T00:00:00Z")
        #expect(time("tomorrow") == "2026-11-22T00:00:00Z")
        #expect(time("-90m") == "2026-11-21T18:00:15Z")
        #expect(time("90m ago") == "2026-11-21T18:00:15Z")
        #expect(time("-2h") == "2026-11-21T17:30:15Z")
        #expect(time("1d ago") == "2026-11-20T19:30:15Z")
        #expect(time("-1w") == "2026-11-14T19:30:15Z")
        #expect(time("+1d") == "2026-11-22T19:30:15Z")
        for bad in [
            "", "2h", "-2", "-2s", "2 h ago", "2h  ago", "--2h", "-+2h", "Today", "2026-11-21T19:00:00", "2026-13-01",
        ] {
            #expect(time(bad) == nil, "\(bad)")
        }
    }

    @Test func shortLinesAreOneLineWithoutControlCharacters() {
        let n = StreakDelivery.Notification(
            kind: .atRisk, user: "alice", streak: "daily", localDate: LocalDate("2026-11-21")!,
            due: RFC3339.parse("2026-11-21T19:00:00Z")!, timezone: "Europe/Berlin",
            localDue: "2026-11-21T20:00:00+01:00", streakLength: 7, message: "At risk!\nCheck in \u{1b}[31mtoday\u{85}."
        )
        let logged: UInt64 = 1_795_287_603_500_000
        #expect(
            Context.shortLine(LogEntry(notification: n, realtimeMicroseconds: logged))
                == "2026-11-21T19:00:03Z at_risk alice/daily 2026-11-21: At risk! Check in  [31mtoday .")
        let dead = DeadDelivery(sink: "hook:notify", attempts: 1, error: "exit status 1")
        #expect(
            Context.shortLine(LogEntry(notification: n, realtimeMicroseconds: logged, dead: dead))
                == "2026-11-21T19:00:03Z DEAD hook:notify at_risk alice/daily 2026-11-21 after 1 attempt: exit status 1"
        )
    }
}
