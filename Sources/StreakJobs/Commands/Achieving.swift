import StreakCore
import StreakStore

/// A user's badges, XP and level (SPEC §9) from the store: what `status`, `badges` and `tick`
/// evaluate. The rules are StreakCore's `Achievements`; this reads what they need.
extension Context {
    /// One of a user's streaks as a caller read (and evaluated, `state`) it already.
    struct KnownStreak {
        var streak: String
        var history: StreakHistory
        var state: StreakState?
    }

    /// Every streak of the user as achievements see it, with its check-ins' metadata: the ones
    /// in `known` as they are, the others read by `read` (nil: gone meanwhile, left out).
    func userStreaks(
        _ facts: AchievementFacts, known: [KnownStreak], read: ([DueStreak]) throws -> [StreakHistory?]
    ) throws -> [UserStreak] {
        var result = known.map { UserStreak(streak: $0.streak, history: $0.history, state: $0.state) }
        let others = facts.streaks.filter { s in !known.contains { $0.streak == s.streak } }
        for (s, history) in zip(others, try read(others)) {
            if let history { result.append(UserStreak(streak: s.streak, history: history)) }
        }
        for i in result.indices {
            let tagged = facts.tagged.filter { $0.streak == result[i].streak }
            if !tagged.isEmpty { result[i].meta = Self.meta(of: result[i].history.checkins, tagged) }
        }
        return result.sorted { $0.streak < $1.streak }
    }

    /// `meta[i]` for `checkins[i]`: both in instant order, matched by instant (two check-ins at
    /// one instant count alike, whichever carries the metadata).
    static func meta(of checkins: [CheckIn], _ tagged: [TaggedCheckin]) -> [Metadata] {
        var meta = [Metadata](repeating: [], count: checkins.count)
        var j = 0
        for i in checkins.indices {
            while j < tagged.count && tagged[j].instant < checkins[i].instant { j += 1 }
            guard j < tagged.count, tagged[j].instant == checkins[i].instant else { continue }
            meta[i] = storedMeta(tagged[j].meta)
            j += 1
        }
        return meta
    }

    /// A check-in's metadata from the JSON object streakd stored (none if it does not read).
    static func storedMeta(_ text: String) -> Metadata {
        var text = text
        return text.withUTF8 { bytes in
            guard case .success(let object) = JSONReader.object(bytes),
                case .success(let meta) = JSONInput.meta(.object(object))
            else { return [] }
            return meta
        }
    }

    /// One user's achievements as of now, read in `reader` (`status`, `badges`).
    func achievements(of user: User, in reader: some HistoryReading & ScheduleReading) throws -> AchievementState {
        Achievements.evaluate(try achievementStreaks(of: user, in: reader), settings: config.achievements, at: now)
    }

    /// What a user's achievements are evaluated from, read in `reader`: their streaks as
    /// `userStreaks` gives them. `known`: one of them the caller read already, taken as it is
    /// (when the store lists it).
    func achievementStreaks(
        of user: User, in reader: some HistoryReading & ScheduleReading, known: KnownStreak? = nil
    ) throws -> [UserStreak] {
        try achievementStreaks(of: [(user, known)], in: reader)[0]
    }

    /// The same for several users (each once) at once: their facts in one read. Their other
    /// streaks' histories are read from the tables, one by one, as every reader's answer is
    /// (`status`, the API): not from a run's packed copy, which a damaged store may have wrong
    /// while its tables are right (`PostgresCheckTests`). Most users have one streak, the known.
    func achievementStreaks(
        of users: [(user: User, known: KnownStreak?)], in reader: some HistoryReading & ScheduleReading
    ) throws -> [[UserStreak]] {
        let facts = try reader.achievementFacts(of: users.map(\.user.id))
        return try zip(users, facts).map { u, f in
            let known = u.known.map { k in f.streaks.contains { $0.streak == k.streak } ? [k] : [] } ?? []
            return try userStreaks(f, known: known) { list in
                try list.map { try history(of: u.user, streak: $0.streak, in: reader) }
            }
        }
    }

    /// The notification of an achievement, in the user's zone at its due instant and language.
    func notification(_ e: AchievementEvent, user: User, zones history: StreakHistory) -> Notification {
        let zone = history.zone(at: e.due)
        let date = zone.date(of: e.due)
        let (text, title) = config.messages.render(e, date: date, tag: user.language)
        return Notification(
            kind: e.kind, user: user.id, streak: "", localDate: date, due: e.due, timezone: zone.identifier,
            localDue: local(e.due, in: zone), streakLength: e.badge?.value ?? e.level ?? 0, message: text,
            title: title, badge: e.badge?.id, level: e.level)
    }
}
