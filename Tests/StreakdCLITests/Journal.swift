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
    static let failedMessageID = "0fce228a19574b79969657e364365cb8"

    /// The fields streakd's journal sink writes for a notification of `user` (Berlin, 20:00), of
    /// the store `store` (no STREAKD_STORE when nil: an entry of an older streakd).
    static func notification(
        _ kind: String, user: String, streak: String = "daily", date: String = "2026-11-21", length: Int = 7,
        message: String = "Your 7-day streak is at risk! Check in today to keep it going.", store: String?
    ) -> [String] {
        ["MESSAGE=\(message)", "MESSAGE_ID=\(messageIDs[kind]!)", "PRIORITY=5", "SYSLOG_IDENTIFIER=streakd"]
            + streakdFields(kind, user: user, streak: streak, date: date, length: length, store: store)
    }

    /// The fields of a "delivery given up" entry.
    static func dead(
        _ kind: String, user: String, streak: String = "daily", date: String = "2026-11-21", sink: String,
        attempts: Int, error: String, store: String?
    ) -> [String] {
        [
            "MESSAGE=\(sink) gave up on \(kind)/\(user)/\(streak)/\(date) after \(attempts) attempts: \(error)",
            "MESSAGE_ID=\(deadMessageID)", "PRIORITY=3", "SYSLOG_IDENTIFIER=streakd",
        ] + streakdFields(kind, user: user, streak: streak, date: date, length: 7, store: store)
            + ["STREAKD_SINK=\(sink)", "STREAKD_ATTEMPTS=\(attempts)", "STREAKD_ERROR=\(error)"]
    }

    /// The fields of a "delivery failed" entry, tried again from `retry`.
    static func failed(
        _ kind: String, user: String, streak: String = "daily", date: String = "2026-11-21", sink: String,
        attempts: Int, error: String, retry: String, store: String?
    ) -> [String] {
        [
            "MESSAGE=\(sink) failed on \(kind)/\(user)/\(streak)/\(date) (attempt \(attempts)), trying again from "
                + "\(retry): \(error)",
            "MESSAGE_ID=\(failedMessageID)", "PRIORITY=4", "SYSLOG_IDENTIFIER=streakd",
        ] + streakdFields(kind, user: user, streak: streak, date: date, length: 7, store: store)
            + [
                "STREAKD_SINK=\(sink)", "STREAKD_ATTEMPTS=\(attempts)", "STREAKD_ERROR=\(error)",
                "STREAKD_RETRY=\(retry)",
            ]
    }

    static func streakdFields(
        _ kind: String, user: String, streak: String, date: String, length: Int, store: String?
    ) -> [String] {
        [
            "STREAKD_KIND=\(kind)", "STREAKD_USER=\(user)", "STREAKD_STREAK=\(streak)", "STREAKD_LOCAL_DATE=\(date)",
            "STREAKD_STREAK_LENGTH=\(length)", "STREAKD_DUE=\(date)T19:00:00Z",
            "STREAKD_LOCAL_DUE=\(date)T20:00:00+01:00", "STREAKD_TIMEZONE=Europe/Berlin",
            "STREAKD_KEY=\(kind)/\(user)/\(streak)/\(date)",
        ] + (store.map { ["STREAKD_STORE=\($0)"] } ?? [])
    }

    /// Journal files made from entries in journald's export format (`__REALTIME_TIMESTAMP`,
    /// `_HOSTNAME`, … and the fields), written by systemd-journal-remote into `directory`, as a
    /// central host receives them from others.
    static func remoteJournal(_ entries: [(realtime: UInt64, host: String, fields: [String])], in directory: String)
        throws -> String
    {
        var export = ""
        for (i, e) in entries.enumerated() {
            export += "__REALTIME_TIMESTAMP=\(e.realtime)\n__MONOTONIC_TIMESTAMP=\(i + 1)\n"
            // As the units send them: a DynamicUser= uid, the unit journald saw (log trusts it).
            export += "_BOOT_ID=0123456789abcdef0123456789abcdef\n_HOSTNAME=\(e.host)\n_TRANSPORT=journal\n"
            export += "_UID=61842\n_COMM=streakd\n_SYSTEMD_UNIT=streakd-tick.service\n"
            for f in e.fields { export += f + "\n" }
            export += "\n"
        }
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let file = directory + "/remote.journal"
        let r = run(["/lib/systemd/systemd-journal-remote", "-o", file, "-"], stdin: export, timeout: .seconds(30))
        guard r.code == 0 else {
            throw JournaldProcess.Unavailable(description: "systemd-journal-remote exited with \(r.code): \(r.err)")
        }
        return file
    }
}
