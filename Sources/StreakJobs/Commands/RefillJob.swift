import StreakCore
import StreakDelivery
import StreakStore

/// What a `refill` did.
public struct RefillReport: Equatable, Sendable {
    /// Streaks whose refill date came: those whose count rose, and those at the maximum already.
    public var refilled = 0
    public var atMaximum = 0
    public var notDue = 0
}

/// `streakd refill`: the daily freeze refill of SPEC §3.
extension Context {
    public func refillCommand(dryRun: Bool) throws {
        // As `tick`: once stopped (SIGTERM or SIGINT), refill no further streak, record the
        // deliveries in flight, exit 75 (SPEC §5).
        let pending = try refill(dryRun: dryRun, delivery: standardDelivery()).pending
        if !dryRun { writeMetricsTextfile() }
        try failIfPending(pending)
        if stop.requested { throw StreakdError(.tempFail, "stopped by a signal; the next run goes on") }
    }

    @discardableResult
    public func refill(dryRun: Bool = false, delivery: Delivery) throws -> (refill: RefillReport, pending: Int) {
        let began = ContinuousClock.now
        let owner = RunOwner.token(now: now)
        let dispatcher = Dispatcher(context: self, delivery: delivery, owner: owner)
        var report = RefillReport()
        var jobs: [DeliveryJob] = []
        var sent = 0
        let users = try store.read { r in try r.users().map { ($0, try r.streaks(of: $0.id)) } }
        // Checked and written in one transaction: two refills at once add one freeze. A dry run
        // only reads (it may run on a read-only store).
        func transaction<T>(
            _ body: (any HistoryReading, (any HistoryWriting & ScheduleWriting & LedgerWriting & RunRegistry)?) throws -> T
        ) throws -> T {
            dryRun ? try store.read { try body($0, nil) } : try store.write { try body($0, $0) }
        }
        for (user, streaks) in users where !stop.requested {
            for streak in streaks where !stop.requested {
                let outcome = try transaction {
                    r, writer -> (JSON, String, (Notification, id: Int64, sinks: [String])?, Bool)? in
                    try writer?.lockStreak(user: user.id, streak: streak)
                    let history = try history(of: user, streak: streak, in: r)
                    let state = Engine.evaluate(history, at: now)
                    let last = history.freezeEvents.filter { $0.kind == .refill }.map(\.at).max()
                    guard Refill.isDue(lastRefill: last, firstStored: state.firstStored, now: now) else { return nil }
                    let max = history.settings.freeze.max
                    let after = Refill.apply(freezes: state.freezes, max: max)
                    var made: Notification?
                    if after > state.freezes {
                        let notice = Notice(
                            kind: .freezeRefilled, date: history.zone(at: now).date(of: now), due: now,
                            length: state.current, freezes: after)
                        made = notification(notice, user: user, streak: streak, history: history)
                    }
                    var n: (Notification, id: Int64, sinks: [String])?
                    if let w = writer {
                        try w.addFreezeEvent(FreezeEvent(at: now, kind: .refill), user: user.id, streak: streak)
                        if let made {
                            let sinks = dispatcher.sinkNames(for: made)
                            if !sinks.isEmpty { try dispatcher.lease.register(w) }
                            // nil: notified today already
                            n = try w.record(NewRecord(made, state: .sent, sinks: sinks), owner: owner, at: now)
                                .map { (made, $0, sinks) }
                        }
                    }
                    let next = Refill.nextEligible(lastRefill: now, firstStored: state.firstStored)!
                    let json = JSON.object([
                        ("user", .string(user.id)), ("streak", .string(streak)),
                        ("freezes_before", .int(state.freezes)), ("freezes", .int(after)), ("max", .int(max)),
                        ("next_refill", .string(next.description)),
                    ])
                    let text =
                        "\(dryRun ? "would refill" : "refilled") \(user.id)/\(streak): freezes \(state.freezes) → \(after)"
                        + (after == state.freezes ? " (at the maximum)" : "") + ", next refill from \(next)"
                    return (json, text, n, after > state.freezes)
                }
                guard let (json, text, n, rose) = outcome else {
                    report.notDue += 1
                    continue
                }
                printer.record(json, short: text)
                if rose {
                    report.refilled += 1
                } else {
                    report.atMaximum += 1
                }
                if let (n, id, sinks) = n {
                    sent += 1
                    jobs += dispatcher.jobs(for: n, id: id, sinks: sinks)
                }
            }
        }
        var pending = 0
        if !dryRun {
            dispatcher.send(jobs)
            try dispatcher.drain()
            try dispatcher.lease.end()
            // Left pending for a retry (the exit code's); the summary counts those other runs hold too.
            let held: Int
            (pending, held) = try store.read { try ($0.waitingDeliveries(), $0.heldDeliveries()) }
            let d = dispatcher.report
            try recordRun(
                MetaKey.lastRefill,
                [
                    ("refilled", report.refilled), ("at_maximum", report.atMaximum), ("not_due", report.notDue),
                    ("pending", pending + held), ("held", held),
                ], also: [("sent", sent), ("delivered", d.delivered), ("failed", d.failed), ("dead", d.dead)],
                began: began, delivery: delivery)
        }
        printer.err(
            "refill at \(now)\(dryRun ? " (dry run)" : ""): \(report.refilled) refilled, \(report.atMaximum) at the maximum, "
                + "\(report.notDue) not due")
        return (report, pending)
    }
}
