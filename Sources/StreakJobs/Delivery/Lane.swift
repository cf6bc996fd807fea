import StreakCore
import StreakDelivery
import StreakStore

/// One delivery to make now.
struct DeliveryJob: Equatable, Sendable {
    /// The notification's ledger id.
    var id: Int64
    var notification: Notification
    var sink: String
    var attempts: Int
    /// For a retry (a delivery due for another try, taken over from a run that is gone, or left
    /// for the next run): what asking SPEC §4 again found (`Recheck`). Nil for a notification
    /// this run recorded, which it planned as of its own instant.
    var retry: Retry? = nil

    /// What a retry's second look found.
    enum Retry: Equatable, Sendable {
        /// Still fresh, and an `at_risk`'s date still open and not done: deliver it.
        case stillDue
        /// Not to be sent any more: recorded `expired` for the sink, with the reason.
        case stale(String)
    }
}

/// What became of one delivery, as the ledger records it.
struct Outcome: Equatable, Sendable {
    var job: DeliveryJob
    var state: DeliveryState
    var attempts: Int
    var error: String?
    /// A server's `Retry-After`: seconds from the run's "now" before the next try (SPEC §12).
    var retryAfter: Int64? = nil
}

/// One sink's lane as a pure state machine, the way `JournalPacer` is: it decides which job to
/// deliver or leave for the next run, when outcomes are committed, when the lane gives up for
/// this run, and what to tell. It reads no clock, writes nothing and never waits: each event
/// brings the run's time, stop and lease as a value (`Now`), and the caller (`Dispatcher`)
/// performs the actions it answers, then reports back (`committed`, `commitFailed`).
///
/// Its rules (docs/RULES.md, "Lanes"): outcomes are committed before a delivery that may take
/// time, and otherwise in groups of `groupSize` or `groupAge`, a dead one at once (or, with
/// `handOver`, each handed to the run's next transaction); the lane starts nothing more after
/// `failureLimit` failures in a row, or once an outcome could not be stored (the next run would
/// repeat whatever it delivered after); nothing starts once the run is stopping, fenced (its
/// lease) or `runBudget` after it began. A retry found stale is recorded `expired`, never sent;
/// once the sink could not be reached at all (no session bus, a notification server that does
/// not answer), the rest of its jobs in this run are recorded `expired` without calling it again.
struct Lane: Sendable {
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

    /// The run as it stands when an event comes: passed in, never read inside.
    struct Now: Equatable, Sendable {
        /// Time since the run began, on the monotonic clock.
        var elapsed: Duration
        /// Whether the run was asked to stop (its `StopToken`).
        var stopping = false
        /// How much longer the run's lease lets it start deliveries (`Lease.remaining`); nil once
        /// it is fenced.
        var lease: Duration? = Lease.beforeRegistration
    }

    /// What the caller does next.
    enum Action: Equatable, Sendable {
        /// Write these outcomes now, then call `committed()` or `commitFailed()`.
        case commit([Outcome])
        /// Call the sink for the job, which asks `startLimit` again right before it starts; then
        /// call `finished`.
        case deliver(DeliveryJob)
        /// Do not call the sink: call `expired` (the job is recorded `expired` with the reason).
        case expire(DeliveryJob, String)
        /// Leave the job pending for the next run, its attempts unchanged.
        case `defer`(DeliveryJob)
        /// Give these outcomes to the run's next transaction.
        case handOver([Outcome])
        /// A wide lane has a group's worth delivered and not stored yet: start nothing until its
        /// commit comes back (`committed`, `commitFailed`), then ask again for the same job.
        case hold
        /// The sink cannot be reached at all (first time this run): warn; it is recorded expired.
        case warnUnavailable(String)
        /// The sink failed this many times in a row: warn; the lane starts nothing more this run.
        case warnFailureLimit(Int)
        /// A server said when to try again (`Retry-After`, seconds): warn; the lane starts
        /// nothing more this run.
        case warnThrottled(Int64)
        /// A delivery failed and will be tried again by a later run: say so.
        case tellFailed(Outcome)
        /// A delivery was given up (dead): say so.
        case tellDead(Outcome)
        /// A retry was no longer to be sent (`Recheck`) and is recorded expired: say so.
        case tellStale(Outcome)
        /// An outcome write failed: these deliveries were made but are not recorded (the next run
        /// repeats them); the lane starts nothing more this run.
        case notStored(delivered: [Outcome])
    }

