import Dispatch
import Foundation
import StreakCore
import StreakDelivery
import StreakStore
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// Counts of what a run did with its deliveries.
public struct DispatchReport: Equatable, Sendable {
    public var delivered = 0
    public var failed = 0
    public var dead = 0
    public var unavailable = 0
    public var retried = 0
    /// Failed before and not due for another try yet.
    public var waiting = 0
    /// Left for the next run: the run was stopped, ran out of time, or the sink kept failing.
    public var deferred = 0
    /// Stopped in flight by a stop of the run (SIGTERM): pending, the attempt not counted.
    public var interrupted = 0
}

/// One delivery to make now.
struct DeliveryJob: Sendable {
    /// The notification's ledger id.
    var id: Int64
    var notification: Notification
    var sink: String
    var attempts: Int
}

/// Calls the sinks for the deliveries a run owns and writes their outcomes to the ledger. Each
/// sink has a lane of its own, a serial queue, so a slow, hung or failing sink holds up only its
/// own deliveries (SPEC §5). A lane commits its outcomes before any delivery that may take time
/// (a paced journal, a hook, the desktop) and otherwise in small groups, so a crash repeats at
/// most one group of instant deliveries; or, when `handOver` (every sink always delivers at once),
/// hands them to the run's next transaction (`writeHandedOver`).
final class Dispatcher: Sendable {
    let context: Context
    let delivery: Delivery
    let owner: String
    let handOver: Bool
    let lease: LeaseKeeper
    private let lanes: [Lane]
    private let shared = Mutex(Shared())

    /// What the lanes share: counts, warnings given, handed-over outcomes, the first error.
    struct Shared {
        var report = DispatchReport()
        var warned = Set<String>()
        var handed: [Outcome] = []
        var failure: (any Error)?
        var stoppedLanes = Set<String>()
    }

    typealias Outcome = (job: DeliveryJob, state: DeliveryState, attempts: Int, error: String?)

    /// A group is committed once it holds this many outcomes or is this old, and always before a
    /// delivery that may take time: a crash repeats at most one group of fast deliveries.
    static let groupSize = 256
    static let groupAge = Duration.milliseconds(100)
    /// A lane stops after this many failures in a row in one run; the rest wait for the next run.
    static let failureLimit = 5
    /// No delivery starts this long after the run began: the units stop a run after 10 minutes
    /// (`TimeoutStartSec=10min`), and what is left waits for the next run. A paced journal sends
    /// 9,500 entries per 30 s: 150,000 in this time.
    static let runBudget = Duration.seconds(480)
    /// Jobs waiting in one lane before the run waits for it to catch up (memory stays bounded).
    static let laneLimit = 32768
    /// Outcome writes that find the store busy are tried again (each waits up to the store's busy
    /// time-out) for this long: an outcome lost is a delivery the next run repeats. Once the run
    /// is asked to stop, for `outcomeRetryStopping` only (systemd waits 90 s, SPEC §5 says a few).
    static let outcomeRetry = Duration.seconds(120)
    static let outcomeRetryStopping = Duration.seconds(10)
    /// A store that cannot be reached (a database server restarting or gone) for this long: long
    /// enough for a restart, short enough that a run on a database gone for good ends within
    /// seconds (75), not minutes.
    static let outcomeRetryUnreachable = Duration.seconds(15)

    init(context: Context, delivery: Delivery, owner: String, handOver: Bool = false) {
        self.context = context
        self.delivery = delivery
        self.owner = owner
        self.handOver = handOver
        lease = LeaseKeeper(
            store: context.store, run: owner, base: context.config.leaseSeconds, hookTimeout: delivery.longestTimeout,
            started: context.started)
        lanes = delivery.sinks.map { Lane(sink: $0) }
    }

    var report: DispatchReport { shared.withLock { $0.report } }

    /// Whether every sink delivers at once, always: then a run may deliver beside recording.
    static func alwaysAtOnce(_ delivery: Delivery) -> Bool { delivery.sinks.allSatisfy(\.alwaysAtOnce) }

