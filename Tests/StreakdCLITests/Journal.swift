import Foundation
import StreakTestKit

#if canImport(Glibc)
    import Glibc
#endif

/// A real systemd-journald for the `log` tests (a small copy of StreakDeliveryTests' helper), and
/// a writer that sends entries as streakd's sinks do, over journald's native socket.
enum TestJournal {
    static func ensureRunning() throws { try JournaldProcess.ensureRunning() }

    /// Sends one entry (`NAME=value` fields) as one datagram of journald's native protocol;
    /// values with line breaks use its length-prefixed form. Answers whether it was sent.
    @discardableResult
    static func send(_ fields: [String]) -> Bool {
        var payload: [UInt8] = []
        for field in fields {
            let equals = field.firstIndex(of: "=")!
            let value = Array(field[field.index(after: equals)...].utf8)
            if value.contains(10) {
                payload += Array(field[..<equals].utf8) + [10]
                withUnsafeBytes(of: UInt64(value.count).littleEndian) { payload += $0 }
                payload += value + [10]
            } else {
                payload += Array(field.utf8) + [10]
            }
        }
        return JournaldProcess.withSocket { fd, address in
            sendto(fd, payload, payload.count, 0, address, socklen_t(MemoryLayout<sockaddr_un>.size)) == payload.count
        }
    }

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
