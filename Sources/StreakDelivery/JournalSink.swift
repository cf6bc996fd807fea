import CSystemd
import Foundation
import StreakCore
import Synchronization

/// The journal sink (SPEC §5): one entry per notification through sd-journal, with `MESSAGE`,
/// `MESSAGE_ID`, `PRIORITY`, `SYSLOG_IDENTIFIER=streakd` and the `STREAKD_*` fields, paced so
/// that journald's rate limiter drops none of them.
public final class JournalSink: Sink {
    public let name = "journal"
    private let clock = ContinuousClock()
    /// Held while an entry waits for its slot: concurrent deliveries queue behind the pacer.
    private let pacer: Mutex<JournalPacer<ContinuousClock.Instant>>

    private let socketPath: String
    /// Whether the run was asked to stop (SIGTERM): a wait for the pacer ends, and the entry is
    /// left for the next run.
    private let stopRequested: @Sendable () -> Bool
    /// The store's identity (`STREAKD_STORE` of every entry), so that `log` shows one store's.
    public let store: String?

    /// `socketPath` is only checked (sd-journal always sends to the default); tests point it elsewhere.
    public init(
        pacer: JournalPacer<ContinuousClock.Instant> = JournalPacer(), socketPath: String = JournalSink.socket,
        stopRequested: @escaping @Sendable () -> Bool = { false }, store: String? = nil
    ) {
        self.pacer = Mutex(pacer)
        self.socketPath = socketPath
        self.stopRequested = stopRequested
        self.store = store
    }

    /// The entry's fields, `NAME=value`, in the order they are sent.
    public static func entry(for notification: Notification, store: String? = nil) -> [String] {
        fields(of: notification, store: store).strings
    }

    /// The entry's fields written into one buffer (a busy run sends thousands): the
    /// notification's `fields`, after the journal's own, then `STREAKD_STORE`.
    static func fields(of n: Notification, store: String?) -> EntryFields {
        var f = EntryFields()
        f.add("MESSAGE", n.message)
        f.add("MESSAGE_ID", n.kind.messageID)
        f.add("PRIORITY", String(n.kind.priority))
        f.add("SYSLOG_IDENTIFIER", "streakd")
        n.eachField { f.add($0, $1) }
        if let store { f.add("STREAKD_STORE", store) }
        return f
    }

    /// The MESSAGE_ID of a "delivery given up" entry: a hook (or another sink) failed
    /// `attempts` times and is marked dead. `streakd log` shows these beside the notifications.
    public static let deadMessageID = "2db9f1e4acff47b88525fce4e8028ae4"

    /// The MESSAGE_ID of a "delivery failed" entry: a sink failed on a notification and will try
    /// again (`STREAKD_RETRY`: from when). `streakd log --failed` shows these and the dead ones.
    public static let failedMessageID = "0fce228a19574b79969657e364365cb8"

    /// The entry written when a sink gives up on a notification: the notification's `STREAKD_*`
    /// fields plus `STREAKD_SINK`, `STREAKD_ATTEMPTS`, `STREAKD_ERROR`, priority 3 (error).
    public static func deadEntry(
        for notification: Notification, sink: String, attempts: Int, error: String, store: String? = nil
    ) -> [String] {
        [
            "MESSAGE=\(sink) gave up on \(notification.key) after \(attempts) attempt\(attempts == 1 ? "" : "s"): \(error)",
            "MESSAGE_ID=\(deadMessageID)",
            "PRIORITY=3",
            "SYSLOG_IDENTIFIER=streakd",
        ] + notification.fields.map { "\($0.0)=\($0.1)" } + (store.map { ["STREAKD_STORE=\($0)"] } ?? [])
            + ["STREAKD_SINK=\(sink)", "STREAKD_ATTEMPTS=\(attempts)", "STREAKD_ERROR=\(error)"]
    }

