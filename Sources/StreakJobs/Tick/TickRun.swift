import Dispatch
import StreakCore
import StreakDelivery
import StreakStore

/// One tick as a claim protocol, the same with one process or several on one store
/// (docs/ARCHITECTURE.md). The due streaks are listed once; then, a batch at a time, one write
/// transaction claims them (a streak another run holds is skipped, never waited for), plans them
/// (pure, from what was read), and records their notices in the ledger, whose unique key decides
/// which run records each, with each streak's next run. What it recorded is then delivered, each
/// sink in a lane of its own, while the next batch is claimed. Last, deliveries due for a retry,
/// or left by runs that are gone, are taken over and finished.
///
/// The run owns its threads: the sinks' lanes (`Dispatcher`), a planner reading ahead on a
/// connection of its own when every sink delivers at once, the printer's queue and the lease's
/// heartbeat. What crosses them is `Sendable`.
/// What a tick's recording transaction touches: the due streaks it claims and plans, their
/// histories, the ledger it records in, and the run's lease.
typealias TickWriting = HistoryReading & ScheduleReading & ScheduleWriting & LedgerReading & LedgerWriting & RunRegistry

final class TickRun {
    let context: Context
    let due: DueList
    let dispatcher: Dispatcher
    /// Every sink delivers at once or is a wide lane: plan a batch ahead beside the recording,
    /// hand the instant lanes' outcomes to the next transaction, and let the wide lanes commit
    /// theirs beside (docs/RULES.md, "Delivering beside recording").
    let overlap: Bool
    /// Prints what each transaction recorded, off the recording thread, in order.
    let output = DispatchQueue(label: "streakd.output")
    /// Streaks claimed at a time.
    let batchSize: Int
    /// Where in the list the run starts (it goes round to the start after the end).
    let first: Int

    /// The due streaks at places `range` of the run's order: the list from `first` on, then
    /// the part before it.
    func batch(_ range: Range<Int>) -> [DueStreak] {
        let n = due.streaks.count
        if first == 0 { return Array(due.streaks[range]) }
        return range.map { due.streaks[($0 + first) % n] }
    }
    var report = TickReport()

    /// Streaks planned at a time.
    static let batchSize = 8192
    /// Streaks planned in one transaction while the last one's notifications go out beside it.
    static let overlapBatch = 4096
    /// A transaction claims and records batches until it holds this many notifications: bounds
    /// what a run holds in memory. A busy quarter hour at a million users is one transaction, so
    /// each page it changes is written once.
    static let recordLimit = 16384

    /// A notification recorded in the ledger: its id, the sinks it was recorded for, and whether
    /// it is sent (else expired).
    typealias Recorded = (notification: Notification, id: Int64, sinks: [String], fresh: Bool)

    init(context: Context, delivery: Delivery, due: DueList) {
        self.context = context
        self.due = due
        if context.store.concurrentClaims {
            // Runs going at once on one database split the work: each claims small batches, a
            // transaction each, starting at a batch of its own choosing (it takes the rest after).
            batchSize = min(Self.batchSize, max(64, due.streaks.count / 32))
            let batches = (due.streaks.count + batchSize - 1) / batchSize
            first = batches > 1 ? Int.random(in: 0..<batches) * batchSize : 0
        } else {
            batchSize = Self.batchSize
            first = 0
        }
        overlap = Dispatcher.besideRecording(delivery)
        dispatcher = Dispatcher(
            context: context, delivery: delivery, owner: RunOwner.token(now: context.now), handOver: overlap)
    }

    var now: Instant { context.now }
    var store: any Store { context.store }

