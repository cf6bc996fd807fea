import Foundation
import Dispatch
import Synchronization

/// Runs a body on a thread of its own while the caller goes on; `wait` answers its result when it
/// is done, rethrowing what it threw. The body is sent to that thread (`sending`): the compiler
/// checks that the caller does not touch what it takes along (the import's reading thread takes
/// its file, checker and progress bar), and its result, which any thread may read, is `Sendable`.
final class Background<Result: Sendable>: Sendable {
    private let done = DispatchSemaphore(value: 0)
    /// The body, until its thread takes it.
    private let body: Mutex<(() throws -> Result)?>
    /// Set by the body's thread before `done` is signalled.
    private let result = Mutex<Swift.Result<Result, any Error>?>(nil)

    /// A thread of its own, not a dispatch queue's: bodies here wait on each other (preview's
    /// three), and the global queues run only about as many at once as there are cores.
    init(_ body: sending @escaping () throws -> Result) {
        self.body = Mutex(body)
        Thread.detachNewThread { [self] in
            let run = self.body.withLock { $0.take() }!
            let outcome = Swift.Result { try run() }
            result.withLock { $0 = outcome }
            done.signal()
        }
    }

    @discardableResult
    func wait() throws -> Result {
        done.wait()
        done.signal()  // a second wait returns at once
        return try result.withLock { $0! }.get()
    }
}

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
