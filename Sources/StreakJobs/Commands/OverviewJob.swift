import Foundation
import StreakCore
import StreakStore

/// `streakd status` without an ID: the whole store at a glance, as `systemctl status` shows a
/// unit: users and streaks, who is at risk in the next 24 hours, deliveries waiting or given up,
/// and the last tick and refill (from the store's meta).
extension Context {
    /// How many of each list are shown; the counts say how many there are.
    static let overviewListed = 10

    public func overview(store location: String) throws {
        let listed = Self.overviewListed
        let (id, counts, streaks, pending, dead, waiting, gaveUp, tick, refill) = try store.read { r in
            (
                try r.storeID(), try r.userCounts(), try r.streakCount(), try r.deliveryCount(.pending),
                try r.deliveryCount(.dead), try r.deliveries(.pending, limit: listed),
                try r.deliveries(.dead, limit: listed),
                try r.meta(MetaKey.lastTick), try r.meta(MetaKey.lastRefill)
            )
        }
        let atRisk = try upcoming(through: now + 24 * Instant.hour).filter { $0.kind == .atRisk }
        let lastTick = tick.flatMap(Self.runSummary)
        let lastRefill = refill.flatMap(Self.runSummary)

        if printer.format == .json {
            printer.out(
                JSON.object([
                    ("store", .string(location)), ("store_id", .optional(id)), ("users", .int(counts.users)),
                    ("users_reminded", .int(counts.reminded)), ("streaks", .int(streaks)),
                    ("at_risk", .array(atRisk.map(\.json))), ("pending", .int(pending)), ("dead", .int(dead)),
                    ("pending_deliveries", .array(waiting.map(Self.deliveryJSON))),
                    ("dead_deliveries", .array(gaveUp.map(Self.deliveryJSON))),
                    ("last_tick", tick.flatMap(Self.parsedJSON) ?? .null),
                    ("last_refill", refill.flatMap(Self.parsedJSON) ?? .null),
                ]).text)
            return
        }
        let zones = self.zones
        var lines = ["● streakd store \(location)"]
        lines.append("     Identity: \(id ?? "none yet (given by the next run of this streakd)")")
        lines.append(
            "        Users: \(counts.users) (\(counts.reminded) with reminders), \(streaks) streak\(streaks == 1 ? "" : "s")"
        )
        lines.append("      At risk: \(atRisk.count) in the next 24 h" + (atRisk.isEmpty ? "" : ":"))
        for n in atRisk.prefix(listed) {
            let local = (try? zones.stored(n.timezone)).map { self.local(n.due, in: $0) } ?? n.localDue
            lines.append(
                "               \(n.user)/\(n.streak), \(days(n.streakLength)), reminder at \(local) (\(n.due))")
        }
        if atRisk.count > listed {
            lines.append("               and \(atRisk.count - listed) more (streakd preview --kind at_risk)")
        }
        lines.append("   Deliveries: \(pending) pending, \(dead) dead")
        for d in waiting + gaveUp {
            let tried = d.attempts == 0 ? "not tried yet" : "\(d.attempts) attempt\(d.attempts == 1 ? "" : "s")"
            lines.append(
                "               \(d.state.rawValue) \(d.sink) \(d.notification.key), \(tried)"
                    + (d.lastError.map { ": " + oneLine($0) } ?? ""))
        }
        if pending > waiting.count || dead > gaveUp.count {
            lines.append("               and more (streakd log --failed)")
        }
        lines.append(
            "    Last tick: " + (lastTick.map(describe) ?? "never (streakd-tick.timer runs it every quarter hour)"))
        lines.append("  Last refill: " + (lastRefill.map(describe) ?? "never (streakd-refill.timer runs it daily)"))
        printer.out(lines.joined(separator: "\n"))
    }

    /// A run's summary as recorded: when, and its counts in the order written.
    typealias RunSummary = (at: Instant, counts: [(String, Int)])

    static func runSummary(_ text: String) -> RunSummary? {
        guard let data = text.data(using: .utf8),
            let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any],
            let at = (object["at"] as? String).flatMap(RFC3339.parse)
        else { return nil }
        // The keys in the order the run wrote them.
        let order = [
            "sent", "expired", "delivered", "failed", "dead", "retried", "refilled", "at_maximum", "not_due",
            "pending", "held", "streaks",
        ]
        return (at, order.compactMap { key in (object[key] as? Int).map { (key, $0) } })
    }

    static func parsedJSON(_ text: String) -> JSON? {
        guard let summary = runSummary(text) else { return nil }
        return .object([("at", .string(summary.at.description))] + summary.counts.map { ($0.0, .int($0.1)) })
    }

    /// `2026-11-21T10:45:00Z (15 min ago): 3 sent, 0 expired, …`.
    func describe(_ run: RunSummary) -> String {
        let labels = ["at_maximum": "at the maximum", "not_due": "not due", "held": "held by another run"]
        // What another run held is worth a word only when there was some.
        let counts = run.counts.filter { $0.0 != "held" || $0.1 > 0 }.map { "\($0.1) \(labels[$0.0] ?? $0.0)" }
        return "\(run.at) (\(Self.ago(now - run.at))): " + counts.joined(separator: ", ")
    }

    /// `15 min ago`, `3 h 5 min ago`, `2 days ago`; a time ahead of now (a pinned --now) says so.
    static func ago(_ seconds: Int64) -> String {
        if seconds < 0 { return "after now" }
        if seconds < 60 { return "\(seconds) s ago" }
        if seconds < 3600 { return "\(seconds / 60) min ago" }
        if seconds < 86400 { return "\(seconds / 3600) h \(seconds / 60 % 60) min ago" }
        return days(Int(seconds / 86400)) + " ago"
    }

    static func deliveryJSON(_ d: DeliveryRecord) -> JSON {
        .object([
            ("key", .string(d.notification.key)), ("sink", .string(d.sink)), ("state", .string(d.state.rawValue)),
            ("attempts", .int(d.attempts)), ("last_attempt", .optional(d.lastAttempt?.description)),
            ("error", .optional(d.lastError)),
        ])
    }
}
