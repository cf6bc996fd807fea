import StreakCore
import StreakStore

/// What `storeCheckins` did with one input.
enum CheckinStored {
    /// No user of that id (or no user id at all).
    case unknownUser
    /// The rules refused it: each field (as the input names it) and what would be valid; one at least.
    case refused([FieldProblem])
    case stored(CheckinOutcome)
}

/// A check-in `storeCheckins` stored, or found stored already (an event id's replay), with what
/// its answer shows.
struct CheckinOutcome {
    /// The user as the transaction sees them after the check-in (a usual hour may have moved).
    var user: User
    /// Whether it was stored now; else its event id was stored already.
    var stored: Bool
    var streak: String
    /// The streak's history as the transaction sees it after the check-in.
    var history: StreakHistory
    /// The user's streaks as achievements take them (`achievementStreaks`), when asked for.
    var streaks: [UserStreak]
}

extension Context {
    /// Checks and stores check-ins in the caller's transaction, as `checkin` and the API's
    /// check-ins (one, or the ones that wait together: `WriteGroups`) do, each answered as if
    /// they had come one after another: a user's inputs are taken in rounds, each round holding
    /// a user once (an event id given twice: the first stored, the other a replay). A round is
    /// one set-based step whatever its size: its users read and locked in id order
    /// (`lockUsers`: two writers at once wait for each other rather than deadlock), its rows
    /// inserted in one statement, the settings in force noted, the new rows' streaks planned at
    /// once (for `preview`; the next tick still looks at them afresh), and what the answers show
    /// read together (`achievements`: the users' achievement streaks too). A usual user
    /// (SPEC §14) has their hour worked out again, and when it moved every streak of theirs is
    /// planned. `names`: the fields as the inputs spell them, for messages. `prepare`: an input
    /// made ready once its user is read (`checkin --at` in the user's zone).
    func storeCheckins(
        _ inputs: [CheckinInput], names: [String: String], achievements: Bool = false, in w: any StoreWriter,
        prepare: (CheckinInput, User) throws -> CheckinInput = { input, _ in input }
    ) throws -> [CheckinStored] {
        var rounds: [[Int]] = []
        var seen: [String: Int] = [:]
        for (i, input) in inputs.enumerated() {
            let k = seen[input.user, default: 0]
            seen[input.user] = k + 1
            if k == rounds.count { rounds.append([]) }
            rounds[k].append(i)
        }
        var result = [CheckinStored](repeating: .unknownUser, count: inputs.count)
        for round in rounds {
            let stored = try storeRound(
                round.map { inputs[$0] }, names: names, achievements: achievements, in: w, prepare: prepare)
            for (i, s) in zip(round, stored) { result[i] = s }
        }
        return result
    }

    /// One round of `storeCheckins`: inputs of distinct users.
    private func storeRound(
        _ inputs: [CheckinInput], names: [String: String], achievements: Bool, in w: any StoreWriter,
        prepare: (CheckinInput, User) throws -> CheckinInput
    ) throws -> [CheckinStored] {
        var result = [CheckinStored](repeating: .unknownUser, count: inputs.count)
        var users: [String: User] = [:]
        for user in try w.lockUsers(inputs.map(\.user).filter { Validate.userID($0) == nil }) { users[user.id] = user }
        let rules = CheckinRules(zones: zones, now: now, names: names)
        var checkins: [NewCheckin] = []
        var of: [Int] = []  // the input of each check-in
        for (i, given) in inputs.enumerated() {
            guard Validate.userID(given.user) == nil, let user = users[given.user] else { continue }
            let input = try prepare(given, user)
            // The user's zone stands for a missing tz: one that is no zone is the store's damage
            // (74), not input's.
            if input.tz == nil { _ = try currentZone(of: user) }
            let userZone = { (id: String) in id == user.id ? user.zone : nil }
            switch rules.check(input, userZone: userZone) {
            case .success(let c):
                checkins.append(c)
                of.append(i)
            case .failure: result[i] = .refused(rules.problems(input, userZone: userZone))
            }
        }
        guard !checkins.isEmpty else { return result }
        let duplicates = Set(try w.insertCheckins(checkins, storedAt: now).duplicateRows)
        try recordSettings(for: Set(checkins.map(\.streak)), in: w)
        var planned: [DueStreak] = []
        for (k, c) in checkins.enumerated() where !duplicates.contains(k) {
            let user = users[c.user]!
            if user.remindUsual, try refreshUsual(user, in: w).moved {
                planned += try w.streaks(of: user.id).map { DueStreak(user: user.id, streak: $0) }
            } else {
                planned.append(DueStreak(user: user.id, streak: c.streak))
            }
        }
        var read: [String: StoredStreak] = [:]
        for (d, h) in zip(planned, try planChanged(planned, in: w)) {
            if let h { read[d.user + "\u{0}" + d.streak] = h.stored }
        }
        var outcomes: [(Int, CheckinOutcome)] = []
        for (k, c) in checkins.enumerated() {
            var user = users[c.user]!
            if user.remindUsual, let again = try w.user(user.id) { user = again }  // its hour may have moved
            let replay = duplicates.contains(k)
            let stored =
                if replay {
                    try replayedStreak(c, of: user, in: w)
                } else {
                    try read[c.user + "\u{0}" + c.streak] ?? w.storedStreak(of: user, streak: c.streak)
                }
            let history = try history(of: stored, epochs: try w.settingsEpochs(of: stored.streak))
            outcomes.append(
                (
                    of[k],
                    CheckinOutcome(user: user, stored: !replay, streak: stored.streak, history: history, streaks: [])
                ))
        }
        if achievements {
            let known = outcomes.map {
                ($0.1.user, Optional(KnownStreak(streak: $0.1.streak, history: $0.1.history, state: nil)))
            }
            for (k, streaks) in try achievementStreaks(of: known, in: w).enumerated() {
                outcomes[k].1.streaks = streaks
            }
        }
        for (i, outcome) in outcomes { result[i] = .stored(outcome) }
        return result
    }

    /// The streak a replayed check-in's event id was stored for, read whole: the one it names when
    /// that is it (a retry), else the user's streak that has it. A replay answers that streak, as
    /// its first answer did, whatever streak it names (an id is the user's, not a streak's:
    /// docs/RULES.md).
    private func replayedStreak(_ c: NewCheckin, of user: User, in w: any StoreWriter) throws -> StoredStreak {
        let named = try w.storedStreak(of: user, streak: c.streak)
        guard let id = c.eventID, !named.checkins.contains(where: { $0.eventID == id }) else { return named }
        for streak in try w.streaks(of: user.id) where streak != c.streak {
            if try w.checkins(of: user.id, streak: streak).contains(where: { $0.eventID == id }) {
                return try w.storedStreak(of: user, streak: streak)
            }
        }
        return named
    }
}
