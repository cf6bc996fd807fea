import Foundation
import StreakCore
import StreakTestKit
import Testing

@testable import StreakDelivery

@Suite(.fastTier) struct JournalSinkTests {
    /// Unique per test run, so entries of earlier runs never match.
    static let run = UUID().uuidString.lowercased().prefix(8)

    static func notification(
        _ kind: NotificationKind, user: String, streak: String = "daily", date: String = "2026-11-21",
        message: String = "Your 7-day streak is at risk! Check in today to keep it going."
    ) -> StreakDelivery.Notification {
        Notification(
            kind: kind, user: user, streak: streak, localDate: LocalDate(date)!,
            due: RFC3339.parse("\(date)T19:00:00Z")!, timezone: "Europe/Berlin", localDue: "\(date)T20:00:00+01:00",
            streakLength: 7, message: message)
    }

    @Test func theEntryCarriesEveryField() {
        let sample = Self.notification(.streakBroken, user: "u1")
        let entry = JournalSink.entry(for: sample)
        #expect(
            Array(entry.prefix(4)) == [
                "MESSAGE=\(sample.message)", "MESSAGE_ID=f5195bfdfc6c4e19bb9006c1f3d9bff6", "PRIORITY=4",
                "SYSLOG_IDENTIFIER=streakd",
            ])
        #expect(entry.dropFirst(4).contains("STREAKD_KEY=streak_broken/u1/daily/2026-11-21"))
        #expect(entry.count == 4 + sample.fields.count)
        #expect(JournalSink().name == "journal")
    }

    @Test func eachNotificationIsOneJournalEntryWithEveryField() throws {
        try Journal.ensureRunning()
        let user = "journal-fields-\(Self.run)"
        let sent = [
            Self.notification(.atRisk, user: user),
            Self.notification(.freezeUsed, user: user, message: "A freeze covered 2026-11-20.\nTwo left."),
            Self.notification(.streakBroken, user: user, streak: "reading"),
            Self.notification(.freezeRefilled, user: user, message: "Ünïcode ✓ freeze refilled"),
        ]
        let sink = JournalSink()
        for notification in sent { #expect(sink.deliver(notification) == .delivered) }

        let entries = try Journal.entries(["STREAKD_USER=\(user)"], count: sent.count)
        #expect(entries.count == sent.count)
        for notification in sent {
            let matching = entries.filter { $0["STREAKD_KEY"] as? String == notification.key }
            try #require(matching.count == 1, "one entry for \(notification.key)")
            let entry = matching[0]
            #expect(entry["MESSAGE"] as? String == notification.message)
            #expect(entry["MESSAGE_ID"] as? String == notification.kind.messageID)
            #expect(entry["PRIORITY"] as? String == String(notification.kind.priority))
            #expect(entry["SYSLOG_IDENTIFIER"] as? String == "streakd")
            for (name, value) in notification.fields {
                #expect(entry[name] as? String == value, "\(name) of \(notification.key)")
            }
        }
    }

    /// sd_journal_sendv answers success with no socket; the sink must not call that delivered.
    @Test func noJournalSocketIsAFailureToRetry() {
        let sink = JournalSink(socketPath: "/nonexistent/journal/socket")
        #expect(
            sink.deliver(Self.notification(.atRisk, user: "nosocket", streak: "s"))
                == .failed("no journal socket at /nonexistent/journal/socket: No such file or directory"))
    }

    // The 100,000-entry burst is proven through `tick` itself: StreakdCLITests/BurstTests.swift.
}