    /// The sinks that take a notification.
    func sinkNames(for n: Notification) -> [String] {
        delivery.sinks.filter { $0.accepts(n) }.map(\.name)
    }

    /// A new notification's jobs, one per sink its ledger entry was recorded with.
    func jobs(for n: Notification, id: Int64, sinks: [String]) -> [DeliveryJob] {
        sinks.map { DeliveryJob(id: id, notification: n, sink: $0, attempts: 0) }
    }

    /// Takes over the pending deliveries due for another try, and those of runs that are gone: on
    /// this host, their process has ended; elsewhere, their lease ran out on the store's clock.
    func claimRetries() throws -> [DeliveryJob] {
        let now = context.now
        let pending = try context.store.read { try $0.pendingDeliveries() }
        var candidates: [(PendingDelivery, gone: Bool)] = []
        for p in pending where p.owner != owner {
            if let o = p.owner {
                let gone = RunOwner.isGone(o)
                if !gone && RunOwner.isThisHost(o) { continue }  // alive here: its run is on it
                candidates.append((p, gone))
            } else if let last = p.lastAttempt,
                !delivery.retry.isDue(attempts: p.attempts, lastAttempt: last, now: now)
            {
                shared.withLock { $0.report.waiting += 1 }
            } else {
                candidates.append((p, false))
            }
        }
        guard !candidates.isEmpty else { return [] }
        let taken = try context.store.write { w in
            try lease.register(w)
            return try candidates.filter { p, gone in
                try w.takeOver(id: p.id, sink: p.sink, from: p.owner, fromGone: gone, to: owner)
            }
        }
        shared.withLock { $0.report.retried += taken.count }
        return taken.map {
            DeliveryJob(id: $0.0.id, notification: $0.0.notification, sink: $0.0.sink, attempts: $0.0.attempts)
        }
    }

    /// Hands jobs to their sinks' lanes, in order; returns at once (unless a lane is far behind).
    func send(_ jobs: [DeliveryJob]) {
        guard !jobs.isEmpty else { return }
        for lane in lanes {
            let mine = jobs.filter { $0.sink == lane.sink.name }
            guard !mine.isEmpty else { continue }
            if lane.queued.withLock({ $0 }) > Self.laneLimit { lane.queue.sync {} }
            lane.queued.withLock { $0 += mine.count }
            lane.queue.async { [self] in
                run(mine, on: lane)
                lane.queued.withLock { $0 -= mine.count }
            }
        }
        // A job for a sink no longer configured: its delivery is dead.
        let known = Set(lanes.map(\.sink.name))
        let orphans = jobs.filter { !known.contains($0.sink) }
        if !orphans.isEmpty {
            lanes.first?.queue.async { [self] in
                let outcomes = orphans.map {
                    ($0, DeliveryState.dead, $0.attempts + 1, "\($0.sink) is no longer configured")
                }
                keep(outcomes, commitNow: true)
            }
        }
    }

    /// Waits until every lane has delivered what it was given, and its outcomes are written (or
    /// handed over); rethrows the first error a lane met.
    func drain() throws {
        for lane in lanes { lane.queue.sync {} }
        try shared.withLock { s in
            if let failure = s.failure {
                s.failure = nil
                throw failure
            }
        }
    }

    /// Waits for the lanes of sinks that always deliver at once (they keep up with recording).
    func waitForFastLanes() {
        for lane in lanes where lane.sink.alwaysAtOnce { lane.queue.sync {} }
    }

    /// Writes the outcomes handed over so far, in the caller's transaction.
    func writeHandedOver(_ w: any StoreWriter) throws {
        let outcomes = shared.withLock { s in
            defer { s.handed = [] }
            return s.handed
        }
        try Self.write(outcomes, w, at: context.now, owner: owner)
    }

    /// Until when a lane may start another delivery (`BootClock`): not once the run is stopped,
    /// out of time or fenced (its lease ran out), nor after its sink failed `failureLimit` times
    /// in a row (nil); else until the first of the run's time budget and its lease runs out.
    private func startLimit(_ lane: Lane) -> Int64? {
        if shared.withLock({ $0.stoppedLanes.contains(lane.sink.name) }) { return nil }
        if context.stop.requested { return nil }
        let elapsed = ContinuousClock.now - context.started
        guard let lease = lease.remaining(at: elapsed) else { return nil }
        let left = min(lease, Self.runBudget - elapsed)
        return left > .zero ? BootClock.after(left) : nil
    }

