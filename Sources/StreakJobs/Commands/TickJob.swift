import StreakCore
import StreakDelivery
import StreakStore

/// What a `tick` did.
public struct TickReport: Equatable, Sendable {
    public var streaks = 0
    public var sent = 0
    public var expired = 0
    public var deliveries = DispatchReport()
    /// Deliveries left pending for a later run.
    public var pending = 0
}

/// `streakd tick`: settle ended dates, send what is due, retry what failed (SPEC §4–5).
extension Context {
    /// The command: exit 75 when deliveries are left pending.
    public func tickCommand(dryRun: Bool) throws {
        try failIfPending(try tick(dryRun: dryRun, delivery: standardDelivery()).pending)
    }

    /// Exit 75 (SPEC §6) when deliveries are left for the next run.
    func failIfPending(_ pending: Int) throws {
        guard pending > 0 else { return }
        throw StreakdError(
            .tempFail, "\(pending) deliver\(pending == 1 ? "y" : "ies") left pending; the next run retries")
    }

    @discardableResult
    public func tick(dryRun: Bool = false, delivery: Delivery) throws -> TickReport {
        let owner = RunOwner.token(now: now)
        let dispatcher = Dispatcher(context: self, delivery: delivery, owner: owner)
        var report = TickReport()
        let changed = try configChanged(write: !dryRun)
        // With the list, a mark that tells whether anyone else wrote since (then each streak's row
        // is as listed, and recording need not look it up again).
        let (due, mark) = try store.read {
            (try $0.dueStreaks(through: dryRun && changed ? nil : now), try $0.othersWrites())
        }
        report.streaks = due.count
        // With every sink always at once (the unpaced journal), one group's notifications go out
        // on a second thread while the next group is planned and recorded (docs/RULES.md).
        let overlap = !dryRun && dispatcher.alwaysAtOnce
        dispatcher.handOver = overlap
        var delivering: Background<Void>?
        // Planning a transaction ahead, on a connection of its own (overlap only).
        // A small first batch: the run records nothing until it is planned.
        var ahead = overlap ? planAhead(due, from: 0, count: Self.overlapBatch / 4) : nil
        defer {
            try? delivering?.wait()
            _ = try? ahead?.wait()
        }
        var start = 0
        while start < due.count {
            if dryRun {
                let batch = Array(due[start..<min(start + Self.batchSize, due.count)])
                start += batch.count
                for (n, fresh) in try store.read({ try plan(batch, $0, everySettlement: changed).notices }) {
                    printer.record(
                        n.json.with("state", .string(fresh ? "sent" : "expired")),
                        short: (fresh ? "would send " : "would expire ") + n.line)
                    if fresh { report.sent += 1 } else { report.expired += 1 }
                }
                continue
            }
            let recorded: [Recorded]
            if let planning = ahead {
                let (planned, end) = try planning.wait()
                ahead = end < due.count ? planAhead(due, from: end) : nil
                // Its references are checked here: a notice only for a streak whose schedule row (so
                // whose user) `record` found, or, nobody else having written since, the due list
                // did; a delivery only for a notification it just recorded.
                recorded = try store.uncheckedWrite { w in
                    try dispatcher.writeHandedOver(w)
                    return try record(planned, w, dispatcher, owner, unchangedSince: mark)
                }
                start = end
            } else {
                (recorded, start) = try store.write { w in
                    try record(due, from: start, w, dispatcher, owner, unchangedSince: mark)
                }
            }
            let sent = recorded.count { $0.fresh }
            report.sent += sent
            report.expired += recorded.count - sent
            // What one transaction recorded is printed and delivered before the next is planned (or,
            // on the second thread, while it is): a run holds at most two transactions' notifications.
            let deliver = { [printer] in
                printer.lines(
                    recorded.map { n, _, _, fresh in
                        printer.line(
                            n.json.with("state", .string(fresh ? "sent" : "expired")),
                            short: (fresh ? "sent " : "expired ") + n.line)
                    })
                try dispatcher.run(
                    recorded.filter(\.fresh).flatMap { dispatcher.jobs(for: $0.0, id: $0.id, sinks: $0.sinks) })
            }
            if overlap {
                try delivering?.wait()
                delivering = Background(deliver)
            } else {
                try deliver()
            }
        }
        if overlap {
            try delivering?.wait()
            delivering = nil
            dispatcher.handOver = false
            try store.write { w in try dispatcher.writeHandedOver(w) }
        }
        guard !dryRun else {
            printer.err(
                "tick at \(now) (dry run): \(report.sent) would be sent, \(report.expired) would expire (\(report.streaks) streaks looked at)"
            )
            return report
        }
        try dispatcher.run(try dispatcher.claimRetries())
        report.deliveries = dispatcher.report
        report.pending = try store.read { try $0.waitingDeliveries() }
        let d = report.deliveries
        printer.err(
            "tick at \(now): \(report.sent) sent, \(report.expired) expired; \(d.delivered) delivered, \(d.failed) failed, "
                + "\(d.dead) dead, \(d.retried) retried; \(report.pending) pending (\(report.streaks) streaks looked at)"
        )
        return report
    }

