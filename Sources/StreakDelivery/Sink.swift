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
    /// Delivers if `mayStart` still says yes when asked as late as the sink can (a hook: right
    /// before its process starts, after everything it needs is ready); nil when it said no and
    /// nothing was started. A run stopped (SIGSTOP) after its last check and resumed past its lease
    /// therefore starts nothing.
    func deliver(_ notification: Notification, startingIf mayStart: () -> Bool) -> DeliveryOutcome?
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
    public func deliver(_ notification: Notification, startingIf mayStart: () -> Bool) -> DeliveryOutcome? {
        mayStart() ? deliver(notification) : nil
    }
}
