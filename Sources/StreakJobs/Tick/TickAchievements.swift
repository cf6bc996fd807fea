import StreakCore
import StreakStore

/// Badges and levels in a run (SPEC §9): a check-in, an import or a zone change marks its
/// streak changed, so the next run plans it; the run then evaluates the user's achievements over
/// all their streaks and records each badge or level the ledger lacks, fresh (sent) within a day
/// of its due instant, else expired. Its key stands once ever, so two runs, or a user's two
/// changed streaks, record it once. A streak not changed since a run handled it earns nothing
/// new: an unchanged user is never evaluated, which keeps a busy quarter hour as it was.
extension Context {
    /// A changed streak in a plan: its user, its place among the plan's runs, and what was read.
    struct Changed {
        var user: User
        var run: Int
        var known: KnownStreak
    }

    /// Adds to `plan` the achievements of the users with a changed streak, tied to their first
    /// changed streak's run: recorded if the run claims that streak (else the run that does
    /// records them).
    func planAchievements(
        _ changed: [Changed], into plan: inout TickPlan, _ reader: some HistoryReading & ScheduleReading,
        epochs: inout [String: [SettingsEpoch]]
    ) throws {
        guard !changed.isEmpty else { return }
        var users: [String] = []
        var byUser: [String: [Changed]] = [:]
        for c in changed {
            if byUser[c.user.id] == nil { users.append(c.user.id) }
            byUser[c.user.id, default: []].append(c)
        }
        let facts = try reader.achievementFacts(of: users)
        // The users' other streaks, read for them all at once.
        var others: [DueStreak] = []
        for (user, f) in zip(users, facts) {
            others += f.streaks.filter { s in !byUser[user]!.contains { $0.known.streak == s.streak } }
        }
        var histories: [String: StreakHistory] = [:]
        for (s, read) in zip(others, try reader.dueHistories(of: others)) {
            guard let read else { continue }
            if epochs[s.streak] == nil { epochs[s.streak] = try reader.settingsEpochs(of: s.streak) }
            histories[s.user + "\u{0}" + s.streak] = try history(of: read.stored, epochs: epochs[s.streak]!)
        }
        for (user, f) in zip(users, facts) {
            let mine = byUser[user]!
            let streaks = try userStreaks(f, known: mine.map(\.known)) { list in
                list.map { histories[$0.user + "\u{0}" + $0.streak] }
            }
            let state = Achievements.evaluate(streaks, settings: config.achievements, at: now)
            for e in Achievements.events(state, now: now) {
                plan.notices.append(
                    (notification(e, user: mine[0].user, zones: mine[0].known.history), fresh: e.fresh))
                plan.of.append(mine[0].run)
            }
        }
    }
}
