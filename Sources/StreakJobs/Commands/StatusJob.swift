import StreakCore
import StreakStore

/// `streakd status`: each streak as of now, every ended date settled.
extension Context {
    public func status(user id: String, streak: String?) throws {
        let reports = try store.read { r -> [(User, String, StreakHistory)] in
            let user = try self.user(id, in: r)
            let streaks = try streak.map { [try streakID($0)] } ?? Set(try r.streaks(of: id) + ["daily"]).sorted()
            return try streaks.map { (user, $0, try history(of: user, streak: $0, in: r)) }
        }
        for (i, (user, streak, history)) in reports.enumerated() {
            if i > 0 && printer.format == .short { printer.out("") }
            report(user: user, streak: streak, history: history)
        }
    }

    func report(user: User, streak: String, history: StreakHistory) {
        let state = Engine.evaluate(history, at: now)
        let zone = history.zone(at: now)
        let lastRefill = history.freezeEvents.filter { $0.kind == .refill }.map(\.at).max()
        let nextRefill = Refill.nextEligible(lastRefill: lastRefill, firstStored: state.firstStored)
        let next =
            user.remind
            ? Planner.next(
                history: history, remindAt: user.remindAt, policy: ReminderPolicy(days: config.reminderDays), now: now,
                stateNow: state) : nil
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
        ])
        let reminderText =
            next.map { "\(local($0.due, in: zone)) (\($0.due)), for a \($0.length)-day streak" }
            ?? (user.remind ? "none due" : "off for this user")
        let lines = [
            "\(user.id) · \(streak) · \(zone.identifier) · today \(state.today)",
            "  current streak   \(days(state.current))"
                + (state.todaySafe ? "" : state.current > 0 ? " (today not done yet)" : ""),
            "  longest streak   \(days(state.longest))",
            "  today            \(state.todayCount) of \(state.goal) check-in\(state.goal == 1 ? "" : "s")",
            "  check-ins        \(state.totalCheckins) in all, last qualifying date \(state.lastQualifying?.description ?? "none")",
            "  freezes          \(state.freezes)" + (nextRefill.map { ", next refill from \($0)" } ?? ""),
            "  next reminder    \(reminderText)",
        ]
        printer.record(json, short: lines.joined(separator: "\n"))
    }
}