    /// Why a lane starts nothing more this run.
    enum Halt: Equatable, Sendable {
        case failureLimit
        case notStored
        /// A server asked to be left alone for a while (`Retry-After`).
        case throttled
    }

    /// Outcomes go to the run's next transaction instead of commits of the lane's own.
    let handOver: Bool
    /// Deliveries go on while a group is being committed (a webhook's or a hook's `concurrency`,
    /// a batch hook): groups of half `groupSize` are committed beside them, one at a time, and no
    /// delivery starts while a whole group is delivered and not stored. A kill repeats at most
    /// one group, plus the deliveries in flight, as in a lane that waits for its commits.
    let wide: Bool
    let retry: RetryPolicy
    /// What the lane did so far.
    private(set) var report = DispatchReport()
    private(set) var halted: Halt?
    private var failures = 0
    private var unsaved: [Outcome] = []
    /// When the oldest unsaved outcome came.
    private var unsavedSince = Duration.zero
    /// Outcomes being written (`.commit` answered, no word back yet).
    private var committing: [Outcome] = []
    /// A dead outcome waits in `unsaved` for the commit in flight: it is committed right after.
    private var urgent = false
    /// Why the sink could not be reached, once it could not: its other jobs are not tried this run.
    private(set) var unreachable: String?

    init(handOver: Bool = false, retry: RetryPolicy = RetryPolicy(), wide: Bool = false) {
        self.handOver = handOver
        self.retry = retry
        self.wide = wide
    }

    /// How long the lane may still start a delivery as of `now`: nil when it may not (it halted,
    /// the run is stopping, fenced or out of its time budget).
    func startLimit(_ now: Now) -> Duration? {
        guard halted == nil, !now.stopping, let lease = now.lease else { return nil }
        let left = min(lease, Self.runBudget - now.elapsed)
        return left > .zero ? left : nil
    }

    /// A job's turn. `atOnce`: the sink's next delivery returns at once (`Sink.deliversAtOnce`);
    /// if not, what went before is committed first (then ask again). A job not to be delivered (a
    /// stale retry, a sink that could not be reached) is expired, when a delivery could start.
    mutating func next(_ job: DeliveryJob, atOnce: Bool, _ now: Now) -> Action {
        let skip = skipReason(job)
        if !handOver && !atOnce && skip == nil && !unsaved.isEmpty { return commit() }
        if wide && !handOver && skip == nil && startLimit(now) != nil
            && committing.count + unsaved.count >= Self.groupSize
        {
            return .hold
        }
        guard startLimit(now) != nil else {
            report.deferred += 1
            return .defer(job)
        }
        if let skip { return .expire(job, skip) }
        return .deliver(job)
    }

    /// Why `job` is not to be delivered: a retry found stale, or a sink that could not be reached
    /// earlier in this run.
    private func skipReason(_ job: DeliveryJob) -> String? {
        if case .stale(let reason) = job.retry { return reason }
        return unreachable.map { $0 + " (not tried again in this run)" }
    }

    /// The job the lane answered `.expire` for is recorded `expired`, the sink not called.
    mutating func expired(_ job: DeliveryJob, _ reason: String, _ now: Now) -> [Action] {
        let outcome = Outcome(job: job, state: .expired, attempts: job.attempts, error: reason)
        var actions: [Action] = []
        if case .stale = job.retry {
            report.stale += 1
            actions.append(.tellStale(outcome))
        } else {
            report.unavailable += 1
        }
        return actions + keep(outcome, now)
    }

    /// The sink answered for `job`; nil: it did not start (its start limit had passed).
    mutating func finished(_ job: DeliveryJob, _ result: DeliveryOutcome?, _ now: Now) -> [Action] {
        guard let result else {
            report.deferred += 1
            return [.defer(job)]
        }
        var actions: [Action] = []
        let attempts = job.attempts + 1
        let outcome: Outcome
        switch result {
        case .delivered:
            failures = 0
            report.delivered += 1
            outcome = Outcome(job: job, state: .delivered, attempts: attempts)
        case .unavailable(let reason):
            report.unavailable += 1
            if unreachable == nil {
                unreachable = reason
                actions.append(.warnUnavailable(reason))
            }
            outcome = Outcome(job: job, state: .expired, attempts: attempts, error: reason)
        case .interrupted(let reason):
            // The stop was not the sink's failure: the attempt does not count.
            report.interrupted += 1
            outcome = Outcome(job: job, state: .pending, attempts: job.attempts, error: "interrupted: " + reason)
        case .failed(let error):
            outcome = failed(job, attempts: attempts, error: error, dead: false, retryAfter: nil, &actions)
        case .answered(let status, let retryAfter, let detail):
            // SPEC §12: a 2xx is delivered; 410 (Gone) dead at once; anything else a failure,
            // its Retry-After the earliest next try.
            if (200..<300).contains(status) {
                failures = 0
                report.delivered += 1
                outcome = Outcome(job: job, state: .delivered, attempts: attempts)
            } else {
                outcome = failed(
                    job, attempts: attempts, error: "HTTP " + detail, dead: status == 410, retryAfter: retryAfter,
                    &actions)
            }
        }
        return actions + keep(outcome, now)
    }

