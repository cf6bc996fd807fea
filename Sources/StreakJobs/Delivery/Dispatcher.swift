import Dispatch
import StreakCore
import StreakDelivery
import StreakStore
import Synchronization

/// Calls the sinks for the deliveries a run owns and writes their outcomes to the ledger: the
/// I/O shell around the lanes' and the lease's state machines (`Lane`, `Lease`), which decide.
/// Each sink has a lane of its own, a serial queue, so a slow, hung or failing sink holds up only
/// its own deliveries (SPEC §5). Each event goes to the lane's machine with the run's time, stop
/// token and lease as they stand, and the dispatcher does what it answers: call the sink, commit
/// outcomes (or, when `handOver`, hand them to the run's next transaction, `writeHandedOver`),
/// warn, write the journal's "delivery failed" and "given up" entries.
final class Dispatcher: Sendable {
    let context: Context
    let delivery: Delivery
    let owner: String
    let handOver: Bool
    let lease: LeaseKeeper
    let outcomes: OutcomeWriter
    private let lanes: [LaneQueue]
    let shared = Mutex(Shared())

    /// What the lanes share: counts of the retries, handed-over outcomes, the first error.
    struct Shared {
        var report = DispatchReport()
        /// Jobs handed to the lanes so far (progress on a terminal).
        var given = 0
        var handed: [Outcome] = []
        var failure: (any Error)?
    }

    /// Jobs waiting in one lane before the run waits for it to catch up (memory stays bounded).
    static let laneLimit = 32768

    init(context: Context, delivery: Delivery, owner: String, handOver: Bool = false) {
        self.context = context
        self.delivery = delivery
        self.owner = owner
        self.handOver = handOver
        lease = LeaseKeeper(
            store: context.store, run: owner, base: context.config.leaseSeconds, hookTimeout: delivery.longestTimeout,
            started: context.started)
        outcomes = OutcomeWriter(store: context.store, owner: owner, now: context.now, stop: context.stop)
        // Instant lanes hand their outcomes to the run's next transaction; a wide lane commits its
        // own beside its deliveries (`Lane.wide`), so a kill repeats at most one of its groups.
        lanes = delivery.sinks.map { sink in
            let wide = Self.wide(sink)
            return LaneQueue(sink: sink, lane: Lane(handOver: handOver && !wide, retry: delivery.retry, wide: wide))
        }
    }

    var report: DispatchReport {
        var report = shared.withLock { $0.report }
        for lane in lanes { report.add(lane.machine.withLock { $0.report }) }
        return report
    }

    /// Whether a run may deliver beside recording: every sink delivers at once, always (its
    /// outcomes go to the run's next transaction), or keeps deliveries in flight and commits its
    /// outcomes beside them (a wide lane: its commits wait for the recording's, its requests do not).
    static func besideRecording(_ delivery: Delivery) -> Bool {
        delivery.sinks.allSatisfy { $0.alwaysAtOnce || wide($0) }
    }

    /// A sink with deliveries in flight at once, or several notifications to one delivery.
    static func wide(_ sink: any Sink) -> Bool { sink.width > 1 || sink.batch > 1 }

    /// The sinks that take a notification.
    func sinkNames(for n: Notification) -> [String] {
        delivery.sinks.filter { $0.accepts(n) }.map(\.name)
    }

    /// A new notification's jobs, one per sink its ledger entry was recorded with.
    func jobs(for n: Notification, id: Int64, sinks: [String]) -> [DeliveryJob] {
        sinks.map { DeliveryJob(id: id, notification: n, sink: $0, attempts: 0) }
    }

    /// Jobs handed to the lanes so far, and what became of them.
    var progress: (given: Int, report: DispatchReport) { (shared.withLock { $0.given }, report) }

