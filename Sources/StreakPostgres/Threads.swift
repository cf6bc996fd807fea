#if canImport(Glibc)
    import Glibc
#endif

/// Runs `body` on a new thread of its own, detached; false when no thread could be started.
/// Not a dispatch queue's: a body that waits long (on a server, on its caller) must not hold one
/// of the few threads the global queues run at once, which the caller's other work may need.
func startThread(_ body: @escaping @Sendable () -> Void) -> Bool {
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
