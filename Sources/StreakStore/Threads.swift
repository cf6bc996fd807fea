import Dispatch
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// Runs a body on a thread of its own while the caller goes on; `wait` answers its result when it
/// is done, rethrowing what it threw. What the body takes and answers crosses threads, so both are
/// `Sendable`, checked by the compiler. The one way streakd starts a thread: preview's planning
/// thread and line writer, the import's reading thread, a tick's planning ahead, PostgreSQL's
/// COPY reader and cancel request.
public final class Background<Result: Sendable>: Sendable {
    /// The body, until its thread takes it: it is sent there (`sending`), so the compiler checks
    /// that the caller does not touch what it takes along (the import's reading thread takes its
    /// file and progress bar); its result, which any thread may read, is `Sendable`.
    private let body: Mutex<(() throws -> Result)?>
    /// Set by the body's thread before `done` is signalled.
    private let result = Mutex<Swift.Result<Result, any Error>?>(nil)
    private let done = DispatchSemaphore(value: 0)

    /// A thread of its own, not a dispatch queue's: bodies here wait on each other and on servers,
    /// and the global queues run only about as many at once as there are cores. Throws a busy
    /// store error (a temporary failure) when the system starts no more threads.
    public init(_ body: sending @escaping () throws -> Result) throws {
        self.body = Mutex(body)
        let started = startThread { [self] in
            let run = self.body.withLock { $0.take() }!
            let outcome = Swift.Result { try run() }
            result.withLock { $0 = outcome }
            done.signal()
        }
        guard started else {
            throw StoreError(.busy, "no thread could be started (the system's limit of threads or memory is reached)")
        }
    }

    /// Waits until the body is done; its result, or what it threw. May be called again.
    @discardableResult
    public func wait() throws -> Result {
        done.wait()
        done.signal()  // a second wait returns at once
        return try result.withLock { $0! }.get()
    }
}

/// Runs `body` on a new thread of its own, detached; false when no thread could be started.
public func startThread(_ body: @escaping @Sendable () -> Void) -> Bool {
    final class Box {
        let body: @Sendable () -> Void
        init(_ body: @escaping @Sendable () -> Void) { self.body = body }
    }
    let context = Unmanaged.passRetained(Box(body)).toOpaque()
    var thread = pthread_t()
    let started = pthread_create(
        &thread, nil,
        { context in
            Unmanaged<Box>.fromOpaque(context!).takeRetainedValue().body()
            return nil
        }, context)
    guard started == 0 else {
        Unmanaged<Box>.fromOpaque(context).release()
        return false
    }
    pthread_detach(thread)
    return true
}
