import CProcess
import StreakCore

/// What became of one delivery attempt.
public enum DeliveryOutcome: Equatable, Sendable {
    case delivered
    /// Worth another try on a later run.
    case failed(String)
    /// The sink cannot be reached at all (no session bus, no notification server): a warning, never
    /// retried and never a failure of the run. The ledger records it `expired` with the reason.
    case unavailable(String)
    /// The run was stopped (SIGTERM) before or while delivering: not delivered, or not known to
    /// be. The delivery stays pending for the next run and the attempt does not count.
    case interrupted(String)
}

/// A place notifications go: the journal, the desktop, a hook.
public protocol Sink: Sendable {
    /// A stable name for the ledger (`journal`, `desktop`, `hook:NAME`).
    var name: String { get }
    /// Whether this notification is for this sink at all (a hook's kinds, the desktop's users).
    /// The ledger keeps a delivery row only for the sinks that accept it.
    func accepts(_ notification: Notification) -> Bool
    func deliver(_ notification: Notification) -> DeliveryOutcome
    /// Delivers if it can start before `limit`'s instant (`BootClock`; nil: not at all), asked
    /// as late as the sink can and the clock read later still (a hook: right before its process
    /// starts, after everything it needs is ready); nil when it could not and nothing was
    /// started. A run stopped (SIGSTOP) after its last check and resumed past its lease
    /// therefore starts nothing.
    func deliver(_ notification: Notification, startingBefore limit: () -> Int64?) -> DeliveryOutcome?
    /// Whether the next `deliver` returns at once: no pacing wait, no process to run, no bus
    /// round trip. Only then may a run commit outcomes in groups (a crash then repeats at most
    /// the deliveries of one group); before a slow delivery it commits everything first.
    var deliversAtOnce: Bool { get }
    /// Whether every `deliver` returns at once, now and later (no pacing at all): only then may
    /// a run hand its outcomes to the transaction that records what comes next.
    var alwaysAtOnce: Bool { get }
    /// Seconds one `deliver` may take at the most (a hook's time-out): a run's lease covers it.
    var timeLimit: Double { get }
}

extension Sink {
    public func accepts(_ notification: Notification) -> Bool { true }
    public var deliversAtOnce: Bool { false }
    public var alwaysAtOnce: Bool { false }
    public var timeLimit: Double { 5 }
    public func deliver(_ notification: Notification, startingBefore limit: () -> Int64?) -> DeliveryOutcome? {
        guard BootClock.instant(before: limit) != nil else { return nil }
        return deliver(notification)
    }
}

/// The clock a delivery's start is measured on: CLOCK_BOOTTIME (it goes on while the machine
/// sleeps, as a lease measured on the database's clock does), in nanoseconds.
public enum BootClock {
    public static func nanoseconds() -> Int64 { Int64(streakd_boot_nanoseconds()) }

    /// `limit`'s instant, asked now, while it is still ahead; nil when it says no or has come.
    public static func instant(before limit: () -> Int64?) -> Int64? {
        guard let until = limit(), nanoseconds() < until else { return nil }
        return until
    }

    /// `duration` from now, as an instant of this clock.
    public static func after(_ duration: Duration) -> Int64 {
        let (seconds, attoseconds) = duration.components
        return nanoseconds() &+ seconds &* 1_000_000_000 &+ attoseconds / 1_000_000_000
    }
}
