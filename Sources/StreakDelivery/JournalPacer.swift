/// Keeps the journal sink under journald's rate limiter (SPEC §5: no entry may be lost to it).
///
/// journald drops, silently, whatever one service logs past `RateLimitBurst` entries within
/// `RateLimitIntervalSec` (defaults 10,000 per 30 s; the burst is scaled *up* with free disk
/// space, never below 10,000). The pacer allows at most `burst` entries per `interval`: the
/// first entry opens a window; once `burst` entries are in it, the next one waits until the
/// window has run out, and then opens a new one. The default, 9,500 per 30 s, leaves 500
/// entries of room for the service's other messages and for the few milliseconds by which
/// journald's window starts later than ours.
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
    private var windowEnd: Moment?
    private var sent = 0

    public init(burst: Int = 9_500, interval: Duration = .seconds(30)) {
        precondition(burst >= 0, "burst must not be negative")
        precondition(burst == 0 || interval > .zero, "interval must be positive")
        self.burst = burst
        self.interval = interval
    }

    /// No pacing at all.
    public static var unlimited: JournalPacer { JournalPacer(burst: 0) }

    /// Whether an entry asked for at `now` would have to wait (asks without counting it).
    public func wouldWait(at now: Moment) -> Bool {
        guard burst > 0, let end = windowEnd else { return false }
        return now < end && sent >= burst
    }

    /// Asks to send one entry at `now`.
    public mutating func request(at now: Moment) -> Decision {
        guard burst > 0 else { return .send }
        if let end = windowEnd, now < end {
            guard sent < burst else { return .wait(until: end) }
            sent += 1
            return .send
        }
        windowEnd = now.advanced(by: interval)
        sent = 1
        return .send
    }
}
