import CProcess
import Foundation
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
    /// An HTTP server answered (a webhook): the lane decides what the status means (SPEC §12: a
    /// 2xx is delivered, 410 dead at once, anything else a failure, tried again no earlier than
    /// `retryAfter` seconds from now when the server said so). `detail`: the status line and the
    /// start of the body, for people.
    case answered(status: Int, retryAfter: Int64?, detail: String)
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
    /// Deliveries the sink makes at once (a webhook's or a hook's `concurrency`). Above 1, or
    /// with a `batch` above 1, a run hands it deliveries with `start`, up to this many in flight.
    var width: Int { get }
    /// Notifications one delivery takes at most (a hook's `batch`: one process for them all).
    var batch: Int { get }
    /// Starts one delivery of up to `batch` notifications if it can start before `limit` (as
    /// `deliver(_:startingBefore:)` asks it) and returns without waiting for it; `done` is called
    /// once, from any thread, with an outcome for each notification, in order (nil: it did not
    /// start).
    func start(
        _ notifications: [Notification], startingBefore limit: () -> Int64?,
        done: @escaping @Sendable ([DeliveryOutcome]?) -> Void)
}

extension Sink {
    public func accepts(_ notification: Notification) -> Bool { true }
    public var deliversAtOnce: Bool { false }
    public var alwaysAtOnce: Bool { false }
    public var timeLimit: Double { 5 }
    public var width: Int { 1 }
    public var batch: Int { 1 }
    /// On a thread of its own, one `deliver` after another, the limit asked here (a hook asks it
    /// again right before its process starts); a later one that cannot start any more is
    /// `interrupted`, its attempt not counted.
    public func start(
        _ notifications: [Notification], startingBefore limit: () -> Int64?,
        done: @escaping @Sendable ([DeliveryOutcome]?) -> Void
    ) {
        guard let until = BootClock.instant(before: limit) else { return done(nil) }
        Thread.detachNewThread {
            var outcomes: [DeliveryOutcome] = []
            for (i, n) in notifications.enumerated() {
                guard let outcome = deliver(n, startingBefore: { until }) else {
                    if i == 0 { return done(nil) }
                    outcomes.append(.interrupted("the run could start no more deliveries"))
                    continue
                }
                outcomes.append(outcome)
            }
            done(outcomes)
        }
    }
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
