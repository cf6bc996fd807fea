import StreakCore
import StreakDelivery

/// The effective configuration (`streakd.toml`), defaults filled in.
public struct Config: Equatable, Sendable {
    /// Check-ins older than this many days when first stored never count.
    public var backfillDays = 90
    /// Freeze settings for every streak without its own.
    public var freeze = FreezeSettings()
    /// Streak lengths that earn an `at_risk` reminder.
    public var reminderDays: [Int] = [5, 7, 14]
    /// If set, an `at_risk` is sent only this long after its due instant.
    public var maxLate: Int64?
    /// `reminders.usual_earliest|usual_latest` (SPEC §14): the usual hour kept within them,
    /// seconds after local midnight, each on the quarter hour.
    public var usualEarliest = 8 * 3600
    public var usualLatest = 21 * 3600
    /// The streakd users whose notifications go to this desktop's session bus (`[desktop] users`).
    public var desktopUsers: [String] = []
    /// Hook commands (`[[hooks]]`), run once per notification.
    public var hooks: [HookCommand] = []
    /// Webhooks (`[[webhooks]]`, SPEC §12), each notification POSTed once to each.
    public var webhooks: [WebhookTarget] = []
    /// Journal pacing (`[journal]`): entries per interval (0: no pacing) and the interval in seconds.
    public var journalBurst = 9_500
    public var journalInterval = 30
    /// A run's lease on its deliveries (`[runs] lease_seconds`), before its longest hook time-out
    /// is added: how long after its last heartbeat another run may take them over.
    public var leaseSeconds = 300
    /// Where every `tick` and `refill` also writes the metrics (`[metrics] textfile`), if anywhere.
    public var metricsTextfile: String?
    /// Pause limits (`[pause]`, SPEC §14).
    public var pause = PauseLimits()
    /// Repair limits (`[repair]`, SPEC §14).
    public var repair = RepairLimits()
    /// Settings by streak id; others use the defaults.
    public var streaks: [String: StreakSettings] = [:]
    /// Badges, XP and levels (`[[badges]]`, `[xp]`, `[levels]`).
    public var achievements = AchievementSettings()
    /// Messages by language (`[messages]`, `[messages.LANG]`).
    public var messages = MessageBook()
    /// `streakd serve`'s settings (`[api]`).
    public var api = APISettings()
    /// The file it came from, or nil for the built-in defaults.
    public var source: String?

    public init() {}

    public func settings(for streak: String) -> StreakSettings {
        if let s = streaks[streak] { return s }
        var s = StreakSettings()
        s.freeze = freeze
        return s
    }

