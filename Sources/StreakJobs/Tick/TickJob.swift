import StreakCore
import StreakDelivery
import StreakStore

/// What a `tick` did.
public struct TickReport: Equatable, Sendable {
    public var streaks = 0
    public var sent = 0
    public var expired = 0
    public var deliveries = DispatchReport()
    /// Deliveries pending when the run ended, those another run holds included.
    public var pending = 0
    /// Of them, held by another run: one still delivering, or one killed or stopped whose lease
    /// has not run out yet (then a later run takes them over).
    public var held = 0
}

/// `streakd tick`: settle ended dates, send what is due, retry what failed (SPEC §4–5).
extension Context {
    /// The command: exit 75 when deliveries are left pending.
    public func tickCommand(dryRun: Bool) throws {
        // Once stopped (SIGTERM from systemd stopping the unit, SIGINT): start no new delivery,
        // record those in flight, exit 75 (SPEC §5; `TickRun`).
        // Another run's deliveries are that run's to finish (or a later run's, once its lease is
        // out): pending, but not left behind by this run.
        let report = try tick(dryRun: dryRun, delivery: standardDelivery())
        if !dryRun { writeMetricsTextfile() }
        try failIfPending(report.pending - report.held)
    }

    /// Exit 75 (SPEC §6) when deliveries are left for the next run.
    func failIfPending(_ pending: Int) throws {
        guard pending > 0 else { return }
        throw StreakdError(
            .tempFail, "\(pending) deliver\(pending == 1 ? "y" : "ies") left pending; the next run retries")
    }

    @discardableResult
    public func tick(dryRun: Bool = false, delivery: Delivery) throws -> TickReport {
        let changed = try configChanged(write: !dryRun)
        if !dryRun { try usualBoundsChanged() }
        let due = try store.read { try $0.dueStreaks(through: dryRun && changed ? nil : now) }
        if dryRun { return try dryTick(due.streaks, everySettlement: changed) }
        let began = ContinuousClock.now
        let report = try TickRun(context: self, delivery: delivery, due: due).run()
        let d = report.deliveries
        try recordRun(
            MetaKey.lastTick,
            [
                ("sent", report.sent), ("expired", report.expired), ("delivered", d.delivered), ("failed", d.failed),
                ("dead", d.dead), ("retried", d.retried), ("pending", report.pending), ("held", report.held),
                ("streaks", report.streaks),
            ], began: began, delivery: delivery)
        // A stopped run ended as a run (exit 75, SPEC §13): recorded and summarized like any.
        if stop.requested { throw StreakdError(.tempFail, "stopped by a signal; the next run goes on") }
        return report
    }

    /// Notes in the store's meta when a run ran, what it did and how long it took (`duration_ms`),
    /// for `status` without an ID, `status --check` and the metrics; then writes the run's summary
    /// entry to the journal (SPEC §13).
    /// `also`: counts for the journal entry only (a refill's deliveries).
    func recordRun(
        _ key: String, _ counts: [(String, Int)], also: [(String, Int)] = [], began: ContinuousClock.Instant,
        delivery: Delivery
    ) throws {
        let elapsed = (ContinuousClock.now - began).components
        let ms = Int(elapsed.seconds) * 1000 + Int(elapsed.attoseconds / 1_000_000_000_000_000)
        let summary = JSON.object(
            [("at", .string(now.description))] + counts.map { ($0.0, .int($0.1)) } + [("duration_ms", .int(ms))])
        try store.write { try $0.setMeta(key, summary.text) }
        let named = Dictionary(counts + also, uniquingKeysWith: { a, _ in a })
        // The counts every summary has, then the job's own (a tick's streaks and retries: not).
        let own = JournalSink.summaryCounts + ["streaks", "retried"]
        let extra = counts.filter { !own.contains($0.0) }
        delivery.recordSummary(
            RunSummaryEntry(
                job: key == MetaKey.lastTick ? "tick" : "refill", counts: named, extra: extra, durationMS: ms))
    }

    /// What a run now would send or record, planned in reads: nothing is claimed or written.
    func dryTick(_ due: [DueStreak], everySettlement: Bool) throws -> TickReport {
        var report = TickReport()
        report.streaks = due.count
        var start = 0
        while start < due.count {
            let batch = due[start..<min(start + TickRun.batchSize, due.count)]
            start += batch.count
            for (n, fresh) in try store.read({ try plan(batch, $0, everySettlement: everySettlement).notices }) {
                printer.record(
                    n.json.with("state", .string(fresh ? "sent" : "expired")),
                    short: (fresh ? "would send " : "would expire ") + n.line)
                if fresh { report.sent += 1 } else { report.expired += 1 }
            }
        }
        printer.err(
            "tick at \(now) (dry run): \(report.sent) would be sent, \(report.expired) would expire (\(report.streaks) streaks looked at)"
        )
        return report
    }

    /// Notes the settings that decide notices; when they changed, every streak gets a fresh look.
    func configChanged(write: Bool) throws -> Bool {
        let fingerprint = noticeFingerprint
        // A read first: a run with nothing to do writes nothing (and closes without a checkpoint's sync).
        let unchanged = try store.read { try $0.meta(MetaKey.noticeSettings) } == fingerprint
        if !write || unchanged { return !unchanged }
        return try store.write { w in
            guard try w.meta(MetaKey.noticeSettings) != fingerprint else { return false }
            try w.rescheduleAll()
            try w.setMeta(MetaKey.noticeSettings, fingerprint)
            return true
        }
    }

    /// The settings that decide a streak's notices: not where they go (hooks, webhooks) nor how fast
    /// (the journal's pacing: the shipped units turn it off), nor badges and levels, nor the
    /// messages' words (left out of the text, so a store keeps the fingerprint it had before they
    /// existed), nor the usual hour's bounds, which change the usual users alone
    /// (`usualBoundsChanged`). A change of these would make the next tick look at every streak again.
    var noticeFingerprint: String {
        var c = config
        c.source = nil
        c.desktopUsers = []
        c.hooks = []
        c.webhooks = []
        (c.journalBurst, c.journalInterval) = (Config().journalBurst, Config().journalInterval)
        c.metricsTextfile = nil
        guard case .object(let items) = c.json else { return c.json.text }
        return JSON.object(
            items.filter { !["xp", "levels", "badges", "runs", "messages"].contains($0.0) }.map { item -> (String, JSON) in
                guard item.0 == "reminders", case .object(let r) = item.1 else { return item }
                return (item.0, .object(r.filter { !$0.0.hasPrefix("usual_") }))
            }
        ).text
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
