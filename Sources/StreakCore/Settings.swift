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
    /// Weekdays on which the streak rests (SPEC §14): bridged, neither missed nor counted.
    public var restDays = RestDays()
    public init() {}
}

/// A set of ISO weekdays (Monday 1 … Sunday 7), as one bit each: `[streaks.ID] rest_days`.
public struct RestDays: Equatable, Hashable, Sendable {
    public var bits: UInt8
    public init(bits: UInt8 = 0) { self.bits = bits & 0x7f }

    /// The days of `names`, English weekday names in any case, three letters or full; nil when
    /// one is not a weekday.
    public init?(names: [String]) {
        var bits: UInt8 = 0
        for name in names {
            guard let i = Self.weekday(name) else { return nil }
            bits |= 1 << UInt8(i - 1)
        }
        self.init(bits: bits)
    }

    public static let fullNames = ["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"]

    /// 1 (Monday) … 7 (Sunday) for a weekday's name, three letters or full, any case.
    public static func weekday(_ name: String) -> Int? {
        let n = name.lowercased()
        for (i, full) in fullNames.enumerated() where n == full || n == String(full.prefix(3)) { return i + 1 }
        return nil
    }

    public var isEmpty: Bool { bits == 0 }

    public func contains(_ date: LocalDate) -> Bool { bits >> UInt8(date.isoWeekday - 1) & 1 == 1 }

    /// The days' three-letter names, Monday first (`["sat", "sun"]`).
    public var names: [String] {
        (0..<7).filter { bits >> UInt8($0) & 1 == 1 }.map { String(Self.fullNames[$0].prefix(3)) }
    }
}

/// The goal, leeway and rest days in force from an instant on. A change of any applies to dates
/// that have not ended when streakd first sees it.
public struct SettingsEpoch: Equatable, Sendable {
    public var since: Instant
    public var goal: Int
    public var leewayHours: Int
    public var restDays: RestDays
    public init(since: Instant, goal: Int, leewayHours: Int, restDays: RestDays = RestDays()) {
        self.since = since
        self.goal = goal
        self.leewayHours = leewayHours
        self.restDays = restDays
    }
}

/// Answers "which goal, leeway and rest days were in force at this instant".
struct SettingsTimeline {
    let epochs: [SettingsEpoch]  // sorted by `since`, never empty

    init(epochs: [SettingsEpoch], current: StreakSettings, now: Instant) {
        var list = epochs.filter { $0.since <= now }.sorted { $0.since < $1.since }
        let last = list.last
        if last == nil || last!.goal != current.goal || last!.leewayHours != current.leewayHours
            || last!.restDays != current.restDays
        {
            list.append(
                SettingsEpoch(
                    since: now, goal: current.goal, leewayHours: current.leewayHours, restDays: current.restDays))
        }
        self.epochs = list
    }

    func at(_ instant: Instant) -> SettingsEpoch {
        var found = epochs[0]
        for e in epochs.dropFirst() where e.since <= instant { found = e }
        return found
    }
}