    /// The effective configuration as TOML.
    public var toml: String {
        var lines = [
            "# effective configuration" + (source.map { " from " + $0 } ?? " (built-in defaults)"),
            "[import]", "backfill_days = \(backfillDays)", "",
            "[freeze]",
        ]
        // No badges at all is a top-level key, which TOML takes only before the first table.
        if achievements.badges.isEmpty { lines.insert("badges = []", at: 1) }
        lines += Config.freezeLines(freeze)
        lines += ["", "[reminders]", "days = [\(reminderDays.map(String.init).joined(separator: ", "))]"]
        if let maxLate { lines.append("max_late = \"\(DurationText.text(maxLate))\"") }
        lines.append("usual_earliest = \"\(Validate.wallTimeText(usualEarliest))\"")
        lines.append("usual_latest = \"\(Validate.wallTimeText(usualLatest))\"")
        lines += ["", "[desktop]", "users = [\(desktopUsers.map { JSON.string($0).text }.joined(separator: ", "))]"]
        lines += ["", "[journal]", "burst = \(journalBurst)", "interval_seconds = \(journalInterval)"]
        lines += ["", "[runs]", "lease_seconds = \(leaseSeconds)"]
        lines += [""] + api.tomlLines
        if let metricsTextfile { lines += ["", "[metrics]", "textfile = \(JSON.string(metricsTextfile).text)"] }
        lines += ["", "[pause]", "max_days = \(pause.maxDays)", "days_per_year = \(pause.daysPerYear)"]
        lines += ["", "[repair]", "window_hours = \(repair.windowHours)", "per_30_days = \(repair.per30Days)"]
        for id in streaks.keys.sorted() {
            let s = streaks[id]!
            lines += ["", "[streaks.\(id)]", "goal = \(s.goal)", "leeway_hours = \(s.leewayHours)"]
            lines.append("rest_days = [\(s.restDays.names.map { "\"\($0)\"" }.joined(separator: ", "))]")
            lines += ["", "[streaks.\(id).freeze]"] + Config.freezeLines(s.freeze)
        }
        for h in hooks {
            lines += ["", "[[hooks]]", "name = \(JSON.string(h.name).text)"]
            lines.append("command = [\(h.argv.map { JSON.string($0).text }.joined(separator: ", "))]")
            lines.append("timeout_seconds = \(Int(h.timeout))")
            lines += ["concurrency = \(h.concurrency)", "batch = \(h.batch)"]
            if let kinds = h.kinds {
                lines.append("kinds = [\(kinds.map(\.rawValue).sorted().map { "\"\($0)\"" }.joined(separator: ", "))]")
            }
        }
        lines += webhookLines
        lines += achievementLines
        lines += messages.tomlLines
        return lines.joined(separator: "\n")
    }

    static func freezeLines(_ f: FreezeSettings) -> [String] {
        ["initial = \(f.initial)", "max = \(f.max)", "min_streak = \(f.minStreak)", "auto_use = \(f.autoUse)"]
    }

    public var json: JSON {
        func freezeJSON(_ f: FreezeSettings) -> JSON {
            .object([
                ("initial", .int(f.initial)), ("max", .int(f.max)), ("min_streak", .int(f.minStreak)),
                ("auto_use", .bool(f.autoUse)),
            ])
        }
        let streakItems: [(String, JSON)] = streaks.keys.sorted().map { id in
            let s = streaks[id]!
            return (
                id,
                .object([
                    ("goal", .int(s.goal)), ("leeway_hours", .int(s.leewayHours)),
                    ("rest_days", .array(s.restDays.names.map { .string($0) })), ("freeze", freezeJSON(s.freeze)),
                ])
            )
        }
        var items: [(String, JSON)] = [
            ("source", .optional(source)),
            ("import", .object([("backfill_days", .int(backfillDays))])),
            ("freeze", freezeJSON(freeze)),
            (
                "reminders",
                .object([
                    ("days", .array(reminderDays.map { .int($0) })),
                    ("max_late", maxLate.map { .string(DurationText.text($0)) } ?? .null),
                    ("usual_earliest", .string(Validate.wallTimeText(usualEarliest))),
                    ("usual_latest", .string(Validate.wallTimeText(usualLatest))),
                ])
            ),
            ("desktop", .object([("users", .array(desktopUsers.map { .string($0) }))])),
            (
                "hooks",
                .array(
                    hooks.map { h in
                        .object([
                            ("name", .string(h.name)), ("command", .array(h.argv.map { .string($0) })),
                            ("timeout_seconds", .int(Int(h.timeout))), ("concurrency", .int(h.concurrency)),
                            ("batch", .int(h.batch)),
                            ("kinds", h.kinds.map { .array($0.map(\.rawValue).sorted().map { .string($0) }) } ?? .null),
                        ])
                    })
            ),
            ("webhooks", webhooksJSON),
            ("journal", .object([("burst", .int(journalBurst)), ("interval_seconds", .int(journalInterval))])),
            ("runs", .object([("lease_seconds", .int(leaseSeconds))])), ("api", api.json),
            ("pause", .object([("max_days", .int(pause.maxDays)), ("days_per_year", .int(pause.daysPerYear))])),
            ("repair", .object([("window_hours", .int(repair.windowHours)), ("per_30_days", .int(repair.per30Days))])),
            ("streaks", .object(streakItems)),
            ("xp", xpJSON), ("levels", levelsJSON), ("badges", badgesJSON), ("messages", messages.json),
        ]
        if let metricsTextfile {
            items.insert(("metrics", .object([("textfile", .string(metricsTextfile))])), at: items.count - 5)
        }
        return .object(items)
    }
}

/// `[pause]`: how long one pause, and how many paused dates within any 365 (SPEC §14).
public struct PauseLimits: Equatable, Sendable {
    public var maxDays = 30
    public var daysPerYear = 60
    public init() {}
}

/// `[repair]`: how long after a break, and how many within 720 hours (SPEC §14).
public struct RepairLimits: Equatable, Sendable {
    public var windowHours = 48
    public var per30Days = 1
    public init() {}
}
