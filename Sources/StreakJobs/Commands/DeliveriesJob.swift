import Foundation
import StreakCore
import StreakStore

/// `streakd deliveries list|retry` (SPEC §12): the deliveries waiting or given up, and putting
/// the dead back to pending after the sink behind them is fixed. The next run sends them, each
/// asked SPEC §4 again first (`Recheck`): one no longer fresh is recorded expired, never sent.
extension Context {
    /// The states `deliveries list --state` takes; `failed` is pending after a failed attempt.
    public static let listedStates = ["pending", "failed", "dead"]

    /// The most `deliveries list` prints.
    static let deliveriesListed = 100_000

    public func listDeliveries(state: String?) throws {
        if let state, !Self.listedStates.contains(state) {
            throw StreakdError.usage(
                "--state: \(quoted(state)) is not a state; use \(Self.listedStates.joined(separator: ", "))")
        }
        let wanted: [DeliveryState] = state == "dead" ? [.dead] : state == nil ? [.pending, .dead] : [.pending]
        var records = try store.read { r in try wanted.flatMap { try r.deliveries($0, limit: Self.deliveriesListed) } }
        if state == "failed" { records = records.filter { $0.attempts > 0 } }
        for d in records {
            if printer.format == .json {
                printer.out(Self.deliveryJSON(d).text)
                continue
            }
            // Put back by `retry`: its attempts start again, its last one is still told.
            let fresh = d.lastAttempt == nil ? "not tried yet" : "put back, not tried since"
            let tried = d.attempts == 0 ? fresh : "\(d.attempts) attempt\(d.attempts == 1 ? "" : "s")"
            let last = d.lastAttempt.map { ", last \($0)" } ?? ""
            printer.out(
                "\(d.state.rawValue) \(d.sink) \(d.notification.key), \(tried)\(last)"
                    + (d.lastError.map { ": " + oneLine($0) } ?? ""))
        }
    }

    /// Puts the dead deliveries the options name back to pending; prints how many. `since` is a
    /// time as `log --since` takes it, in `localZone`: those given up (last tried) at or after it.
    public func retryDeliveries(sink: String?, kind: String?, user: String?, since: String?, localZone: Zone) throws {
        if let sink, !Self.isSinkName(sink) {
            throw StreakdError.usage(
                "--sink: \(quoted(sink)) is not a sink; use journal, desktop, hook:NAME or webhook:NAME")
        }
        if let user, let problem = Validate.userID(user) {
            throw StreakdError.usage("--user: \(quoted(user)) is not a user id; use \(problem)")
        }
        let configured = ["journal", "desktop"] + namedSinks
        if let sink, !configured.contains(sink) {
            throw StreakdError.data(
                "--sink: the configuration (\(config.source ?? "none")) has no \(quoted(sink)); "
                    + "use one of \(configured.joined(separator: ", "))")
        }
        var filter = DeadFilter(sink: sink, user: user)
        if let kind {
            guard let k = NotificationKind(rawValue: kind) else {
                throw StreakdError.usage("--kind: \(quoted(kind)) is not a kind; use \(NotificationKind.names)")
            }
            filter.kind = k
        }
        if let since {
            guard let at = TimeArgument.parse(since, now: now, zone: localZone, zones: zones) else {
                throw StreakdError.usage("--since: \(quoted(since)) is not a time; \(TimeArgument.rule)")
            }
            filter.since = at
        }
        let count = try store.write { w -> Int in
            if let user, try w.user(user) == nil { throw StreakdError.data("--user: unknown user \(quoted(user))") }
            return try w.reviveDead(filter)
        }
        printer.record(
            .object([("retried", .int(count))]),
            short: count == 1
                ? "1 dead delivery is pending again; the next tick sends it"
                : "\(count) dead deliveries are pending again; the next tick sends them")
    }

    /// A sink as deliveries name them: the journal, the desktop, or a configured hook or webhook.
    static func isSinkName(_ s: String) -> Bool {
        if s == "journal" || s == "desktop" { return true }
        for prefix in ["hook:", "webhook:"] where s.hasPrefix(prefix) { return s.count > prefix.count }
        return false
    }
}
