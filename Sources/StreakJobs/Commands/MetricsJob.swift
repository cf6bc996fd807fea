import Foundation
import StreakCore
import StreakDelivery
import StreakStore

/// `streakd metrics` and `[metrics] textfile` (SPEC §13): the store's state as Prometheus metrics,
/// read in one transaction when asked. `serve` answers `GET /metrics` with the same text
/// (`metricsText`), adding its own request counts.
extension Context {
    /// The metrics as text: Prometheus's exposition format, or OpenMetrics 1.0 (`openMetrics`,
    /// for an HTTP client whose `Accept` asks for it). `extra`: families the caller keeps itself
    /// (`serve`'s `streakd_api_requests_total`), after streakd's own.
    public func metricsText(openMetrics: Bool, extra: [MetricFamily] = []) throws -> String {
        MetricsText.render(try metricFamilies() + extra, openMetrics: openMetrics)
    }

    /// The families streakd reports, from the store.
    public func metricFamilies() throws -> [MetricFamily] {
        let (notifications, deliveries, users, streaks, tick, refill) = try store.read { r in
            (
                try r.notificationCounts(), try r.deliveryCounts(), try r.userCounts().users, try r.streakCount(),
                try r.meta(MetaKey.lastTick), try r.meta(MetaKey.lastRefill)
            )
        }
        // Every kind and outcome, and every configured sink and state, has a series (0 until there
        // is one): an alert on a rate then sees the series from the start.
        var sent: [String: [String: Int]] = [:]
        for kind in NotificationKind.allCases { sent[kind.rawValue] = ["sent": 0, "expired": 0] }
        for c in notifications { sent[c.first, default: [:]][c.second] = c.count }
        var held: [String: [String: Int]] = [:]
        for sink in sinkNames { held[sink] = [:] }
        for c in deliveries { held[c.first, default: [:]][c.second] = c.count }
        let states = ["pending", "delivered", "expired", "dead"]

        func last(_ text: String?) -> (at: Double, seconds: Double) {
            guard let text, let run = Self.runSummary(text) else { return (0, 0) }
            return (Double(run.at.seconds), Double(Self.runDurationMS(text) ?? 0) / 1000)
        }
        let (tickAt, tickSeconds) = last(tick)
        let (refillAt, refillSeconds) = last(refill)
        return [
            MetricFamily(
                "streakd_notifications_total", .counter,
                help: "Notifications recorded in the ledger, by kind and outcome (sent, or expired unsent).",
                samples: sent.keys.sorted().flatMap { kind in
                    ["sent", "expired"].map { ([("kind", kind), ("outcome", $0)], Double(sent[kind]?[$0] ?? 0)) }
                }),
            MetricFamily(
                "streakd_deliveries", .gauge, help: "Deliveries of notifications to each sink, by state.",
                samples: held.keys.sorted().flatMap { sink in
                    states.map { ([("sink", sink), ("state", $0)], Double(held[sink]?[$0] ?? 0)) }
                }),
            MetricFamily("streakd_users", .gauge, help: "Users in the store.", value: Double(users)),
            MetricFamily(
                "streakd_streaks", .gauge, help: "Streaks (a user's streak with a schedule) in the store.",
                value: Double(streaks)),
            MetricFamily(
                "streakd_last_tick_success_timestamp_seconds", .gauge,
                help: "When the last tick that ended (exit 0 or 75) ran, as Unix time; 0 if none has.",
                value: tickAt),
            MetricFamily(
                "streakd_last_refill_success_timestamp_seconds", .gauge,
                help: "When the last refill that ended (exit 0 or 75) ran, as Unix time; 0 if none has.",
                value: refillAt),
            MetricFamily(
                "streakd_tick_duration_seconds", .gauge, help: "How long the last tick took.", value: tickSeconds),
            MetricFamily(
                "streakd_refill_duration_seconds", .gauge, help: "How long the last refill took.",
                value: refillSeconds),
        ]
    }

    /// The sinks the configuration has (their names as deliveries carry them).
    var sinkNames: [String] {
        ["journal"] + (config.desktopUsers.isEmpty ? [] : ["desktop"]) + namedSinks
    }

    /// The configuration's hooks and webhooks, as deliveries name them (`hook:NAME`, `webhook:NAME`).
    var namedSinks: [String] {
        config.hooks.map { "hook:" + $0.name } + config.webhooks.map { "webhook:" + $0.name }
    }

    /// A run's `duration_ms` as recorded (runs recorded before it was: nil).
    static func runDurationMS(_ text: String) -> Int? {
        guard let data = text.data(using: .utf8),
            let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any]
        else { return nil }
        return object["duration_ms"] as? Int
    }

    /// `streakd metrics [--openmetrics]`.
    public func metricsCommand(openMetrics: Bool = false) throws {
        printer.out(String(try metricsText(openMetrics: openMetrics).dropLast()))
    }

    /// After a `tick` or `refill`: the metrics written to `[metrics] textfile`, atomically (a
    /// temporary file in the same folder, renamed over it), for node_exporter's textfile
    /// collector. A failure is a warning: the run itself went well, and the file's age (and the
    /// last success timestamp in it) tells the monitoring.
    func writeMetricsTextfile() {
        guard let path = config.metricsTextfile else { return }
        do {
            try Self.writeAtomically(try metricsText(openMetrics: false), to: path)
        } catch {
            printer.warn("[metrics] textfile \(path): not written: \(error)")
        }
    }

    /// Writes `text` to a temporary file beside `path` (`.NAME.PID.tmp`: node_exporter reads only
    /// `*.prom`), mode 0644, then renames it over `path`: a reader sees the old file or the new
    /// one, never a part.
    static func writeAtomically(_ text: String, to path: String) throws {
        let slash = path.lastIndex(of: "/")
        let folder = slash.map { String(path[..<$0]) } ?? "."
        let name = slash.map { String(path[path.index(after: $0)...]) } ?? path
        let temporary = "\(folder.isEmpty ? "" : folder)/.\(name).\(getpid()).tmp"
        let fd = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0o644)
        guard fd >= 0 else { throw StreakdError(.unavailable, "cannot create \(temporary): \(errnoText())") }
        var failure: String?
        let bytes = Array(text.utf8)
        var done = 0
        while done < bytes.count && failure == nil {
            let n = bytes[done...].withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
            if n < 0 && errno != EINTR { failure = "cannot write \(temporary): \(errnoText())" }
            if n > 0 { done += n }
        }
        // The mode despite the umask (the units' is 0077): node_exporter runs as a user of its own.
        if failure == nil && fchmod(fd, 0o644) != 0 { failure = "cannot set the mode of \(temporary): \(errnoText())" }
        if close(fd) != 0 && failure == nil { failure = "cannot write \(temporary): \(errnoText())" }
        if failure == nil && rename(temporary, path) != 0 { failure = "cannot rename it to \(path): \(errnoText())" }
        if let failure {
            unlink(temporary)
            throw StreakdError(.unavailable, failure)
        }
    }
}

private func errnoText() -> String { String(cString: strerror(errno)) }
