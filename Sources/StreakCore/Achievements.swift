/// One of a user's streaks as achievements see it.
public struct UserStreak: Sendable {
    public var streak: String
    public var history: StreakHistory
    /// `meta[i]` is the metadata of `history.checkins[i]`; check-ins past its end have none.
    public var meta: [Metadata]
    /// `Engine.evaluate(history, at: now)` at the same `now`, when the caller has it already.
    public var state: StreakState?

    public init(streak: String, history: StreakHistory, meta: [Metadata] = [], state: StreakState? = nil) {
        self.streak = streak
        self.history = history
        self.meta = meta
        self.state = state
    }
}

/// How far a user is with one badge.
public struct BadgeProgress: Equatable, Sendable {
    public var badge: BadgeDefinition
    /// The longest streak (`streak_days`) or the count of check-ins.
    public var current: Int
    /// `min(current / value, 1)` as a whole percent, rounded down.
    public var progress: Int
    /// The instant of the check-in that reached 100 %; nil while locked.
    public var unlockedAt: Instant?

    public var value: Int { badge.value }

    /// Whole percent, rounded down, at most 100.
    public static func percent(current: Int, value: Int) -> Int {
        current >= value ? 100 : max(0, current) * 100 / max(1, value)
    }
}

/// A user's badges, XP and level as of one instant.
public struct AchievementState: Equatable, Sendable {
    /// In the order of the definitions.
    public var badges: [BadgeProgress]
    public var xp: Int
    public var level: Int
    /// The total XP at which the next level begins; nil at the top.
    public var nextLevelXP: Int?
    /// Each level above 1 the user reached, with the instant of the check-in that raised XP to it.
    public var levels: [LevelReached]
}

/// Badges, XP and levels (SPEC §9) as pure functions of a user's streak histories: no clock, no
/// store. Everything is decided in instant order from the check-ins as they finally stand, so
/// the order in which they arrived never matters. An instant a check-in carries ahead of `now`
/// (clock skew, up to `Engine.clockSkew`) counts as `now`, as the engine counts it at once.
public enum Achievements {
    public static func evaluate(_ streaks: [UserStreak], settings: AchievementSettings, at now: Instant)
        -> AchievementState
    {
        let states = streaks.map { $0.state ?? Engine.evaluate($0.history, at: now) }
        var runs = [StreakRuns?](repeating: nil, count: streaks.count)
        var counting = [Counting?](repeating: nil, count: streaks.count)
        var groups: [(streak: String?, requirement: BadgeDefinition.Requirement, instants: [Instant])] = []

        // The sorted instants of the check-ins a count badge counts; badges asking the same
        // (streak, requirement) share them.
        func countedInstants(_ badge: BadgeDefinition, included: [Int]) -> [Instant] {
            if let found = groups.first(where: { $0.streak == badge.streak && $0.requirement == badge.requirement }) {
                return found.instants
            }
            var instants: [Instant] = []
            for s in included {
                let c = counting[s] ?? Counting(streaks[s].history, now: now)
                counting[s] = c
                instants += c.instants(matching: badge.requirement, meta: streaks[s].meta)
            }
            instants.sort()
            groups.append((badge.streak, badge.requirement, instants))
            return instants
        }

        var badges: [BadgeProgress] = []
        for badge in settings.badges {
            let included = streaks.indices.filter { badge.streak == nil || streaks[$0].streak == badge.streak }
            let value = max(1, badge.value)  // the configuration allows no less
            var current = 0
            var unlocked: Instant?
            switch badge.requirement {
            case .streakDays:
                current = included.map { states[$0].longest }.max() ?? 0
                for i in included where states[i].longest >= value {
                    let r = runs[i] ?? StreakRuns(states[i])
                    runs[i] = r
                    if let t = r.earliest(value) { unlocked = min(unlocked ?? t, t) }
                }
            case .totalCheckins, .taggedCheckins:
                let instants = countedInstants(badge, included: included)
                current = instants.count
                if current >= value { unlocked = instants[value - 1] }
            }
            badges.append(
                BadgeProgress(
                    badge: badge, current: current,
                    progress: BadgeProgress.percent(current: current, value: value),
                    unlockedAt: unlocked.map { min($0, now) }))
        }

        // XP: each qualifying date at the check-in that made it qualify, each badge at its unlock.
        var gains: [(at: Instant, xp: Int)] = []
        gains.reserveCapacity(states.reduce(settings.badges.count) { $0 + $1.qualified.count })
        for state in states {
            for q in state.qualified { gains.append((min(q.at, now), settings.xpPerDay)) }
        }
        for b in badges { if let at = b.unlockedAt { gains.append((at, b.badge.xp)) } }
        let xp = gains.reduce(0) { $0 + $1.xp }
        return AchievementState(
            badges: badges, xp: xp, level: Levels.level(xp: xp, thresholds: settings.levelThresholds),
            nextLevelXP: Levels.nextLevelXP(xp: xp, thresholds: settings.levelThresholds),
            levels: Levels.reached(gains, thresholds: settings.levelThresholds))
    }

