import StreakCore
import StreakDelivery
import StreakStore

import class Foundation.NSLock

/// Counts of what a run did with its deliveries.
public struct DispatchReport: Equatable, Sendable {
    public var delivered = 0
    public var failed = 0
    public var dead = 0
    public var unavailable = 0
    public var retried = 0
    /// Failed before and not due for another try yet.
    public var waiting = 0
}

/// Calls the sinks for deliveries this run owns and writes their outcomes to the ledger: at once
/// before any delivery that may take time (a paced journal, a hook, the desktop), else in small
/// groups, so a crash repeats at most one group of instant deliveries.
final class Dispatcher {
    /// One delivery to make now.
    struct Job {
        /// The notification's ledger id.
        var id: Int64
        var notification: Notification
        var sink: String
        var attempts: Int
    }

    let context: Context
    let delivery: Delivery
    let owner: String
    private(set) var report = DispatchReport()
    private var warned = Set<String>()

    init(context: Context, delivery: Delivery, owner: String) {
        self.context = context
        self.delivery = delivery
        self.owner = owner
    }

    /// The sinks that take a notification.
    func sinkNames(for n: Notification) -> [String] {
        delivery.sinks.filter { $0.accepts(n) }.map(\.name)
    }

    /// A new notification's jobs, one per sink its ledger entry was recorded with.
    func jobs(for n: Notification, id: Int64, sinks: [String]) -> [Job] {
        sinks.map { Job(id: id, notification: n, sink: $0, attempts: 0) }
    }

    /// Claims the pending deliveries that are due for another try, or were left by a run that died.
    func claimRetries() throws -> [Job] {
        let now = context.now
        let pending = try context.store.read { try $0.pendingDeliveries() }
        var jobs: [Job] = []
        for p in pending where p.owner != owner {
            if let o = p.owner {
                guard RunOwner.isGone(o, now: now) else { continue }  // another run is on it
            } else if let last = p.lastAttempt,
                !delivery.retry.isDue(attempts: p.attempts, lastAttempt: last, now: now)
            {
                report.waiting += 1
                continue
            }
            if try context.store.write({ try $0.claim(id: p.id, sink: p.sink, from: p.owner, to: owner) }) {
                jobs.append(Job(id: p.id, notification: Notification(p.entry), sink: p.sink, attempts: p.attempts))
                report.retried += 1
            }
        }
        return jobs
    }

    /// Delivers, in order; jobs of one notification are finished together.
    func run(_ jobs: [Job]) throws {
        var i = 0
        while i < jobs.count {
            var j = i
            while j < jobs.count && jobs[j].id == jobs[i].id { j += 1 }
            try deliver(Array(jobs[i..<j]))
            i = j
        }
        try save()
    }

    typealias Outcome = (job: Job, state: DeliveryState, attempts: Int, error: String?)

    /// Outcomes delivered but not yet committed, and since when.
    private var unsaved: [Outcome] = []
    private var unsavedSince = ContinuousClock.now
    /// A group is committed once it holds this many outcomes or is this old, and always before a
    /// delivery that may take time: a crash repeats at most one group of fast deliveries.
    static let groupSize = 256
    static let groupAge = Duration.milliseconds(100)

    /// Set while a second thread delivers (every sink always at once): outcomes are handed over
    /// for the run's next transaction to write (`writeHandedOver`), not committed here.
    var handOver = false
    /// Guarded by `handedLock`.
    private var handed: [Outcome] = []
    private let handedLock = NSLock()

    /// Whether every sink delivers at once, always: then a run may deliver on a second thread.
    var alwaysAtOnce: Bool { delivery.sinks.allSatisfy(\.alwaysAtOnce) }

    /// Writes the outcomes handed over so far, in the caller's transaction.
    func writeHandedOver(_ w: any StoreWriter) throws {
        let outcomes = handedLock.withLock {
            defer { handed = [] }
            return handed
        }
        try Self.write(outcomes, w, at: context.now)
    }

    private func deliver(_ group: [Job]) throws {
        let sinks = group.map { job in delivery.sinks.first(where: { $0.name == job.sink }) }
        if !handOver, sinks.contains(where: { !($0?.deliversAtOnce ?? true) }) { try save() }
        var outcomes: [Outcome] = []
        for (job, sink) in zip(group, sinks) {
            let attempts = job.attempts + 1
            guard let sink else {
                outcomes.append((job, .dead, attempts, "\(job.sink) is no longer configured"))
                continue
            }
            switch sink.deliver(job.notification) {
            case .delivered:
                report.delivered += 1
                outcomes.append((job, .delivered, attempts, nil))
            case .unavailable(let reason):
                report.unavailable += 1
                if warned.insert(job.sink).inserted {
                    context.printer.warn("\(job.sink): \(reason); its notifications are skipped")
                }
                outcomes.append((job, .expired, attempts, reason))
            case .failed(let error):
                let dead = delivery.retry.isDead(attempts: attempts)
                outcomes.append((job, dead ? .dead : .pending, attempts, error))
                if dead { report.dead += 1 } else { report.failed += 1 }
            }
        }
        let dead = outcomes.filter { $0.state == .dead }
        if handOver {
            handedLock.withLock { handed += outcomes }
        } else {
            if unsaved.isEmpty { unsavedSince = ContinuousClock.now }
            unsaved += outcomes
            if !dead.isEmpty || unsaved.count >= Self.groupSize || ContinuousClock.now - unsavedSince >= Self.groupAge {
                try save()
            }
        }
        for (job, _, attempts, error) in dead {
            context.printer.warn(
                "\(job.sink) gave up on \(job.notification.key) after \(attempts) attempts: \(error ?? "")")
            delivery.recordDead(job.notification, job.sink, attempts, error ?? "")
        }
    }

    /// Commits the outcomes delivered so far.
    private func save() throws {
        guard !unsaved.isEmpty else { return }
        let outcomes = unsaved
        try context.store.write { w in try Self.write(outcomes, w, at: context.now) }
        unsaved = []
    }

    private static func write(_ outcomes: [Outcome], _ w: any StoreWriter, at now: Instant) throws {
        for run in runs(outcomes) {
            let (job, state, attempts, error) = outcomes[run.lowerBound]
            let ids = job.id...outcomes[run.upperBound].job.id
            try w.finish(ids: ids, sink: job.sink, state: state, attempts: attempts, at: now, error: error)
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
