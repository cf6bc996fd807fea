import Foundation

/// Runs a body on a thread of its own while the caller goes on. `wait` returns when it is done,
/// rethrowing what it threw; until then the caller leaves alone what the body uses.
final class Background: @unchecked Sendable {
    private let done = DispatchSemaphore(value: 0)
    /// Written by the body's thread before `done` is signalled, read after `wait`.
    private var error: (any Error)?

    init(_ body: @escaping () throws -> Void) {
        nonisolated(unsafe) let body = body
        Thread.detachNewThread { [self] in
            do { try body() } catch { self.error = error }
            done.signal()
        }
    }

    func wait() throws {
        done.wait()
        done.signal()  // a second wait returns at once
        if let error { throw error }
    }
}