    private func mayStart(_ lane: Lane) -> Bool { startLimit(lane) != nil }

    /// Delivers a lane's jobs in order (jobs of one notification are finished together).
    private func run(_ jobs: [DeliveryJob], on lane: Lane) {
        var deferred = 0
        for job in jobs {
            let sink = lane.sink
            // What went before is written first; then the check (asked again by the sink right
            // before a hook's process starts): a run stopped during the write or while a hook was
            // being prepared (SIGSTOP) and resumed past its lease starts nothing.
            if !handOver && !sink.deliversAtOnce { save(lane) }
            guard mayStart(lane) else {
                deferred += 1
                continue
            }
            guard let delivered = sink.deliver(job.notification, startingBefore: { startLimit(lane) }) else {
                deferred += 1
                continue
            }
            let attempts = job.attempts + 1
            let outcome: Outcome
            var failed: String?
            switch delivered {
            case .delivered:
                lane.failures = 0
                shared.withLock { $0.report.delivered += 1 }
                outcome = (job, .delivered, attempts, nil)
            case .unavailable(let reason):
                shared.withLock { $0.report.unavailable += 1 }
                if shared.withLock({ $0.warned.insert(job.sink).inserted }) {
                    context.printer.warn("\(job.sink): \(reason); its notifications are skipped")
                }
                outcome = (job, .expired, attempts, reason)
            case .interrupted(let reason):
                shared.withLock { $0.report.interrupted += 1 }
                outcome = (job, .pending, job.attempts, "interrupted: " + reason)
            case .failed(let error):
                let dead = delivery.retry.isDead(attempts: attempts)
                outcome = (job, dead ? .dead : .pending, attempts, error)
                failed = error
                shared.withLock { if dead { $0.report.dead += 1 } else { $0.report.failed += 1 } }
                lane.failures += 1
                if lane.failures >= Self.failureLimit {
                    shared.withLock { _ = $0.stoppedLanes.insert(job.sink) }
                    context.printer.warn(
                        "\(job.sink) failed \(lane.failures) times in a row; its other deliveries wait for the next run"
                    )
                }
            }
            lane.add(outcome)
            if outcome.state == .dead {
                context.printer.warn(
                    "\(job.sink) gave up on \(job.notification.key) after \(attempts) attempts: \(outcome.error ?? "")")
                delivery.recordDead(job.notification, job.sink, attempts, outcome.error ?? "")
            } else if let error = failed {
                // Each failure with its reason (a missing journal socket, what a hook said last).
                let retry = context.now + delivery.retry.delay(afterAttempts: attempts)
                context.printer.err(
                    Self.failureLine(job, error: error, attempts: attempts, of: delivery.retry, retry: retry))
                delivery.recordFailed(job.notification, job.sink, attempts, error, retry)
            }
            if handOver {
                shared.withLock { $0.handed += lane.takeUnsaved() }
            } else if outcome.state == .dead || lane.unsavedCount >= Self.groupSize
                || ContinuousClock.now - lane.unsavedSince >= Self.groupAge
            {
                save(lane)
            }
        }
        if deferred > 0 { shared.withLock { $0.report.deferred += deferred } }
        if !handOver { save(lane) }
    }

    /// `failed hook:webhook (exit 3): 503 Service Unavailable [at_risk/ana/daily/2026-11-21, attempt 1 of 5, next
    /// try from 2026-11-21T19:01:00Z]`: the sink's error split into its reason and what the sink said.
    static func failureLine(_ job: DeliveryJob, error: String, attempts: Int, of retry: RetryPolicy, retry at: Instant)
        -> String
    {
        let split = error.firstRange(of: ": ")
        let reason = split.map { String(error[..<$0.lowerBound]) } ?? error
        let said = split.map { ": " + error[$0.upperBound...] } ?? ""
        return "failed \(job.sink) (\(reason))\(said) [\(job.notification.key), attempt \(attempts) of "
            + "\(retry.maxAttempts), next try from \(at)]"
    }

