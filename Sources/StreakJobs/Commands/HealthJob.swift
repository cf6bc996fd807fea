import StreakCore
import StreakStore

/// `streakd status --check` (SPEC §13): whether the store is being looked after, for a health
/// check or a monitoring script. Reads only, like `status`.
extension Context {
    /// A tick older than this is a problem: the timer fires every quarter hour, so three firings
    /// were missed (or failed).
    public static let healthTickAge: Int64 = 45 * 60
    /// A refill older than this is a problem: the timer fires daily, with two hours to spare.
    public static let healthRefillAge: Int64 = 26 * 3600
    /// A pending delivery whose notification was due longer ago than this is a problem.
    public static let healthPendingAge: Int64 = 3600

    /// One thing wrong: `check` names which (`dead`, `pending`, `tick`, `refill`), `count` how
    /// many deliveries (nil for the runs), `detail` says it for a person with what to do.
    public struct HealthProblem: Equatable, Sendable {
        public var check: String
        public var count: Int?
        public var detail: String
    }

    /// What `status --check` finds: the problems (none: healthy) and the last runs.
    public struct Health: Sendable {
        public var problems: [HealthProblem]
        public var lastTick: Instant?
        public var lastRefill: Instant?
        public var healthy: Bool { problems.isEmpty }
    }

    /// The checks of SPEC §13, as of `now`.
    public func health() throws -> Health {
        let (dead, late, tick, refill) = try store.read { r in
            (
                try r.deliveryCount(.dead), try r.pendingDeliveries(dueBefore: now - Self.healthPendingAge),
                try r.meta(MetaKey.lastTick).flatMap(Self.runSummary)?.at,
                try r.meta(MetaKey.lastRefill).flatMap(Self.runSummary)?.at
            )
        }
        var problems: [HealthProblem] = []
        if dead > 0 {
            problems.append(
                HealthProblem(
                    check: "dead", count: dead,
                    detail: "\(deliveries(dead)) given up (dead): `streakd log --dead` says why; the notifications "
                        + "were not received"))
        }
        if late > 0 {
            problems.append(
                HealthProblem(
                    check: "pending", count: late,
                    detail: "\(deliveries(late)) still pending more than an hour after the notification was due: "
                        + "`streakd log --failed` shows the failures; each tick tries again"))
        }
        problems += staleRun("tick", tick, limit: Self.healthTickAge, timer: "streakd-tick.timer")
        problems += staleRun("refill", refill, limit: Self.healthRefillAge, timer: "streakd-refill.timer")
        return Health(problems: problems, lastTick: tick, lastRefill: refill)
    }

    /// The command: prints each problem on a line of its own (or one line saying it is healthy)
    /// and answers whether it is healthy (the command then exits 0, else 1).
    public func healthCommand() throws -> Bool {
        let health = try health()
        if printer.format == .json {
            printer.out(
                JSON.object([
                    ("status", .string(health.healthy ? "healthy" : "unhealthy")), ("store", .string(store.location)),
                    (
                        "problems",
                        .array(
                            health.problems.map {
                                .object([
                                    ("check", .string($0.check)), ("count", $0.count.map { .int($0) } ?? .null),
                                    ("detail", .string($0.detail)),
                                ])
                            })
                    ),
                    ("last_tick", .optional(health.lastTick?.description)),
                    ("last_refill", .optional(health.lastRefill?.description)),
                ]).text)
        } else if health.healthy {
            printer.out(
                "healthy: store \(store.location); last tick \(ran(health.lastTick!)), last refill "
                    + ran(health.lastRefill!))
        } else {
            printer.out(health.problems.map { "\($0.check): \($0.detail)" }.joined(separator: "\n"))
        }
        return health.healthy
    }

    /// A problem when the job has not succeeded within `limit` seconds of now.
    func staleRun(_ job: String, _ last: Instant?, limit: Int64, timer: String) -> [HealthProblem] {
        let what = "`systemctl status \(timer)` and `journalctl -u streakd-\(job).service` say why"
        guard let last else {
            return [
                HealthProblem(check: job, count: nil, detail: "no \(job) has ever succeeded on this store: \(what)")
            ]
        }
        guard now - last > limit else { return [] }
        let span = limit % 3600 == 0 ? "\(limit / 3600) hours" : "\(limit / 60) minutes"
        return [
            HealthProblem(
                check: job, count: nil,
                detail: "no successful \(job) since \(ran(last)), over \(span) ago: \(what)")
        ]
    }

    /// `2026-11-21T10:45:00Z (15 min ago)`.
    func ran(_ at: Instant) -> String { "\(at) (\(Self.ago(now - at)))" }

    func deliveries(_ n: Int) -> String { n == 1 ? "1 delivery" : "\(n) deliveries" }
}
