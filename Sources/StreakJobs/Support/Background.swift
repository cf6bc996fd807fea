import Foundation

/// Runs a body on a thread of its own while the caller goes on. `wait` answers its result when it
/// is done, rethrowing what it threw; until then the caller leaves alone what the body uses.
final class Background<Result>: @unchecked Sendable {
    private let done = DispatchSemaphore(value: 0)
    /// Written by the body's thread before `done` is signalled, read after `wait`.
    private var result: Swift.Result<Result, any Error>?

    init(_ body: @escaping () throws -> Result) {
        nonisolated(unsafe) let body = body
        Thread.detachNewThread { [self] in
            result = Swift.Result { try body() }
            done.signal()
        }
    }

    @discardableResult
    func wait() throws -> Result {
        done.wait()
        done.signal()  // a second wait returns at once
        return try result!.get()
    }
}