    /// Commits a lane's outcomes so far; an error stops nothing else but is rethrown by `drain`.
    private func save(_ lane: Lane) {
        keep(lane.takeUnsaved(), commitNow: true)
    }

    private func keep(_ outcomes: [Outcome], commitNow: Bool) {
        guard !outcomes.isEmpty else { return }
        if handOver && !commitNow {
            shared.withLock { $0.handed += outcomes }
            return
        }
        do {
            try writeOutcomes(outcomes)
        } catch {
            shared.withLock { if $0.failure == nil { $0.failure = error } }
        }
    }

    /// Commits outcomes, trying again while the store is busy (`outcomeRetry`) or cannot be
    /// reached (`outcomeRetryUnreachable`).
    private func writeOutcomes(_ outcomes: [Outcome]) throws {
        let start = ContinuousClock.now
        while true {
            do {
                try context.store.write { w in try Self.write(outcomes, w, at: context.now, owner: owner) }
                return
            } catch let error as StoreError where error.kind == .busy {
                let limit = min(
                    context.stop.requested ? Self.outcomeRetryStopping : Self.outcomeRetry,
                    error.unreachable ? Self.outcomeRetryUnreachable : Self.outcomeRetry)
                guard ContinuousClock.now - start < limit else { throw error }
                Thread.sleep(forTimeInterval: 0.05)
            }
        }
    }

    /// Writes outcomes; only for deliveries `owner` still holds (a run that lost them while it
    /// was stopped writes nothing).
    private static func write(_ outcomes: [Outcome], _ w: any StoreWriter, at now: Instant, owner: String) throws {
        for run in runs(outcomes) {
            let (job, state, attempts, error) = outcomes[run.lowerBound]
            let ids = job.id...outcomes[run.upperBound].job.id
            try w.finish(
                ids: ids, sink: job.sink, state: state, attempts: attempts, at: now, error: error, owner: owner)
        }
    }

    /// The outcomes in runs of consecutive ledger ids with one sink and one result: each run is one
    /// update (a busy run's new notifications have consecutive ids).
    static func runs(_ outcomes: [Outcome]) -> [ClosedRange<Int>] {
        var runs: [ClosedRange<Int>] = []
        var start = 0
        for i in outcomes.indices.dropFirst() {
            let (a, b) = (outcomes[i - 1], outcomes[i])
            if b.job.id != a.job.id + 1 || b.job.sink != a.job.sink || b.state != a.state || b.attempts != a.attempts
                || b.error != a.error
            {
                runs.append(start...(i - 1))
                start = i
            }
        }
        if !outcomes.isEmpty { runs.append(start...(outcomes.count - 1)) }
        return runs
    }
}

/// One sink's lane: its serial queue, and what only that queue touches (guarded all the same,
/// so the compiler can check it).
final class Lane: Sendable {
    let sink: any Sink
    let queue: DispatchQueue
    /// Jobs handed to the lane and not yet done.
    let queued = Mutex(0)
    private let state = Mutex(State())

    struct State {
        var unsaved: [Dispatcher.Outcome] = []
        var since = ContinuousClock.now
        var failures = 0
    }

    init(sink: any Sink) {
        self.sink = sink
        queue = DispatchQueue(label: "streakd.lane." + sink.name)
    }

    var failures: Int {
        get { state.withLock { $0.failures } }
        set { state.withLock { $0.failures = newValue } }
    }

    var unsavedCount: Int { state.withLock { $0.unsaved.count } }
    var unsavedSince: ContinuousClock.Instant { state.withLock { $0.since } }

    func add(_ outcome: Dispatcher.Outcome) {
        state.withLock { s in
            if s.unsaved.isEmpty { s.since = ContinuousClock.now }
            s.unsaved.append(outcome)
        }
    }

    func takeUnsaved() -> [Dispatcher.Outcome] {
        state.withLock { s in
            defer { s.unsaved = [] }
            return s.unsaved
        }
    }
}
