import StreakCore
import StreakStore

/// `streakd status`: each streak as of now, every ended date settled.
extension Context {
    public func status(user id: String, streak: String?) throws {
        let (reports, achieved) = try store.read { r -> ([(User, String, StreakHistory)], AchievementState) in
            let user = try self.user(id, in: r)
            let stored = try r.streaks(of: id)
            if let streak { try noteUnknownStreak(streakID(streak), of: id, stored: stored) }
            let streaks = try streak.map { [try streakID($0)] } ?? Set(stored + ["daily"]).sorted()
            return (
                try streaks.map { (user, $0, try history(of: user, streak: $0, in: r)) },
                try achievements(of: user, in: r)
            )
        }
        for (i, (user, streak, history)) in reports.enumerated() {
            if i > 0 && printer.format == .short { printer.out("") }
            report(user: user, streak: streak, history: history, achieved: achieved)
        }
    }

    /// `achieved`: the user's XP and level (SPEC §9), the same on each of their streaks' reports.
    func report(user: User, streak: String, history: StreakHistory, achieved: AchievementState) {
        let (json, short) = streakRecord(user: user, streak: streak, history: history, achieved: achieved)
        printer.record(json, short: short())
    }

    /// A streak as `status` shows it: the streak object (`-o json`, and the API's answer) and its
    /// short text, made when asked (the API never does). `state`: the history's at now, when the
    /// caller evaluated it already.
    func streakRecord(
        user: User, streak: String, history: StreakHistory, achieved: AchievementState, state: StreakState? = nil
    ) -> (JSON, () -> String) {
        let state = state ?? Engine.evaluate(history, at: now)
        let zone = history.zone(at: now)
        let lastRefill = history.freezeEvents.filter { $0.kind == .refill }.map(\.at).max()
        let nextRefill = Refill.nextEligible(lastRefill: lastRefill, firstStored: state.firstStored)
        let next =
            user.remind
            ? Planner.next(
                history: history, remindAt: user.remindAt, policy: ReminderPolicy(days: config.reminderDays), now: now,
                stateNow: state) : nil
        // SPEC §14: the pause in force today, else the next one ahead, through the last paused
        // date (pauses back to back are one absence); the repairs left.
        var pause = history.pauses.first { $0.until >= state.today }
        if var p = pause {
            for next in history.pauses where next.from == p.until + 1 { p.until = next.until }
            pause = p
        }
        let repairsLeft = RepairRules.left(history, state: state, now: now, per30Days: config.repair.per30Days)
        let reminderJSON: JSON =
            next.map { r in
                .object([
                    ("kind", .string("at_risk")), ("due", .string(r.due.description)),
                    ("local_due", .string(local(r.due, in: zone))), ("local_date", .string(r.date.description)),
                    ("streak_length", .int(r.length)),
                ])
            } ?? .null
        let json = JSON.object([
            ("user", .string(user.id)), ("streak", .string(streak)), ("timezone", .string(zone.identifier)),
            ("today", .string(state.today.description)), ("current", .int(state.current)),
            ("longest", .int(state.longest)),
            ("freezes", .int(state.freezes)), ("today_count", .int(state.todayCount)), ("goal", .int(state.goal)),
            ("total_checkins", .int(state.totalCheckins)),
            ("last_qualifying_date", .optional(state.lastQualifying?.description)),
            ("next_refill", .optional(nextRefill?.description)), ("next_reminder", reminderJSON),
            ("paused_until", .optional(pause?.until.description)), ("repairs_left", .int(repairsLeft)),
            ("remind_at", .string(Validate.wallTimeText(user.remindAt))), ("remind_usual", .bool(user.remindUsual)),
            ("xp", .int(achieved.xp)), ("level", .int(achieved.level)),
            ("next_level_xp", achieved.nextLevelXP.map { .int($0) } ?? .null),
        ])
        let text = { [self] in
            statusText(
                user: user, streak: streak, state: state, zone: zone, next: next, nextRefill: nextRefill,
                pause: pause, repairsLeft: repairsLeft, achieved: achieved)
        }
        return (json, text)
    }

    /// `status`'s short text of a streak, from what `streakRecord` worked out.
    private func statusText(
        user: User, streak: String, state: StreakState, zone: Zone, next: PlannedReminder?, nextRefill: Instant?,
        pause: DateSpan?, repairsLeft: Int, achieved: AchievementState
    ) -> String {
        let reminderText =
            next.map { "\(local($0.due, in: zone)) (\($0.due)), for a \($0.length)-day streak" }
            ?? noReminderReason(user: user, state: state)
        let lines = [
            "\(user.id) · \(streak) · \(zone.identifier) · today \(state.today)",
            "  current streak   \(days(state.current))"
                + (state.todaySafe ? "" : state.current > 0 ? " (today not done yet)" : ""),
            "  longest streak   \(days(state.longest))",
            "  today            \(state.todayCount) of \(state.goal) check-in\(state.goal == 1 ? "" : "s")",
            "  check-ins        \(state.totalCheckins) in all, last qualifying date \(state.lastQualifying?.description ?? "none")",
            "  freezes          \(state.freezes)" + (nextRefill.map { ", next refill from \($0)" } ?? ""),
            "  next reminder    \(reminderText)",
            "  reminder time    \(Validate.wallTimeText(user.remindAt))"
                + (user.remindUsual ? ", the usual hour (from the history)" : ""),
            "  level            \(achieved.level), \(achieved.xp) XP"
                + (achieved.nextLevelXP.map { ", level \(achieved.level + 1) at \($0) XP" } ?? " (the highest)"),
        ]
        // SPEC §14, when there is something to say: a pause in force or ahead, repairs used.
        var forgiveness: [String] = []
        if let p = pause {
            forgiveness.append(
                "  paused           "
                    + (p.from <= state.today ? "through \(p.until)" : "from \(p.from) through \(p.until)"))
        }
        if repairsLeft < config.repair.per30Days {
            forgiveness.append("  repairs left     \(repairsLeft) of \(config.repair.per30Days) per 30 days")
        }
        return (lines[..<8] + forgiveness + lines[8...]).joined(separator: "\n")
    }
}

extension Context {
    /// Why a streak has no next reminder (SPEC §6's `status`): reminders off, no streak, a length
    /// that `reminders.days` does not name, or none left before the streak ends.
    func noReminderReason(user: User, state: StreakState) -> String {
        let listed = config.reminderDays.map(String.init).joined(separator: ", ")
        if !user.remind { return "off for this user (streakd user set \(user.id) --remind turns them on)" }
        if config.reminderDays.isEmpty { return "none: reminders.days is empty in the configuration" }
        if state.current == 0 { return "none: no streak to keep yet (reminders at \(listed) days)" }
        if !config.reminderDays.contains(state.current) {
            return "none: \(days(state.current)); reminders at \(listed) days"
        }
        return "none due: today's was due already, or today is done or frozen"
    }

    /// A streak a read command was asked about that the user does not have, is not `daily` and is
    /// not configured: shown with zeros (SPEC §6), with a word on standard error naming the user's
    /// streaks, in case it was a typo.
    func noteUnknownStreak(_ streak: String, of user: String, stored: [String]) {
        guard streak != "daily", !stored.contains(streak), config.streaks[streak] == nil else { return }
        let known = Set(stored + ["daily"]).sorted().joined(separator: ", ")
        printer.warn("\(user) has no streak \(quoted(streak)) (their streaks: \(known)); showing it with no check-ins")
    }
}
