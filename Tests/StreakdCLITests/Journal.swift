import Foundation
import StreakTestKit

#if canImport(Glibc)
    import Glibc
#endif

/// The fields of the entries the `log` tests write (`Journal.send`), as streakd's sinks write them.
enum TestJournal {
    static let messageIDs = [
        "at_risk": "cf4039696c9c459e89e0e7f18de192c5", "freeze_used": "76f95083794c4232b790117a598a968a",
        "streak_broken": "f5195bfdfc6c4e19bb9006c1f3d9bff6", "freeze_refilled": "cf494c00cced4596850808f5f9c0456a",
    ]
    static let deadMessageID = "2db9f1e4acff47b88525fce4e8028ae4"

    /// The fields streakd's journal sink writes for a notification of `user` (Berlin, 20:00).
    static func notification(
        _ kind: String, user: String, streak: String = "daily", date: String = "2026-11-21", length: Int = 7,
        message: String = "Your 7-day streak is at risk! Check in today to keep it going."
    ) -> [String] {
        ["MESSAGE=\(message)", "MESSAGE_ID=\(messageIDs[kind]!)", "PRIORITY=5", "SYSLOG_IDENTIFIER=streakd"]
            + streakdFields(kind, user: user, streak: streak, date: date, length: length)
    }

    /// The fields of a "delivery given up" entry.
    static func dead(
        _ kind: String, user: String, streak: String = "daily", date: String = "2026-11-21", sink: String,
        attempts: Int, error: String
    ) -> [String] {
        [
            "MESSAGE=\(sink) gave up on \(kind)/\(user)/\(streak)/\(date) after \(attempts) attempts: \(error)",
            "MESSAGE_ID=\(deadMessageID)", "PRIORITY=3", "SYSLOG_IDENTIFIER=streakd",
        ] + streakdFields(kind, user: user, streak: streak, date: date, length: 7)
            + ["STREAKD_SINK=\(sink)", "STREAKD_ATTEMPTS=\(attempts)", "STREAKD_ERROR=\(error)"]
    }

    static func streakdFields(_ kind: String, user: String, streak: String, date: String, length: Int) -> [String] {
        [
            "STREAKD_KIND=\(kind)", "STREAKD_USER=\(user)", "STREAKD_STREAK=\(streak)", "STREAKD_LOCAL_DATE=\(date)",
            "STREAKD_STREAK_LENGTH=\(length)", "STREAKD_DUE=\(date)T19:00:00Z",
            "STREAKD_LOCAL_DUE=\(date)T20:00:00+01:00", "STREAKD_TIMEZONE=Europe/Berlin",
            "STREAKD_KEY=\(kind)/\(user)/\(streak)/\(date)",
        ]
    }
}
