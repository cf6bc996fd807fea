import StreakCore
import StreakStore

/// `streakd calendar`: the last weeks as a grid, Monday first.
extension Context {
    public func calendar(user id: String, streak: String, weeks: Int) throws {
        guard (1...520).contains(weeks) else {
            throw StreakdError.usage("--weeks: \(weeks) is out of range; use 1 to 520")
        }
        let streak = try streakID(streak)
        let (user, history) = try store.read { r -> (User, StreakHistory) in
            let user = try self.user(id, in: r)
            noteUnknownStreak(streak, of: id, stored: try r.streaks(of: id))
            return (user, try self.history(of: user, streak: streak, in: r))
        }
        let state = Engine.evaluate(history, at: now)
        let firstMonday = state.today - (state.today.isoWeekday - 1) - 7 * (weeks - 1)
        let lastDay = firstMonday + 7 * weeks - 1
        if printer.format == .json {
            var d = firstMonday
            while d <= lastDay {
                printer.out(
                    JSON.object([
                        ("user", .string(user.id)), ("streak", .string(streak)), ("date", .string(d.description)),
                        ("state", .string(stateName(d, state))), ("today", .bool(d == state.today)),
                    ]).text)
                d = d + 1
            }
            return
        }
        printer.out(
            "\(user.id) · \(streak) · \(history.zone(at: now).identifier)   current \(days(state.current)), longest \(days(state.longest)), freezes \(state.freezes)"
        )
        printer.out("week of       Mon Tue Wed Thu Fri Sat Sun")
        for w in 0..<weeks {
            let monday = firstMonday + 7 * w
            let cells = (0..<7).map { cell(monday + $0, state) }
            printer.out(monday.description + "   " + cells.joined())
        }
        printer.out(
            "# qualifying   * frozen   + repaired   - rest day   = paused   x missed   ~ skipped by travel   . open   [ ] today")
    }

    func stateName(_ d: LocalDate, _ state: StreakState) -> String {
        if d > state.today, let m = state.mark(d), m == .frozen || m == .qualifying || m == .paused { return m.rawValue }
        if d > state.today { return "future" }
        return state.mark(d)?.rawValue ?? (d < state.today ? "none" : "open")
    }

    func cell(_ d: LocalDate, _ state: StreakState) -> String {
        let symbol: String
        switch state.mark(d) {
        case .qualifying?: symbol = "#"
        case .frozen?: symbol = "*"
        case .missed?: symbol = "x"
        case .bridged?: symbol = "~"
        case .rest?: symbol = "-"
        case .paused?: symbol = "="
        case .repaired?: symbol = "+"
        case .open?: symbol = "."
        case nil: symbol = " "
        }
        return d == state.today ? "[\(symbol)] " : " \(symbol)  "
    }
}
