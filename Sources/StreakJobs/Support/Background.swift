import Foundation
import Dispatch
import Synchronization

/// Runs a body on a thread of its own while the caller goes on; `wait` answers its result when it
/// is done, rethrowing what it threw. What the body takes and answers crosses threads, so both are
/// `Sendable`, checked by the compiler.
final class Background<Result: Sendable>: Sendable {
    private let done = DispatchSemaphore(value: 0)
    /// Set by the body's thread before `done` is signalled.
    private let result = Mutex<Swift.Result<Result, any Error>?>(nil)

    /// A thread of its own, not a dispatch queue's: bodies here wait on each other (preview's
    /// three), and the global queues run only about as many at once as there are cores.
    init(_ body: @escaping @Sendable () throws -> Result) {
        Thread.detachNewThread { [self] in
            let outcome = Swift.Result { try body() }
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

/// A value a caller hands to another thread and never touches again. The compiler cannot see
/// that the caller lets go, so this is the one place streakd vouches for it: the import's reading
/// thread takes its file, checker and progress bar along, and owns them alone from then on.
struct Handover<Value>: @unchecked Sendable {
    let value: Value
}