    /// A failed attempt: dead once out of attempts (or at once, `dead`), else pending for a later
    /// run. The lane halts after `failureLimit` failures in a row, or when the server asked for a
    /// wait (`retryAfter`).
    private mutating func failed(
        _ job: DeliveryJob, attempts: Int, error: String, dead: Bool, retryAfter: Int64?, _ actions: inout [Action]
    ) -> Outcome {
        let dead = dead || retry.isDead(attempts: attempts)
        if dead { report.dead += 1 } else { report.failed += 1 }
        let outcome = Outcome(
            job: job, state: dead ? .dead : .pending, attempts: attempts, error: error,
            retryAfter: dead ? nil : retryAfter)
        failures += 1
        if halted == nil, !dead, let retryAfter {
            halted = .throttled
            actions.append(.warnThrottled(retryAfter))
        } else if failures >= Self.failureLimit && halted == nil {
            halted = .failureLimit
            actions.append(.warnFailureLimit(failures))
        }
        actions.append(dead ? .tellDead(outcome) : .tellFailed(outcome))
        return outcome
    }

    /// Keeps an outcome to store: handed over, or committed when a group is full or old enough (a
    /// dead one at once); in a wide lane, once the commit in flight is back.
    private mutating func keep(_ outcome: Outcome, _ now: Now) -> [Action] {
        if unsaved.isEmpty { unsavedSince = now.elapsed }
        unsaved.append(outcome)
        if handOver {
            defer { unsaved = [] }
            return [.handOver(unsaved)]
        }
        if outcome.state == .dead { urgent = true }
        if urgent || unsaved.count >= groupAt || now.elapsed - unsavedSince >= Self.groupAge {
            return committing.isEmpty ? [commit()] : []
        }
        return []
    }

    /// Outcomes a group is committed at: half a group in a wide lane, whose deliveries go on
    /// while it is written.
    private var groupAt: Int { wide ? Self.groupSize / 2 : Self.groupSize }

    /// In a wide lane, the group that came meanwhile once a commit is back: full, or holding a
    /// dead outcome.
    private mutating func nextGroup() -> Action? {
        wide && !handOver && (urgent || unsaved.count >= groupAt) ? commit() : nil
    }

    /// The lane has no more jobs for now: what is unsaved is committed (once no commit is in
    /// flight).
    mutating func flush() -> Action? {
        handOver || unsaved.isEmpty || !committing.isEmpty ? nil : commit()
    }

    /// The outcomes of the last `.commit` are stored. A wide lane answers the next group to
    /// commit when one came meanwhile.
    @discardableResult
    mutating func committed() -> Action? {
        committing = []
        return nextGroup()
    }

    /// The outcomes of the last `.commit` could not be stored: the lane starts nothing more (what
    /// it delivered after would be repeated by the next run too); answers what was delivered,
    /// and in a wide lane the next group to commit, when one came meanwhile.
    mutating func commitFailed() -> [Action] {
        halted = .notStored
        let delivered = committing.filter { $0.state == .delivered }
        committing = []
        report.notStored += delivered.count
        return [.notStored(delivered: delivered)] + (nextGroup().map { [$0] } ?? [])
    }

    private mutating func commit() -> Action {
        committing = unsaved
        unsaved = []
        urgent = false
        return .commit(committing)
    }
}

extension Outcome {
    /// A job for a sink no longer configured: its delivery is dead.
    static func unconfigured(_ job: DeliveryJob) -> Outcome {
        Outcome(job: job, state: .dead, attempts: job.attempts, error: "\(job.sink) is no longer configured")
    }

    /// A job for a sink that no longer takes its notification (a hook's or webhook's `kinds`, a
    /// desktop's users changed): its delivery is dead.
    static func notTaken(_ job: DeliveryJob) -> Outcome {
        Outcome(
            job: job, state: .dead, attempts: job.attempts,
            error: "\(job.sink) no longer takes this notification: its kinds or users were changed")
    }
}