    /// A streak's counted check-ins (not backfilled, not ahead of `now` beyond the clock skew):
    /// their instants and their places in the history (and so in its metadata).
    struct Counting {
        var instants: [Instant] = []
        var indices: [Int] = []

        init(_ history: StreakHistory, now: Instant) {
            let cap = Int64(history.backfillDays) * Instant.day
            let checkins = history.checkins
            instants.reserveCapacity(checkins.count)
            indices.reserveCapacity(checkins.count)
            // Fields read in place: copying each CheckIn would retain its zone and id.
            for i in checkins.indices
            where checkins[i].instant <= now + Engine.clockSkew && checkins[i].instant >= checkins[i].storedAt - cap {
                instants.append(checkins[i].instant)
                indices.append(i)
            }
        }

        func instants(matching requirement: BadgeDefinition.Requirement, meta: [Metadata]) -> [Instant] {
            guard case .taggedCheckins(let wanted) = requirement else { return instants }
            let pairs = Array(wanted)
            var result: [Instant] = []
            for (k, i) in indices.enumerated() where i < meta.count && !meta[i].isEmpty {
                if pairs.allSatisfy({ p in meta[i].contains { $0.key == p.key && $0.value == p.value } }) {
                    result.append(instants[k])
                }
            }
            return result
        }
    }
}

/// A badge the rules call for announcing (SPEC §9), before anyone delivers it.
public struct AchievementEvent: Equatable, Sendable {
    /// `badgeUnlocked` or `levelUp`.
    public var kind: NotificationKind
    /// The badge unlocked (`badge_unlocked`).
    public var badge: BadgeDefinition?
    /// The level reached (`level_up`).
    public var level: Int?
    /// The unlock, or the check-in that raised XP to the level.
    public var due: Instant
    /// Within `Achievements.freshWindow` of `due`: sent; else recorded expired.
    public var fresh: Bool

    /// The badge's id, or the level as a number.
    public var subject: String { badge?.id ?? level.map(String.init) ?? "" }

    /// Once ever per badge, once per level: `badge_unlocked/USER/BADGE`, `level_up/USER/LEVEL`.
    public func key(user: String) -> String { Notification.achievementKey(kind, user: user, subject: subject) }
}

extension Achievements {
    /// A `badge_unlocked` or `level_up` is fresh this long after its due instant.
    public static let freshWindow: Int64 = 24 * Instant.hour

    /// Every badge unlocked and level reached, in due order (at one instant, badges before the
    /// levels their XP leads to). Each key stands once (a badge once ever, a level once), so a run
    /// records those whose key the ledger lacks; a backdated check-in may move a due instant
    /// earlier but never makes a second event for a key. An import of old history finds them stale.
    public static func events(_ state: AchievementState, now: Instant) -> [AchievementEvent] {
        var result: [AchievementEvent] = []
        for b in state.badges {
            if let at = b.unlockedAt {
                result.append(
                    AchievementEvent(kind: .badgeUnlocked, badge: b.badge, due: at, fresh: now <= at + freshWindow))
            }
        }
        for l in state.levels {
            result.append(AchievementEvent(kind: .levelUp, level: l.level, due: l.at, fresh: now <= l.at + freshWindow))
        }
        // A stable sort: badges stay in definition order, levels in level order.
        return result.enumerated().sorted { a, b in
            if a.element.due != b.element.due { return a.element.due < b.element.due }
            return a.offset < b.offset
        }.map(\.element)
    }
}
