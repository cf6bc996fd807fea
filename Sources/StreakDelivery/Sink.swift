import Foundation

/// What became of one delivery attempt.
public enum DeliveryOutcome: Equatable, Sendable {
    case delivered
    /// Worth another try on a later run.
    case failed(String)
    /// The sink cannot be reached at all (no session bus, no notification server): a warning, never
    /// retried and never a failure of the run. The ledger records it `expired` with the reason.
    case unavailable(String)
}

/// A place notifications go: the journal, the desktop, a hook.
public protocol Sink: Sendable {
    /// A stable name for the ledger (`journal`, `desktop`, `hook:NAME`).
    var name: String { get }
    /// Whether this notification is for this sink at all (a hook's kinds, the desktop's users).
    /// The ledger keeps a delivery row only for the sinks that accept it.
    func accepts(_ notification: Notification) -> Bool
    func deliver(_ notification: Notification) -> DeliveryOutcome
    /// Whether the next `deliver` returns at once: no pacing wait, no process to run, no bus
    /// round trip. Only then may a run commit outcomes in groups (a crash then repeats at most
    /// the deliveries of one group); before a slow delivery it commits everything first.
    var deliversAtOnce: Bool { get }
    /// Whether every `deliver` returns at once, now and later (no pacing at all): only then may
    /// a run deliver on a second thread while it records what comes next.
    var alwaysAtOnce: Bool { get }
}

extension Sink {
    public func accepts(_ notification: Notification) -> Bool { true }
    public var deliversAtOnce: Bool { false }
    public var alwaysAtOnce: Bool { false }
}

/// A sink that keeps what it receives: the twin for unit tests.
public final class MemorySink: Sink, @unchecked Sendable {
    public let name: String
    private var outcomes: [DeliveryOutcome]
    private var kept: [Notification] = []
    private let lock = NSLock()

    /// `outcomes` are answered in turn, then `.delivered`.
    public init(name: String = "memory", outcomes: [DeliveryOutcome] = []) {
        self.name = name
        self.outcomes = outcomes
    }

    public var received: [Notification] { lock.withLock { kept } }
    public var deliversAtOnce: Bool { true }
    public var alwaysAtOnce: Bool { true }

    public func deliver(_ notification: Notification) -> DeliveryOutcome {
        lock.withLock {
            kept.append(notification)
            return outcomes.isEmpty ? .delivered : outcomes.removeFirst()
        }
    }
}
