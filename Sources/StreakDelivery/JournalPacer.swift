/// Keeps the journal sink under journald's rate limiter (SPEC §5: no entry may be lost to it).
///
/// journald drops, silently, whatever one service logs past `RateLimitBurst` entries within
/// `RateLimitIntervalSec` (defaults 10,000 per 30 s; the burst is scaled *up* with the journal's
/// free space, never below 10,000: a journal at its size cap has almost none). journald's window
/// opens at the first entry after the last one ran out, so it need not start when ours would:
/// another message of the service may have opened it earlier. So the pacer bounds every span
/// of `interval`, wherever it starts: an entry is sent only once the entry `burst` places
/// before it is more than `interval` old (one millisecond more, for the entries' way to journald).
/// Fixed windows of the pacer's own would let a journald window that opened mid-way through one
/// take its end and the next one's start: up to twice the burst, past the floor of a journal at
/// its cap. The default, 9,500 per 30 s, leaves 500 entries of room for the service's other
/// messages.
///
/// A pure state machine over an instant type (as Hummingbird's are generic over a `Clock`):
/// it reads no clock and never sleeps; the caller passes `now` and does the waiting, so tests
/// drive it with a fake instant.
public struct JournalPacer<Moment: InstantProtocol>: Sendable where Moment.Duration == Duration {
    public enum Decision: Equatable, Sendable {
        /// Send the entry now (it has been counted).
        case send
        /// Send nothing before this instant, then ask again.
        case wait(until: Moment)
    }

    /// Entries allowed per window; 0 means no pacing (for units with `LogRateLimitIntervalSec=0`).
    public let burst: Int
    public let interval: Duration
    /// When the last `burst` entries were sent, as a ring: `sent[next]` is the oldest once full.
    private var sent: [Moment] = []
    private var next = 0
    /// Added to `interval` before a slot is free again.
    static var margin: Duration { .milliseconds(1) }

    public init(burst: Int = 9_500, interval: Duration = .seconds(30)) {
        precondition(burst >= 0, "burst must not be negative")
        precondition(burst == 0 || interval > .zero, "interval must be positive")
        self.burst = burst
        self.interval = interval
    }

    /// No pacing at all.
    public static var unlimited: JournalPacer { JournalPacer(burst: 0) }

    /// When the next entry may be sent: nil when it may go at once.
    private func free(at now: Moment) -> Moment? {
        guard burst > 0, sent.count == burst else { return nil }
        let free = sent[next].advanced(by: interval + Self.margin)
        return now < free ? free : nil
    }

    /// Whether an entry asked for at `now` would have to wait (asks without counting it).
    public func wouldWait(at now: Moment) -> Bool { free(at: now) != nil }

    /// Asks to send one entry at `now`.
    public mutating func request(at now: Moment) -> Decision {
        guard burst > 0 else { return .send }
        if let free = free(at: now) { return .wait(until: free) }
        if sent.count < burst {
            sent.append(now)
        } else {
            sent[next] = now
            next = (next + 1) % burst
        }
        return .send
    }
}