    /// Hands jobs to their sinks' lanes, in order; returns at once (unless a lane is far behind).
    func send(_ jobs: [DeliveryJob]) {
        guard !jobs.isEmpty else { return }
        shared.withLock { $0.given += jobs.count }
        // A job for a sink no longer configured, or one that no longer takes its kind (`kinds`
        // changed): its delivery is dead, told and counted as any other given up.
        var given: [Outcome] = []
        for lane in lanes {
            var mine: [DeliveryJob] = []
            for job in jobs where job.sink == lane.sink.name {
                if lane.sink.accepts(job.notification) { mine.append(job) } else { given.append(.notTaken(job)) }
            }
            guard !mine.isEmpty else { continue }
            if lane.queued.withLock({ $0 }) > Self.laneLimit { lane.queue.sync {} }
            lane.queued.withLock { $0 += mine.count }
            lane.queue.async { [self, mine] in
                run(mine, on: lane)
                lane.queued.withLock { $0 -= mine.count }
            }
        }
        let known = Set(lanes.map(\.sink.name))
        given += jobs.filter { !known.contains($0.sink) }.map(Outcome.unconfigured)
        if !given.isEmpty {
            lanes.first?.queue.async { [self, given] in
                do {
                    try outcomes.commit(given)
                } catch {
                    return keep(error)
                }
                shared.withLock { $0.report.dead += given.count }
                for o in given { tellDead(o, sink: o.job.sink) }
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
    func writeHandedOver(_ w: some LedgerWriting) throws {
        let handed = shared.withLock { s in
            defer { s.handed = [] }
            return s.handed
        }
        try outcomes.write(handed, in: w)
    }

    /// The run as it stands, for the lanes' machines: its time, its stop token, its lease.
    private func current() -> Lane.Now {
        let elapsed = ContinuousClock.now - context.started
        return Lane.Now(elapsed: elapsed, stopping: context.stop.requested, lease: lease.remaining(at: elapsed))
    }

    /// Until when the lane may start a delivery (`BootClock`), asked by the sink as late as it can.
    private func startLimit(_ lane: LaneQueue) -> Int64? {
        let now = current()
        return lane.machine.withLock { $0.startLimit(now) }.map(BootClock.after)
    }

    /// Delivers a lane's jobs in order (jobs of one notification are finished together). The
    /// machine's lock is never held while calling out.
    private func run(_ jobs: [DeliveryJob], on lane: LaneQueue) {
        let sink = lane.sink
        if Self.wide(sink) { return runWide(jobs, on: lane) }
        for job in jobs {
            switch turn(of: job, on: lane) {
            case .deliver:
                // Asked again by the sink right before it starts (a hook: before its process
                // starts): a run stopped meanwhile (SIGSTOP) and resumed past its lease starts nothing.
                let result = sink.deliver(job.notification, startingBefore: { [self] in startLimit(lane) })
                let now = current()
                perform(lane.machine.withLock { $0.finished(job, result, now) }, on: lane)
            case .expire(_, let reason):
                let now = current()
                perform(lane.machine.withLock { $0.expired(job, reason, now) }, on: lane)
            default:
                continue
            }
        }
        if let action = lane.machine.withLock({ $0.flush() }) { perform([action], on: lane) }
    }

    /// Delivers a lane's jobs with up to `width` of them in flight at once (a webhook's, a hook's
    /// `concurrency`): each started on the lane's queue when its turn comes, each outcome given to
    /// the machine on that queue as it comes back. Outcomes are committed in groups on the lane's
    /// commit queue while deliveries go on (`Lane.wide`: the machine answers `.hold` while a
    /// whole group is delivered and not stored): a crash repeats at most one group, plus the
    /// deliveries in flight (a webhook's repeat carries the same `webhook-id`).
    private func runWide(_ jobs: [DeliveryJob], on lane: LaneQueue) {
        let sink = lane.sink
        let returned = Mutex<[([Int], [DeliveryOutcome]?)]>([])
        // Signalled when a delivery comes back or a commit is done.
        let wake = DispatchSemaphore(value: 0)
        var (next, inFlight, held) = (0, 0, false)
        while next < jobs.count || inFlight > 0 {
            while inFlight < sink.width, next < jobs.count, !held {
                // The next batch: jobs whose turn the machine answers `.deliver`, up to `batch`.
                var batch: [Int] = []
                while batch.count < sink.batch, next < jobs.count, !held {
                    let job = jobs[next]
                    let now = current()
                    switch lane.machine.withLock({ $0.next(job, atOnce: true, now) }) {
                    case .deliver:
                        batch.append(next)
                    case .expire(_, let reason):
                        perform(lane.machine.withLock { $0.expired(job, reason, current()) }, on: lane, wake: wake)
                    case .hold:
                        // Asked again for the same job once a commit is back.
                        held = true
                        continue
                    default:
                        break
                    }
                    next += 1
                }
                guard !batch.isEmpty else { continue }
                inFlight += 1
                sink.start(batch.map { jobs[$0].notification }, startingBefore: { [self] in startLimit(lane) }) {
                    [batch] result in
                    returned.withLock { $0.append((batch, result)) }
                    wake.signal()
                }
            }
            guard inFlight > 0 || held else { continue }
            wake.wait()
            held = false
            let results = returned.withLock { r in
                defer { r = [] }
                return r
            }
            for (batch, outcomes) in results {
                inFlight -= 1
                for (k, i) in batch.enumerated() {
                    let now = current()
                    let outcome = outcomes.flatMap { k < $0.count ? $0[k] : nil }
                    perform(lane.machine.withLock { $0.finished(jobs[i], outcome, now) }, on: lane, wake: wake)
                }
            }
        }
        // The commit in flight, then what is left.
        lane.commits.sync {}
        if let action = lane.machine.withLock({ $0.flush() }) { perform([action], on: lane) }
    }

    /// Commits a wide lane's group on its commit queue, then each group its machine answers came
    /// meanwhile, waking the lane after each.
    private func commitBeside(_ outcomes: [Outcome], on lane: LaneQueue, wake: DispatchSemaphore) {
        lane.commits.async { [self] in
            var group: [Outcome]? = outcomes
            while let outcomes = group {
                group = nil
                let answered: [Lane.Action]
                do {
                    try self.outcomes.commit(outcomes)
                    answered = lane.machine.withLock { $0.committed() }.map { [$0] } ?? []
                } catch {
                    keep(error)
                    answered = lane.machine.withLock { $0.commitFailed() }
                }
                for action in answered {
                    if case .commit(let next) = action {
                        group = next
                    } else {
                        perform([action], on: lane)
                    }
                }
                wake.signal()
            }
        }
    }

    /// Asks the lane's machine for a job's turn: `.deliver` or `.defer`, committing first when
    /// it says so.
    private func turn(of job: DeliveryJob, on lane: LaneQueue) -> Lane.Action {
        while true {
            let (atOnce, now) = (lane.sink.deliversAtOnce, current())
            let action = lane.machine.withLock { $0.next(job, atOnce: atOnce, now) }
            guard case .commit(let outcomes) = action else { return action }
            commit(outcomes, on: lane)
        }
    }

    /// Does what a lane's machine answered; `wake`: a wide lane's, whose commits go beside it.
    private func perform(_ actions: [Lane.Action], on lane: LaneQueue, wake: DispatchSemaphore? = nil) {
        let name = lane.sink.name
        for action in actions {
            switch action {
            case .commit(let outcomes):
                if let wake { commitBeside(outcomes, on: lane, wake: wake) } else { commit(outcomes, on: lane) }
            case .handOver(let outcomes):
                shared.withLock { $0.handed += outcomes }
            case .warnUnavailable(let reason):
                context.printer.warn(
                    "\(name): \(oneLine(reason)); its notifications in this run are recorded expired, unsent")
            case .warnFailureLimit(let failures):
                context.printer.warn(
                    "\(name) failed \(failures) times in a row; its other deliveries wait for the next run")
            case .warnThrottled(let seconds):
                context.printer.warn(
                    "\(name) asked for a wait of \(seconds)s (Retry-After); its other deliveries wait for the next run")
            case .tellDead(let o):
                tellDead(o, sink: name)
            case .tellFailed(let o):
                // Each failure with its reason (a missing journal socket, what a hook said last).
                let error = o.error ?? ""
                let retry = context.now + max(delivery.retry.delay(afterAttempts: o.attempts), o.retryAfter ?? 0)
                context.printer.err(
                    Self.failureLine(o.job, error: error, attempts: o.attempts, of: delivery.retry, retry: retry))
                delivery.recordFailed(o.job.notification, name, o.attempts, error, retry)
            case .tellStale(let o):
                context.printer.err(
                    "expired \(name) \(o.job.notification.key) without another try: \(o.error ?? "no longer due")")
            case .notStored(let delivered):
                guard !delivered.isEmpty else { continue }
                context.printer.warn(Self.notStoredLine(name, delivered.map(\.job.notification.key)))
            case .deliver, .defer, .expire, .hold:
                continue
            }
        }
    }

    /// Says a delivery was given up, on standard error and in the journal ("delivery given up").
    private func tellDead(_ o: Outcome, sink name: String) {
        let error = o.error ?? ""
        context.printer.warn(
            "\(name) gave up on \(o.job.notification.key) after \(o.attempts) attempt\(o.attempts == 1 ? "" : "s"): "
                + oneLine(error))
        delivery.recordDead(o.job.notification, name, o.attempts, error)
    }

    /// Commits a lane's outcomes and tells its machine how it went; an error is rethrown by `drain`.
    private func commit(_ outcomes: [Outcome], on lane: LaneQueue) {
        do {
            try self.outcomes.commit(outcomes)
            _ = lane.machine.withLock { $0.committed() }
        } catch {
            keep(error)
            perform(lane.machine.withLock { $0.commitFailed() }, on: lane)
        }
    }

    /// Keeps the first error a lane met, for `drain`.
    private func keep(_ error: any Error) {
        shared.withLock { if $0.failure == nil { $0.failure = error } }
    }

    /// `failed hook:webhook (exit 3): 503 Service Unavailable [at_risk/ana/daily/2026-11-21, attempt 1 of 5, next
    /// try from 2026-11-21T19:01:00Z]`: the sink's error split into its reason and what the sink said.
    static func failureLine(_ job: DeliveryJob, error: String, attempts: Int, of retry: RetryPolicy, retry at: Instant)
        -> String
    {
        // What a hook said is printed on a terminal: nothing in it may act on the terminal.
        let error = oneLine(error)
        let split = error.firstRange(of: ": ")
        let reason = split.map { String(error[..<$0.lowerBound]) } ?? error
        let said = split.map { ": " + error[$0.upperBound...] } ?? ""
        return "failed \(job.sink) (\(reason))\(said) [\(job.notification.key), attempt \(attempts) of "
            + "\(retry.maxAttempts), next try from \(at)]"
    }

    /// `journal: 2 deliveries were made but could not be recorded, so the next run makes them again:
    /// at_risk/…, at_risk/…; the sink's other deliveries wait for that run` (the first five keys).
    static func notStoredLine(_ sink: String, _ keys: [String]) -> String {
        let shown = keys.prefix(5).joined(separator: ", ") + (keys.count > 5 ? " and \(keys.count - 5) more" : "")
        let (made, them) = keys.count == 1 ? ("1 delivery was", "it") : ("\(keys.count) deliveries were", "them")
        return "\(sink): \(made) made but could not be recorded, so the next run makes \(them) again: \(shown); "
            + "the sink's other deliveries wait for that run"
    }
}

/// One sink's lane in the shell: its serial queue, and its `Lane` machine (only that queue
/// changes it; guarded all the same, so the compiler can check it).
final class LaneQueue: Sendable {
    let sink: any Sink
    let queue: DispatchQueue
    let machine: Mutex<Lane>
    /// A wide lane's commits, one at a time, beside its deliveries.
    let commits: DispatchQueue
    /// Jobs handed to the lane and not yet done.
    let queued = Mutex(0)

    init(sink: any Sink, lane: Lane) {
        self.sink = sink
        machine = Mutex(lane)
        queue = DispatchQueue(label: "streakd.lane." + sink.name)
        commits = DispatchQueue(label: "streakd.lane." + sink.name + ".commits")
    }
}