    /// A notification recorded in the ledger: its id, the sinks it was recorded for, and whether
    /// it is sent (else expired).
    typealias Recorded = (Notification, id: Int64, sinks: [String], fresh: Bool)

    /// Streaks planned at a time.
    static let batchSize = 8192
    /// Streaks planned in one transaction while the last one's notifications go out beside it.
    static let overlapBatch = 4096
    /// A transaction plans and records batches until it holds this many notifications: bounds
    /// what a run holds in memory. A busy quarter hour at a million users is one transaction, so
    /// each page it changes is written once.
    static let recordLimit = 16384

    /// Plans the next `overlapBatch` due streaks from `start` on a thread and a read connection of
    /// their own, while the run records the last ones: what was committed when it began, which
    /// the recording checks (`record(_:_:_:_:unchangedSince:)`).
    func planAhead(_ due: [DueStreak], from start: Int, count: Int = overlapBatch) -> Background<(Plan, end: Int)> {
        let end = min(start + count, due.count)
        let batch = Array(due[start..<end])
        return Background { (try store.readBeside { r in try plan(batch, r, checkLedger: false) }, end) }
    }

    /// Plans batches from `start` and records their notifications and next runs, in the writer's
    /// transaction, until it holds `recordLimit` notifications; answers what it recorded (fresh:
    /// to send) and where it stopped.
    func record(
        _ due: [DueStreak], from start: Int, _ w: any StoreWriter, _ dispatcher: Dispatcher, _ owner: String,
        unchangedSince mark: Int64
    ) throws -> (recorded: [Recorded], end: Int) {
        var recorded: [Recorded] = []
        var end = start
        while end < due.count && recorded.count < Self.recordLimit {
            let batch = Array(due[end..<min(end + Self.batchSize, due.count)])
            end += batch.count
            recorded += try record(try plan(batch, w, checkLedger: false), w, dispatcher, owner, unchangedSince: mark)
        }
        return (recorded, end)
    }

    /// Records a plan in the writer's transaction: each streak's next run, then, if the streak is
    /// still the version planned from, its notices (the ledger's unique key leaves out what is
    /// recorded already). Answers what it recorded. `mark`: `othersWrites()` when the due list
    /// was read; when it still answers that, no streak changed since but by this run.
    func record(
        _ planned: Plan, _ w: any StoreWriter, _ dispatcher: Dispatcher, _ owner: String, unchangedSince mark: Int64
    ) throws -> [Recorded] {
        let unchanged = try w.othersWrites() == mark
        var current: [Bool] = []
        for s in planned.schedule {
            current.append(
                try w.schedule(s.streak, nextAt: s.next, handledThrough: now, read: s.read, unchanged: unchanged))
        }
        var recorded: [Recorded] = []
        for ((n, fresh), streak) in zip(planned.notices, planned.of) where current[streak] {
            let sinks = dispatcher.sinkNames(for: n)
            if let id = try w.record(
                n.ledgerEntry, state: fresh ? .sent : .expired, sinks: sinks, owner: owner, at: now)
            {
                recorded.append((n, id, sinks, fresh))
            }
        }
        return recorded
    }