    /// The entry written when a sink failed on a notification and will try again from `retry`:
    /// as a dead one's, with `STREAKD_RETRY` (RFC 3339, UTC), priority 4 (warning).
    public static func failedEntry(
        for notification: Notification, sink: String, attempts: Int, error: String, retry: Instant,
        store: String? = nil
    ) -> [String] {
        [
            "MESSAGE=\(sink) failed on \(notification.key) (attempt \(attempts)), trying again from \(retry): \(error)",
            "MESSAGE_ID=\(failedMessageID)",
            "PRIORITY=4",
            "SYSLOG_IDENTIFIER=streakd",
        ] + notification.fields.map { "\($0.0)=\($0.1)" } + (store.map { ["STREAKD_STORE=\($0)"] } ?? [])
            + [
                "STREAKD_SINK=\(sink)", "STREAKD_ATTEMPTS=\(attempts)", "STREAKD_ERROR=\(error)",
                "STREAKD_RETRY=\(retry)",
            ]
    }

    /// The MESSAGE_IDs of a run's summary, one per job (SPEC §13): the last entry of each `tick`
    /// and `refill`.
    public static let summaryMessageIDs = [
        "tick": "7c9d1c40f25f4d8b84265be8f775e415", "refill": "f0726304c77843a7a4489d8fdc317772",
    ]

    /// The counts a summary carries, in order: each `STREAKD_NAME` field, and in the message.
    public static let summaryCounts = ["sent", "expired", "delivered", "failed", "dead", "pending"]

    /// A run's summary entry: `tick: 3 sent, 0 expired, 3 delivered, 0 failed, 0 dead, 0 pending
    /// in 0.12 s` with each count a field (`STREAKD_SENT`, ...), `STREAKD_DURATION_MS` and
    /// `STREAKD_JOB`; priority 6 (info), 4 (warning) when a delivery failed, died or is left pending.
    /// `extra`: the job's own counts after these (a refill's `refilled`), in the message and as fields.
    public static func summaryEntry(
        job: String, counts: [String: Int], extra: [(String, Int)] = [], durationMS: Int, store: String? = nil
    ) -> [String] {
        let all = summaryCounts.map { ($0, counts[$0] ?? 0) } + extra
        let troubled = ["failed", "dead", "pending"].contains { (counts[$0] ?? 0) > 0 }
        let seconds = String(format: "%.2f", Double(durationMS) / 1000)
        return [
            "MESSAGE=\(job): " + all.map { "\($0.1) \($0.0)" }.joined(separator: ", ") + " in \(seconds) s",
            "MESSAGE_ID=\(summaryMessageIDs[job] ?? "")", "PRIORITY=\(troubled ? 4 : 6)", "SYSLOG_IDENTIFIER=streakd",
            "STREAKD_JOB=\(job)",
        ] + all.map { "STREAKD_\($0.0.uppercased())=\($0.1)" } + ["STREAKD_DURATION_MS=\(durationMS)"]
            + (store.map { ["STREAKD_STORE=\($0)"] } ?? [])
    }

    /// Writes a run's summary entry, not paced: one entry more than the pacer's burst is within
    /// the margin it leaves below journald's limit, and a run that used its whole burst would
    /// otherwise wait an interval to say it ended.
    public func recordSummary(
        job: String, counts: [String: Int], extra: [(String, Int)] = [], durationMS: Int
    ) -> DeliveryOutcome {
        let fields = Self.summaryEntry(job: job, counts: counts, extra: extra, durationMS: durationMS, store: store)
        guard access(socketPath, W_OK) == 0 else {
            return .failed("no journal socket at \(socketPath): \(String(cString: strerror(errno)))")
        }
        let result = Self.send(EntryFields(fields))
        return result < 0 ? .failed("sd_journal_sendv: \(String(cString: strerror(-result)))") : .delivered
    }

    /// Writes a "delivery given up" entry (paced like notifications).
    public func recordDead(_ notification: Notification, sink: String, attempts: Int, error: String) -> DeliveryOutcome
    {
        write(Self.deadEntry(for: notification, sink: sink, attempts: attempts, error: error, store: store))
    }

    /// Writes a "delivery failed" entry (paced like notifications).
    public func recordFailed(
        _ notification: Notification, sink: String, attempts: Int, error: String, retry: Instant
    ) -> DeliveryOutcome {
        write(
            Self.failedEntry(
                for: notification, sink: sink, attempts: attempts, error: error, retry: retry, store: store))
    }

