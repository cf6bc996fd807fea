import CLibpq
import StreakStore
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// Asks the server to cancel the running statement, waiting at most a bounded time.
///
/// libpq 15's `PQcancel` blocks: it connects to the server and then waits for the server to close
/// that connection, which a stopped (SIGSTOP) or unreachable server never does. So it runs on a
/// thread of its own, and the caller waits only as long as it is willing to; a request still
/// waiting is left to finish (or to end with the process), holding only its own socket and its
/// copy of the cancel key. (libpq 17's `PQcancelStart`/`PQcancelPoll` would not need the thread.)
/// `@unchecked`: it holds libpq's `PGcancel*`, a C handle the compiler cannot check; only the
/// cancelling thread touches it once started, and the flag is atomic.
final class CancelRequest: @unchecked Sendable {
    // PGcancel* from PQgetCancel: independent of the connection, so the connection may be closed
    // while this is still in flight. Used only by the cancelling thread once that has started.
    private let cancel: OpaquePointer
    private let finished = Atomic<Bool>(false)

    private init(_ cancel: OpaquePointer) { self.cancel = cancel }

    /// Sends a cancel request for `connection`'s running statement. Returns whether the server
    /// took it within `patience` (false: it did not answer, or no thread could be started).
    @discardableResult
    static func send(for connection: OpaquePointer, patience: Duration) -> Bool {
        guard let cancel = PQgetCancel(connection) else { return false }
        let request = CancelRequest(cancel)
        guard startThread({ request.run() }) else {
            PQfreeCancel(cancel)
            return false
        }
        // A live server answers in about a millisecond; polling the flag keeps this simple.
        let deadline = Deadline(after: patience)
        while !request.finished.load(ordering: .acquiring) {
            if deadline.hasPassed { return false }
            usleep(2_000)
        }
        return true
    }

    private func run() {
        var message = [CChar](repeating: 0, count: 256)
        _ = PQcancel(cancel, &message, Int32(message.count))
        PQfreeCancel(cancel)
        finished.store(true, ordering: .releasing)
    }
}