    /// Notes the settings that decide notices; when they changed, every streak gets a fresh look.
    func configChanged(write: Bool) throws -> Bool {
        let fingerprint = noticeFingerprint
        // A read first: a run with nothing to do writes nothing (and closes without a checkpoint's sync).
        let unchanged = try store.read { try $0.meta("notice-settings") } == fingerprint
        if !write || unchanged { return !unchanged }
        return try store.write { w in
            guard try w.meta("notice-settings") != fingerprint else { return false }
            try w.rescheduleAll()
            try w.setMeta("notice-settings", fingerprint)
            return true
        }
    }

    var noticeFingerprint: String {
        var c = config
        c.source = nil
        c.desktopUsers = []
        c.hooks = []
        return c.json.text
    }

    struct Plan {
        var notices: [(Notification, fresh: Bool)] = []
        /// For each notice, its streak's place in `schedule`.
        var of: [Int] = []
        /// `read`: the history read from the tables (not a packed one), to pack.
        var schedule: [(streak: DueStreak, next: Instant?, read: StoredStreak?)] = []
    }

    /// Works out what is due for a batch of streaks, leaving out keys the ledger has (when `checkLedger`).
    /// A streak not marked changed is as the run that last handled it saw it, which found its
    /// settlements until then (the ledger has them): only later ones are looked at, unless
    /// `everySettlement` (the settings changed, and the dry run that shows it writes no mark).
    func plan(_ batch: [DueStreak], _ r: any StoreReader, checkLedger: Bool = true, everySettlement: Bool = false)
        throws -> Plan
    {
        var plan = Plan()
        var epochs: [String: [SettingsEpoch]] = [:]
        let reminders = ReminderPolicy(days: config.reminderDays)
        for d in batch {
            // The packed history stands for the tables while the version is unchanged.
            let looked = try r.userAndPackedHistory(of: d)
            guard let user = try looked?.user ?? r.user(d.user) else { continue }
            if epochs[d.streak] == nil { epochs[d.streak] = try r.settingsEpochs(of: d.streak) }
            // Found by its row: the packed history, or nil when stale; else looked up by the ids.
            let packed = try looked.map { $0.packed } ?? r.packedHistory(of: d)
            let read = packed == nil ? try r.storedStreak(of: user, streak: d.streak) : nil
            let history = try history(of: (packed ?? read)!, epochs: epochs[d.streak]!)
            let state = Engine.evaluate(history, at: now)
            let policy = noticePolicy(for: user, reminders: reminders)
            let found = Notices.due(
                history, policy: policy, since: d.handledThrough, now: now, state: state,
                settledThrough: d.marked || everySettlement ? nil : d.handledThrough)
            let notices = found.map {
                (n: notification($0.notice, user: user.id, streak: d.streak, history: history), fresh: $0.fresh)
            }
            let recorded = notices.isEmpty || !checkLedger ? [:] : try r.ledgerStates(keys: notices.map(\.n.key))
            let kept = notices.filter { recorded[$0.n.key] == nil }
            plan.notices += kept.map { ($0.n, $0.fresh) }
            plan.of += repeatElement(plan.schedule.count, count: kept.count)
            plan.schedule.append((d, Notices.next(history, policy: policy, now: now, state: state), read))
        }
        return plan
    }
}

extension JSON {
    /// The object with one more key at the end.
    func with(_ key: String, _ value: JSON) -> JSON {
        guard case .object(var items) = self else { return self }
        items.append((key, value))
        return .object(items)
    }
}
