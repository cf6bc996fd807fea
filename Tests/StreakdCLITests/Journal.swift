import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// A real systemd-journald for the `log` tests (a small copy of StreakDeliveryTests' helper), and
/// a writer that sends entries as streakd's sinks do, over journald's native socket.
enum TestJournal {
    static let socketPath = "/run/systemd/journal/socket"
    static let daemon = "/lib/systemd/systemd-journald"

    struct Unavailable: Error, CustomStringConvertible {
        var description: String
    }

    /// Started at most once per test process (and left running: PID 1 here is not systemd).
    static let ready: Result<Void, Unavailable> = {
        if answers() { return .success(()) }
        do {
            try FileManager.default.createDirectory(atPath: "/run/systemd/journal", withIntermediateDirectories: true)
            let process = Process()
            process.executableURL = URL(fileURLWithPath: daemon)
            process.standardInput = FileHandle.nullDevice
            process.standardOutput = FileHandle.nullDevice
            process.standardError = FileHandle.nullDevice
            try process.run()
            for _ in 0..<100 {
                if answers() { return .success(()) }
                if !process.isRunning {
                    return .failure(Unavailable(description: "\(daemon) exited with \(process.terminationStatus)"))
                }
                usleep(100_000)
            }
            return .failure(Unavailable(description: "\(daemon) started but \(socketPath) does not answer"))
        } catch {
            return .failure(Unavailable(description: "cannot start \(daemon): \(error)"))
        }
    }()

    static func ensureRunning() throws { try ready.get() }

    /// Does something receive datagrams on the socket? (A socket file outlives its journald.)
    static func answers() -> Bool {
        withSocket { fd, address in connect(fd, address, socklen_t(MemoryLayout<sockaddr_un>.size)) == 0 }
    }

    private static func withSocket(_ body: (Int32, UnsafePointer<sockaddr>) -> Bool) -> Bool {
        let fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue), 0)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: Array(socketPath.utf8)) }
        return withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { body(fd, $0) } }
    }

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
        return withSocket { fd, address in
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
