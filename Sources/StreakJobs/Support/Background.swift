import Foundation
import Dispatch
import Synchronization

/// A value handed from one thread to another, once: `put` sends it (the compiler checks that
/// the giver keeps no hold on it), `take` waits for it. The import's second half, read beside,
/// goes so to the reading thread.
final class Handover<Value>: Sendable {
    /// The value, in a lock of its own made with it: a lock is given a value whole when it is
    /// made, where setting one inside it would need the value's type to be `Sendable`.
    private final class Given: Sendable {
        let value: Mutex<Value?>
        init(_ value: sending Value) { self.value = Mutex(value) }
    }
    private let given = Mutex<Given?>(nil)
    private let done = DispatchSemaphore(value: 0)

    func put(_ value: sending Value) {
        let given = Given(value)
        self.given.withLock { $0 = given }
        done.signal()
    }

    /// Waits for the value; once only.
    func take() -> sending Value {
        done.wait()
        return given.withLock { $0 }!.value.withLock { $0.take() }!
    }
}