    /// The run; one that fails after it recorded or delivered something says what it delivered
    /// before the error (issue 31: a full disk ended a run with only "what it was writing was not
    /// stored").
    func run() throws -> TickReport {
        do {
            return try recordAndDeliver()
        } catch {
            // The lanes are drained (`recordAndDeliver`'s defer): the counts are final.
            let d = dispatcher.report
            if !summarized && (report.sent > 0 || d.delivered > 0 || d.failed > 0 || d.dead > 0) {
                let unrecorded =
                    d.notStored > 0
                    ? " (\(d.notStored) of them not recorded: the next run makes \(d.notStored == 1 ? "it" : "them") again)"
                    : ""
                context.printer.err(
                    "tick at \(now), ended by the error below: \(report.sent) sent, \(report.expired) expired; "
                        + "\(d.delivered) delivered\(unrecorded), \(d.failed) failed, \(d.dead) dead, \(d.retried) "
                        + "retried; what is left waits for the next run")
            }
            throw error
        }
    }

    /// Whether the run printed its summary (a stopped run does, then ends 75).
    private var summarized = false

    private func recordAndDeliver() throws -> TickReport {
        report.streaks = due.streaks.count
        // The store's upkeep of its log (SQLite's checkpoints) held back from the run's commits,
        // done beside the lanes once the recording is over, and for what they committed since
        // at the end, before the run's last commit (its summary), which then starts the log
        // over (docs/ARCHITECTURE.md, "Checkpoints beside the lanes").
        try store.holdUpkeep(true)
        var upkeep: Background<Void>?
        defer {
            if let upkeep {
                _ = try? upkeep.wait()
                try? store.upkeep()
            }
            try? store.holdUpkeep(false)
        }
        // Planning a transaction ahead, on a connection of its own (overlap only). A small first
        // batch: the run records nothing until it is planned.
        var ahead = overlap ? try planAhead(from: 0, count: min(batchSize, Self.overlapBatch / 4)) : nil
        let progress = DeliveryProgress(printer: context.printer) { [dispatcher] in dispatcher.progress }
        defer {
            progress.finish()
            _ = try? ahead?.wait()
            try? dispatcher.drain()
            output.sync {}
        }
        var start = 0
        while start < due.streaks.count && !context.stop.requested {
            let recorded: [Recorded]
            if let planning = ahead {
                let (planned, end) = try planning.wait()
                ahead = end < due.streaks.count ? try planAhead(from: end) : nil
                recorded = try store.write(.referencesChecked) { w in
                    try dispatcher.writeHandedOver(w)
                    let claimed = try w.claim(planned.runs.map(\.streak), listed: due.mark, now: now)
                    return try record(planned, claimed: claimed, w)
                }
                start = end
            } else {
                (recorded, start) = try store.write(.referencesChecked) { w in try claimAndRecord(from: start, w) }
            }
            // Recorded while the last transaction's notifications went out; at most two in flight.
            if overlap { dispatcher.waitForFastLanes() }
            deliver(recorded)
        }
        if report.sent + report.expired > 0 { upkeep = try Background { [store] in try store.upkeep() } }
        try dispatcher.drain()
        if overlap { try store.write { try dispatcher.writeHandedOver($0) } }
        if !context.stop.requested {
            dispatcher.send(try dispatcher.claimRetries())
            try dispatcher.drain()
            if overlap { try store.write { try dispatcher.writeHandedOver($0) } }
        }
        try dispatcher.lease.end()
        output.sync {}
        report.deliveries = dispatcher.report
        (report.pending, report.held) = try store.read { r in
            let held = try r.heldDeliveries()
            return (try r.waitingDeliveries() + held, held)
        }
        let d = report.deliveries
        progress.finish()
        context.printer.err(
            "tick at \(now): \(report.sent) sent, \(report.expired) expired; \(d.delivered) delivered, \(d.failed) failed, "
                + "\(d.dead) dead, \(d.retried) retried\(d.stale > 0 ? " (\(d.stale) no longer due, expired)" : ""); "
                + "\(Self.pendingText(report.pending, held: report.held)) "
                + "(\(report.streaks) streaks looked at)"
        )
        summarized = true
        return report
    }

