import StreakCore
import StreakTestKit
import Testing

@testable import StreakDelivery

@Suite(.fastTier) struct NotificationTests {
    let sample = Notification(
        kind: .atRisk, user: "u1", streak: "daily", localDate: LocalDate("2026-11-21")!,
        due: RFC3339.parse("2026-11-21T19:00:00Z")!, timezone: "Europe/Berlin", localDue: "2026-11-21T20:00:00+01:00",
        streakLength: 7, message: "Your 7-day streak is at risk! Check in today to keep it going.")

    @Test func jsonCarriesThePreviewKeysInOrder() {
        #expect(
            sample.json.text
                == #"{"kind":"at_risk","user":"u1","streak":"daily","due":"2026-11-21T19:00:00Z","local_due":"2026-11-21T20:00:00+01:00","timezone":"Europe/Berlin","local_date":"2026-11-21","streak_length":7,"message":"Your 7-day streak is at risk! Check in today to keep it going.","key":"at_risk/u1/daily/2026-11-21"}"#
        )
    }

    @Test func fieldNamesAreValidJournalFields() {
        for (name, _) in sample.fields {
            #expect(name.utf8.allSatisfy { ($0 >= 65 && $0 <= 90) || ($0 >= 48 && $0 <= 57) || $0 == 95 })
        }
    }

    @Test func messageIDsAreDistinct128BitHex() {
        let ids = NotificationKind.allCases.map(\.messageID)
        #expect(Set(ids).count == NotificationKind.allCases.count)
        #expect(ids.allSatisfy { $0.count == 32 && $0.allSatisfy(\.isHexDigit) })
    }

    @Test func memorySinkAnswersItsOutcomesInTurn() {
        let sink = MemorySink(outcomes: [.failed("down")])
        #expect(sink.deliver(sample) == .failed("down"))
        #expect(sink.deliver(sample) == .delivered)
        #expect(sink.received.count == 2)
    }
}