    public var deliversAtOnce: Bool { pacer.withLock { !$0.wouldWait(at: clock.now) } }
    public var alwaysAtOnce: Bool { pacer.withLock { $0.burst == 0 } }
    /// An entry may wait for the pacer's whole interval.
    public var timeLimit: Double {
        pacer.withLock { $0.burst == 0 ? 1 : Double($0.interval.components.seconds) + 1 }
    }

    public func deliver(_ notification: Notification) -> DeliveryOutcome {
        write(Self.fields(of: notification, store: store))
    }

    /// Where journald listens. sd_journal_sendv answers success when it is missing (a sandbox with
    /// an empty /run): without this check the ledger would record deliveries nobody received.
    public static let socket = "/run/systemd/journal/socket"

    private func write(_ fields: [String]) -> DeliveryOutcome { write(EntryFields(fields)) }

    private func write(_ fields: EntryFields) -> DeliveryOutcome {
        guard access(socketPath, W_OK) == 0 else {
            return .failed("no journal socket at \(socketPath): \(String(cString: strerror(errno)))")
        }
        // The lock is held while waiting: concurrent deliveries queue behind the pacer.
        let result: Int32? = pacer.withLock { pacer in
            guard waitForPacer(&pacer) else { return nil }
            return Self.send(fields)
        }
        guard let result else { return .interrupted("stopped while waiting for the journal's pace") }
        if result < 0 { return .failed("sd_journal_sendv: \(String(cString: strerror(-result)))") }
        return .delivered
    }

    /// Waits for the pacer's next slot, in steps of at most 100 ms; false when a stop came first.
    private func waitForPacer(_ pacer: inout JournalPacer<ContinuousClock.Instant>) -> Bool {
        while case .wait(let until) = pacer.request(at: clock.now) {
            if stopRequested() { return false }
            let left = min(clock.now.duration(to: until), .milliseconds(100))
            if left > .zero {
                let (seconds, attoseconds) = left.components
                Thread.sleep(forTimeInterval: Double(seconds) + Double(attoseconds) * 1e-18)
            }
        }
        return true
    }

    /// sd_journal_send is variadic, which Swift cannot call: the fields go to sd_journal_sendv as
    /// iovecs pointing into their buffer, which stays alive for the whole call. Values may hold
    /// newlines (sd-journal then uses its binary-safe framing). Returns 0 or a negative errno.
    static func send(_ fields: EntryFields) -> Int32 {
        guard !fields.bytes.isEmpty else { return -EINVAL }
        // Read only: sd_journal_sendv takes iovecs, whose pointers are mutable in C.
        return fields.bytes.withUnsafeBytes { buffer in
            let base = UnsafeMutableRawPointer(mutating: buffer.baseAddress!)
            var start = 0
            let vectors = fields.ends.map { end in
                defer { start = end }
                return iovec(iov_base: base + start, iov_len: end - start)
            }
            return vectors.withUnsafeBufferPointer { sd_journal_sendv($0.baseAddress, Int32($0.count)) }
        }
    }
}

/// A journal entry's `NAME=value` fields, one after another in one byte buffer.
struct EntryFields {
    var bytes: [UInt8] = []
    /// Where each field ends in `bytes`.
    var ends: [Int] = []

    init() {
        bytes.reserveCapacity(512)
        ends.reserveCapacity(16)
    }

    /// Whole fields, `NAME=value` each.
    init(_ fields: [String]) {
        self.init()
        for field in fields {
            bytes.append(contentsOf: field.utf8)
            ends.append(bytes.count)
        }
    }

    mutating func add(_ name: StaticString, _ value: String) {
        bytes.append(contentsOf: UnsafeBufferPointer(start: name.utf8Start, count: name.utf8CodeUnitCount))
        bytes.append(UInt8(ascii: "="))
        bytes.append(contentsOf: value.utf8)
        ends.append(bytes.count)
    }

    var strings: [String] {
        var start = 0
        return ends.map { end in
            defer { start = end }
            return String(decoding: bytes[start..<end], as: UTF8.self)
        }
    }
}