    /// `3 pending`, or `824 pending, 824 of them held by another run (…)`: what waits for a later
    /// run, those another run holds included (a run killed or stopped holds its deliveries until
    /// its lease runs out).
    static func pendingText(_ pending: Int, held: Int) -> String {
        guard held > 0 else { return "\(pending) pending" }
        return "\(pending) pending, \(held == pending ? "all" : "\(held)") of them held by another run "
            + "(taken over once it has ended or its lease has run out)"
    }

    /// Prints what a transaction recorded and hands its fresh notifications to the lanes.
    private func deliver(_ recorded: [Recorded]) {
        let sent = recorded.count { $0.fresh }
        report.sent += sent
        report.expired += recorded.count - sent
        let printer = context.printer
        output.async {
            printer.lines(
                recorded.map { n, _, _, fresh in
                    printer.line(
                        n.json.with("state", .string(fresh ? "sent" : "expired")),
                        short: (fresh ? "sent " : "expired ") + n.line)
                })
        }
        dispatcher.send(
            recorded.filter(\.fresh).flatMap { dispatcher.jobs(for: $0.notification, id: $0.id, sinks: $0.sinks) })
    }

    /// Plans the next `overlapBatch` due streaks from `start` on a thread and a read connection of
    /// their own, while the run records the last ones: what was committed when it began, which the
    /// claim checks (a streak changed since is not claimed).
    func planAhead(from start: Int, count: Int? = nil) throws -> Background<(TickPlan, end: Int)> {
        let end = min(start + (count ?? min(batchSize, Self.overlapBatch)), due.streaks.count)
        let batch = self.batch(start..<end)
        return try Background { [context] in
            (try context.store.readBeside { r in try context.plan(batch, r, checkLedger: false) }, end)
        }
    }

    /// Claims batches from `start`, plans them and records their notices and next runs, in the
    /// writer's transaction, until it holds `recordLimit` notifications; answers what it recorded
    /// and where it stopped.
    func claimAndRecord(from start: Int, _ w: some TickWriting) throws -> (recorded: [Recorded], end: Int) {
        var recorded: [Recorded] = []
        var end = start
        while end < due.streaks.count && recorded.count < Self.recordLimit && (end == start || !store.concurrentClaims)
        {
            let batch = self.batch(end..<min(end + batchSize, due.streaks.count))
            end += batch.count
            let claimed = try w.claim(batch, listed: due.mark, now: now).compactMap { $0 }
            let planned = try context.plan(claimed, w, checkLedger: false)
            recorded += try record(planned, claimed: planned.runs.map(\.streak), w)
        }
        return (recorded, end)
    }

    /// Records a plan in the writer's transaction: the next run of each streak it claimed, then
    /// their notices (the ledger's unique key leaves out what is recorded already). `claimed`: for
    /// each of the plan's runs, its streak as claimed, or nil where it is not this run's.
    func record(_ planned: TickPlan, claimed: [DueStreak?], _ w: some ScheduleWriting & LedgerWriting & RunRegistry) throws
        -> [Recorded]
    {
        var runs: [PlannedRun] = []
        for (run, streak) in zip(planned.runs, claimed) {
            guard let streak else { continue }
            var run = run
            run.streak = streak
            runs.append(run)
        }
        try w.schedule(runs, handledThrough: now)
        var items: [NewRecord] = []
        for ((n, fresh), streak) in zip(planned.notices, planned.of) where claimed[streak] != nil {
            items.append(NewRecord(n, state: fresh ? .sent : .expired, sinks: dispatcher.sinkNames(for: n)))
        }
        // The run's lease starts with its first delivery, in the same transaction.
        if items.contains(where: { $0.state == .sent && !$0.sinks.isEmpty }) { try dispatcher.lease.register(w) }
        let ids = try w.record(items, owner: dispatcher.owner, at: now)
        return zip(items, ids).compactMap { item, id in
            id.map { (item.notification, $0, item.sinks, item.state == .sent) }
        }
    }
}
