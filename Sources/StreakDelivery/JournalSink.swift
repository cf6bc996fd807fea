import CSystemd
import Foundation

/// The journal sink (SPEC §5): one entry per notification through sd-journal, with `MESSAGE`,
/// `MESSAGE_ID`, `PRIORITY`, `SYSLOG_IDENTIFIER=streakd` and the `STREAKD_*` fields, paced so
/// that journald's rate limiter drops none of them.
public final class JournalSink: Sink, @unchecked Sendable {
    public let name = "journal"
    private let clock = ContinuousClock()
    private let lock = NSLock()
    private var pacer: JournalPacer<ContinuousClock.Instant>

    private let socketPath: String

    /// `socketPath` is only checked (sd-journal always sends to the default); tests point it elsewhere.
    public init(pacer: JournalPacer<ContinuousClock.Instant> = JournalPacer(), socketPath: String = JournalSink.socket)
    {
        self.pacer = pacer
        self.socketPath = socketPath
    }

    /// The entry's fields, `NAME=value`, in the order they are sent.
    public static func entry(for notification: Notification) -> [String] {
        [
            "MESSAGE=\(notification.message)",
            "MESSAGE_ID=\(notification.kind.messageID)",
            "PRIORITY=\(notification.kind.priority)",
            "SYSLOG_IDENTIFIER=streakd",
        ] + notification.fields.map { "\($0.0)=\($0.1)" }
    }

    /// The MESSAGE_ID of a "delivery given up" entry: a hook (or another sink) failed
    /// `attempts` times and is marked dead. `streakd log` shows these beside the notifications.
    public static let deadMessageID = "2db9f1e4acff47b88525fce4e8028ae4"

    /// The entry written when a sink gives up on a notification: the notification's `STREAKD_*`
    /// fields plus `STREAKD_SINK`, `STREAKD_ATTEMPTS`, `STREAKD_ERROR`, priority 3 (error).
    public static func deadEntry(for notification: Notification, sink: String, attempts: Int, error: String) -> [String]
    {
        [
            "MESSAGE=\(sink) gave up on \(notification.key) after \(attempts) attempt\(attempts == 1 ? "" : "s"): \(error)",
            "MESSAGE_ID=\(deadMessageID)",
            "PRIORITY=3",
            "SYSLOG_IDENTIFIER=streakd",
        ] + notification.fields.map { "\($0.0)=\($0.1)" }
            + ["STREAKD_SINK=\(sink)", "STREAKD_ATTEMPTS=\(attempts)", "STREAKD_ERROR=\(error)"]
    }

    /// Writes a "delivery given up" entry (paced like notifications).
    public func recordDead(_ notification: Notification, sink: String, attempts: Int, error: String) -> DeliveryOutcome
    {
        write(Self.deadEntry(for: notification, sink: sink, attempts: attempts, error: error))
    }

    public var deliversAtOnce: Bool { lock.withLock { !pacer.wouldWait(at: clock.now) } }
    public var alwaysAtOnce: Bool { lock.withLock { pacer.burst == 0 } }

    public func deliver(_ notification: Notification) -> DeliveryOutcome {
        write(Self.entry(for: notification))
    }

    /// Where journald listens. sd_journal_sendv answers success when it is missing (a sandbox with
    /// an empty /run): without this check the ledger would record deliveries nobody received.
    public static let socket = "/run/systemd/journal/socket"

    private func write(_ fields: [String]) -> DeliveryOutcome {
        guard access(socketPath, W_OK) == 0 else {
            return .failed("no journal socket at \(socketPath): \(String(cString: strerror(errno)))")
        }
        // The lock is held while waiting: concurrent deliveries queue behind the pacer.
        let result: Int32 = lock.withLock {
            waitForPacer()
            return Self.send(fields)
        }
        if result < 0 { return .failed("sd_journal_sendv: \(String(cString: strerror(-result)))") }
        return .delivered
    }

    private func waitForPacer() {
        while case .wait(let until) = pacer.request(at: clock.now) {
            let left = clock.now.duration(to: until)
            if left > .zero {
                let (seconds, attoseconds) = left.components
                Thread.sleep(forTimeInterval: Double(seconds) + Double(attoseconds) * 1e-18)
            }
        }
    }

    /// sd_journal_send is variadic, which Swift cannot call: the fields go to sd_journal_sendv as
    /// iovecs pointing into one byte buffer that stays alive for the whole call. Values may hold
    /// newlines (sd-journal then uses its binary-safe framing). Returns 0 or a negative errno.
    static func send(_ fields: [String]) -> Int32 {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(fields.reduce(0) { $0 + $1.utf8.count })
        var ranges: [Range<Int>] = []
        ranges.reserveCapacity(fields.count)
        for field in fields {
            let start = bytes.count
            bytes.append(contentsOf: field.utf8)
            ranges.append(start..<bytes.count)
        }
        guard !bytes.isEmpty else { return -EINVAL }
        return bytes.withUnsafeMutableBytes { buffer in
            let vectors = ranges.map { iovec(iov_base: buffer.baseAddress! + $0.lowerBound, iov_len: $0.count) }
            return vectors.withUnsafeBufferPointer { sd_journal_sendv($0.baseAddress, Int32($0.count)) }
        }
    }
}
