/// Freeze settings of one streak (SPEC §3).
public struct FreezeSettings: Equatable, Sendable {
    public var initial = 1
    public var max = 1
    public var minStreak = 3
    public var autoUse = true
    public init() {}
}

/// Per-streak settings (`[streaks.ID]` in streakd.toml).
public struct StreakSettings: Equatable, Sendable {
    public var goal = 1
    public var leewayHours = 0
    public var freeze = FreezeSettings()
    public init() {}
}

/// The goal and leeway in force from an instant on. A change of either applies
/// to dates that have not ended when streakd first sees it.
public struct SettingsEpoch: Equatable, Sendable {
    public var since: Instant
    public var goal: Int
    public var leewayHours: Int
    public init(since: Instant, goal: Int, leewayHours: Int) {
        self.since = since
        self.goal = goal
        self.leewayHours = leewayHours
    }
}

/// Answers "which goal and leeway were in force at this instant".
struct SettingsTimeline {
    let epochs: [SettingsEpoch]  // sorted by `since`, never empty

    init(epochs: [SettingsEpoch], current: StreakSettings, now: Instant) {
        var list = epochs.filter { $0.since <= now }.sorted { $0.since < $1.since }
        let last = list.last
        if last == nil || last!.goal != current.goal || last!.leewayHours != current.leewayHours {
            list.append(SettingsEpoch(since: now, goal: current.goal, leewayHours: current.leewayHours))
        }
        self.epochs = list
    }

    func at(_ instant: Instant) -> SettingsEpoch {
        var found = epochs[0]
        for e in epochs.dropFirst() where e.since <= instant { found = e }
        return found
    }
}
