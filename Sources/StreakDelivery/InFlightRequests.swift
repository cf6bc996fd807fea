import AsyncHTTPClient
import NIOCore
import NIOPosix
import Synchronization

/// A webhook's requests in flight, so that a stopped run does not wait out their time-outs: once
/// the run is asked to stop, those still unanswered `HookSink.stopGrace` later are cancelled
/// (their deliveries then stay pending, the attempt not counted, as a hook's). The stop is looked
/// at every tenth of a second on an event loop, from the first request on.
final class InFlightRequests: Sendable {
    private struct State {
        var tasks: [Int: HTTPClient.Task<HTTPClient.Response>] = [:]
        var next = 0
        var watching = false
        var watch: RepeatedTask?
        var stopSeen: NIODeadline?
        var cancelled = false
    }

    private let state = Mutex(State())
    private let stopRequested: @Sendable () -> Bool

    init(stopRequested: @escaping @Sendable () -> Bool) {
        self.stopRequested = stopRequested
    }

    deinit {
        state.withLock { $0.watch?.cancel() }
    }

    /// Whether the requests in flight were cancelled because the run stopped.
    var cancelled: Bool { state.withLock { $0.cancelled } }

    /// Notes a request sent; `remove` it once answered.
    func add(_ task: HTTPClient.Task<HTTPClient.Response>) -> Int {
        let (id, cancelNow, start) = state.withLock { s in
            s.next += 1
            s.tasks[s.next] = task
            defer { s.watching = true }
            return (s.next, s.cancelled, !s.watching)
        }
        if cancelNow { task.cancel() }
        if start { startWatching() }
        return id
    }

    func remove(_ id: Int) {
        _ = state.withLock { $0.tasks.removeValue(forKey: id) }
    }

    private func startWatching() {
        let loop = MultiThreadedEventLoopGroup.singleton.any()
        let watch = loop.scheduleRepeatedTask(initialDelay: .milliseconds(100), delay: .milliseconds(100)) {
            [weak self] task in
            guard let self else { return task.cancel() }
            self.look()
        }
        let over = state.withLock { s in
            s.watch = watch
            return s.cancelled
        }
        if over { watch.cancel() }
    }

    /// Once the stop's grace is over, cancels what is in flight (and what is added later).
    private func look() {
        guard stopRequested() else { return }
        let now = NIODeadline.now()
        let cancelling: [HTTPClient.Task<HTTPClient.Response>] = state.withLock { s in
            if s.stopSeen == nil { s.stopSeen = now }
            guard !s.cancelled, now >= s.stopSeen! + .milliseconds(Int64(HookSink.stopGrace * 1000)) else {
                return []
            }
            s.cancelled = true
            s.watch?.cancel()
            return Array(s.tasks.values)
        }
        for task in cancelling { task.cancel() }
    }
}
