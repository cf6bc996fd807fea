import Dispatch
import StreakStore
import Synchronization

/// A run's lease on the deliveries it owns (docs/RULES.md, "Leases"): registered in the store with
/// the run's first delivery, kept alive by a heartbeat every tenth of its base (30 s at the default
/// 300 s), measured on the store's clock. Another run may take the deliveries over once the lease
/// has run out; this run stops starting deliveries before that can happen (it fences itself): once
/// its last good heartbeat is older than four fifths of the base (the rest, and the hook time-out
/// added to the lease, cover a delivery already started), or the store says its registration is gone.
final class Lease: Sendable {
    let store: any Store
    let run: String
    /// Seconds: the configured base, plus the longest a delivery may take.
    let seconds: Int64
    /// Milliseconds between heartbeats, and how old the last may be before the run stops starting
    /// deliveries.
    let beat: Int
    let fence: Duration
    private let state = Mutex(State())
    /// Made with the registration (a dispatch source must not be released unstarted).
    private let timer = Mutex<(any DispatchSourceTimer)?>(nil)

    struct State {
        var registered = false
        var lastBeat = ContinuousClock.now
        var fenced = false
        var ended = false
    }

    init(store: any Store, run: String, base: Int, hookTimeout: Double) {
        self.store = store
        self.run = run
        seconds = Int64(base) + Int64(hookTimeout.rounded(.up))
        beat = min(30_000, base * 100)
        fence = .milliseconds(base * 800)
    }

    /// Registers the run in the caller's transaction, the first time only; starts the heartbeat.
    func register(_ w: any StoreWriter) throws {
        let first = state.withLock { s in
            defer { s.registered = true }
            return !s.registered
        }
        guard first else { return }
        try w.register(run: run, host: RunOwner.hostName, lease: seconds)
        state.withLock { $0.lastBeat = ContinuousClock.now }
        timer.withLock { timer in
            let source = DispatchSource.makeTimerSource(queue: DispatchQueue(label: "streakd.heartbeat"))
            source.schedule(deadline: .now() + .milliseconds(beat), repeating: .milliseconds(beat))
            source.setEventHandler { [self] in beatOnce() }
            source.resume()
            timer = source
        }
    }

    private func beatOnce() {
        // A beat that comes too late (the process was stopped) fences instead: others may have
        // taken the deliveries over meanwhile.
        guard !state.withLock({ $0.ended || fenceIfStale(&$0) }) else { return }
        let started = ContinuousClock.now
        let alive = try? store.write { try $0.heartbeat(run: run) }
        state.withLock { s in
            if alive == true { s.lastBeat = started }
            if alive == false { s.fenced = true }
        }
    }

    /// How long the run may still start deliveries, as things stand (a heartbeat may extend it):
    /// nil once it is fenced, and from then on; a day before it is registered.
    var remaining: Duration? {
        state.withLock { s in
            guard s.registered else { return .seconds(86_400) }
            guard !fenceIfStale(&s) else { return nil }
            return fence - (ContinuousClock.now - s.lastBeat)
        }
    }

    /// Fences the run when its last good heartbeat is too old; answers whether it is fenced.
    private func fenceIfStale(_ s: inout State) -> Bool {
        if s.registered && ContinuousClock.now - s.lastBeat >= fence { s.fenced = true }
        return s.fenced
    }

    /// Stops the heartbeat, gives up the run's pending deliveries and its registration.
    func end() throws {
        let registered = state.withLock { s in
            defer { s.ended = true }
            return s.registered && !s.ended
        }
        guard registered else { return }
        timer.withLock { $0?.cancel() }
        try store.write { w in
            try w.release(owner: run)
            try w.unregister(run: run)
        }
    }
}
