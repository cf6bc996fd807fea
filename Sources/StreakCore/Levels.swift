/// Levels by total XP (SPEC §9): level 1 from 0 XP, then one level more at each threshold.
public enum Levels {
    /// The level of a total: 1 plus the thresholds reached (`thresholds` strictly increasing).
    public static func level(xp: Int, thresholds: [Int]) -> Int {
        1 + thresholds.count { $0 <= xp }
    }

    /// The total XP at which the next level begins; nil at the top.
    public static func nextLevelXP(xp: Int, thresholds: [Int]) -> Int? {
        thresholds.first { $0 > xp }
    }

    /// When each level above 1 was reached: the first instant the running total of `gains`
    /// (instant, XP) reached its threshold. Gains in any order; several levels may share an instant.
    public static func reached(_ gains: [(at: Instant, xp: Int)], thresholds: [Int]) -> [LevelReached] {
        var result: [LevelReached] = []
        var total = 0
        var next = 0
        for gain in gains.sorted(by: { $0.at < $1.at }) {
            total += gain.xp
            while next < thresholds.count && thresholds[next] <= total {
                result.append(LevelReached(level: next + 2, at: gain.at))
                next += 1
            }
            if next == thresholds.count { break }
        }
        return result
    }
}

/// A level and the instant it was reached.
public struct LevelReached: Equatable, Sendable {
    public var level: Int
    public var at: Instant
    public init(level: Int, at: Instant) {
        self.level = level
        self.at = at
    }
}
