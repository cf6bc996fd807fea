import StreakCore
import StreakDelivery
import Synchronization

/// A sink that keeps what it receives: the twin for unit tests.
public final class MemorySink: Sink, Sendable {
    public let name: String
    private let state: Mutex<(outcomes: [DeliveryOutcome], kept: [StreakCore.Notification])>

    /// `outcomes` are answered in turn, then `.delivered`.
    public init(name: String = "memory", outcomes: [DeliveryOutcome] = []) {
        self.name = name
        state = Mutex((outcomes, []))
    }

    public var received: [StreakCore.Notification] { state.withLock { $0.kept } }
    public var deliversAtOnce: Bool { true }
    public var alwaysAtOnce: Bool { true }

    public func deliver(_ notification: StreakCore.Notification) -> DeliveryOutcome {
        state.withLock { s in
            s.kept.append(notification)
            return s.outcomes.isEmpty ? .delivered : s.outcomes.removeFirst()
        }
    }
}
