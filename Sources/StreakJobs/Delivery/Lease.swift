import Dispatch
import StreakStore
import Synchronization

/// A run's lease on the deliveries it owns (docs/RULES.md, "Leases"), as a pure state machine:
/// registered with the run's first delivery, kept alive by a heartbeat every tenth of its base
/// (30 s at the default 300 s), measured on the store's clock. Another run may take the
/// deliveries over once the lease has run out; this run stops starting deliveries before that
/// can happen (it fences itself): once its last good heartbeat is older than four fifths of the
/// base (the rest, and the hook time-out added to the lease, cover a delivery already started),
/// or the store says its registration is gone. Time comes in as the run's elapsed time; the
/// store writes and the timer are `LeaseKeeper`'s.
struct Lease: Equatable, Sendable {
    /// What `remaining` answers before the run registers: nothing to fence yet.
    static let beforeRegistration = Duration.seconds(86_400)

    /// Seconds the store keeps the registration after a heartbeat: the configured base, plus the
    /// longest a delivery may take.
    let seconds: Int64
    /// Between heartbeats.
    let beatEvery: Duration
    /// How old the last good heartbeat may be before the run starts no delivery.
    let fence: Duration

    enum State: Equatable, Sendable {
        case unregistered
        /// Registered; the last heartbeat the store confirmed started then (elapsed time).
        case alive(lastBeat: Duration)
        /// Starts no delivery any more: a heartbeat came too late or found the registration gone.
        case fenced
        /// Its claims and registration are given up.
        case ended
    }

    /// What a heartbeat found.
    enum Beat: Equatable, Sendable {
        /// The registration is there: the lease runs from the beat's start.
        case alive
        /// The registration is gone (another run may have taken the deliveries over).
        case gone
        /// No answer (the store busy or unreachable): the lease runs out unless a later beat
        /// gets through.
        case failed
    }

    private(set) var state = State.unregistered

    /// `base`: the configured lease in seconds; `hookTimeout`: the longest a delivery may take.
    init(base: Int, hookTimeout: Double) {
        seconds = Int64(base) + Int64(hookTimeout.rounded(.up))
        beatEvery = .milliseconds(min(30_000, base * 100))
        fence = .milliseconds(base * 800)
    }

    /// The run records its first delivery at `now`: true the first time only (write the
    /// registration in that transaction and start the heartbeat).
    mutating func register(at now: Duration) -> Bool {
        guard state == .unregistered else { return false }
        state = .alive(lastBeat: now)
        return true
    }

    /// The heartbeat's time came at `now`: true when a heartbeat is to be written (started now).
    /// A beat that comes too late (the process was stopped) fences instead: others may have
    /// taken the deliveries over meanwhile.
    mutating func beatDue(at now: Duration) -> Bool {
        fenceIfStale(now)
        if case .alive = state { return true }
        return false
    }

    /// What the heartbeat started at `start` found.
    mutating func beat(_ result: Beat, startedAt start: Duration) {
        guard case .alive(let last) = state else { return }
        switch result {
        case .alive: state = .alive(lastBeat: max(last, start))
        case .gone: state = .fenced
        case .failed: break
        }
    }

    /// How long the run may still start deliveries as of `now`, as things stand (a heartbeat may
    /// extend it): nil once it is fenced or ended, and from then on.
    mutating func remaining(at now: Duration) -> Duration? {
        fenceIfStale(now)
        switch state {
        case .unregistered: return Self.beforeRegistration
        case .alive(let last): return fence - (now - last)
        case .fenced, .ended: return nil
        }
    }

    /// The run ends: true when it registered (give up its pending deliveries and registration).
    mutating func end() -> Bool {
        defer { state = .ended }
        switch state {
        case .alive, .fenced: return true
        case .unregistered, .ended: return false
        }
    }

    private mutating func fenceIfStale(_ now: Duration) {
        if case .alive(let last) = state, now - last >= fence { state = .fenced }
    }
}

/// The I/O around a run's `Lease`: the registration and heartbeats in the store, and the
/// heartbeat's timer. It measures time from the run's start, as the lanes do.
final class LeaseKeeper: Sendable {
    let store: any Store
    let run: String
    /// When the run began (`Context.started`).
    let started: ContinuousClock.Instant
    private let lease: Mutex<Lease>
    /// Made with the registration (a dispatch source must not be released unstarted).
    private let timer = Mutex<(any DispatchSourceTimer)?>(nil)

    init(store: any Store, run: String, base: Int, hookTimeout: Double, started: ContinuousClock.Instant) {
        self.store = store
        self.run = run
        self.started = started
        lease = Mutex(Lease(base: base, hookTimeout: hookTimeout))
    }

    var elapsed: Duration { ContinuousClock.now - started }

    /// Registers the run in the caller's transaction, the first time only; starts the heartbeat.
    func register(_ w: some RunRegistry) throws {
        let now = elapsed
        let (first, seconds, every) = lease.withLock { ($0.register(at: now), $0.seconds, $0.beatEvery) }
        guard first else { return }
        try w.register(run: run, host: RunOwner.hostName, lease: seconds)
        let interval = DispatchTimeInterval.milliseconds(Int((every / .milliseconds(1)).rounded()))
        timer.withLock { timer in
            let source = DispatchSource.makeTimerSource(queue: DispatchQueue(label: "streakd.heartbeat"))
            source.schedule(deadline: .now() + interval, repeating: interval)
            source.setEventHandler { [self] in beatOnce() }
            source.resume()
            timer = source
        }
    }

    private func beatOnce() {
        let start = elapsed
        guard lease.withLock({ $0.beatDue(at: start) }) else { return }
        let result: Lease.Beat
        do {
            result = try store.write { try $0.heartbeat(run: run) } ? .alive : .gone
        } catch {
            result = .failed
        }
        lease.withLock { $0.beat(result, startedAt: start) }
    }

    /// How long the run may still start deliveries, `elapsed` into the run: nil once fenced.
    func remaining(at elapsed: Duration) -> Duration? {
        lease.withLock { $0.remaining(at: elapsed) }
    }

    /// Stops the heartbeat, gives up the run's pending deliveries and its registration.
    func end() throws {
        guard lease.withLock({ $0.end() }) else { return }
        timer.withLock { $0?.cancel() }
        try store.write { w in
            try w.release(owner: run)
            try w.unregister(run: run)
        }
    }
}
