import StreakCore
import StreakStore

/// `streakd freeze add|use`.
extension Context {
    /// Grants one freeze, up to the streak's maximum.
    public func addFreeze(user id: String, streak: String) throws {
        let streak = try streakID(streak)
        let (before, after) = try store.write { w in
            try grantFreeze(user: try self.user(id, in: w), streak: streak, in: w)
        }
        let max = config.settings(for: streak).freeze.max
        printer.record(
            .object([
                ("user", .string(id)), ("streak", .string(streak)), ("freezes", .int(after)),
                ("added", .bool(after > before)),
            ]),
            short: after > before
                ? "granted a freeze to \(id) (\(streak)): \(after) of \(max)"
                : "\(id) (\(streak)) holds \(after) of \(max) freezes already (freeze.max); nothing added")
    }

    /// Grants a freeze in a write: the freezes before and after (the same at `freeze.max`).
    func grantFreeze(user: User, streak: String, in w: any StoreWriter) throws -> (Int, Int) {
        let id = user.id
        try w.lockStreak(user: id, streak: streak)
        let before = Engine.evaluate(try history(of: user, streak: streak, in: w), at: now).freezes
        let max = config.settings(for: streak).freeze.max
        guard before < max else { return (before, before) }
        try w.addFreezeEvent(FreezeEvent(at: now, kind: .grant), user: id, streak: streak)
        try recordSettings(for: [streak], in: w)
        return (before, Refill.apply(freezes: before, max: max))  // a grant adds one, as a refill does
    }

    /// Uses a freeze for today or a coming date.
    public func useFreeze(user id: String, streak: String, date: String?) throws {
        let streak = try streakID(streak)
        let (day, left) = try store.write { w in
            try spendFreeze(user: try self.user(id, in: w), streak: streak, date: date, in: w)
        }
        printer.record(
            .object([
                ("user", .string(id)), ("streak", .string(streak)), ("date", .string(day.description)),
                ("freezes", .int(left)),
            ]),
            short: "froze \(day) for \(id) (\(streak)); \(left) freeze\(left == 1 ? "" : "s") left")
    }

    /// Uses a freeze in a write, for `date` (today when nil; `field` names it in messages): the
    /// date frozen and the freezes left; a `StreakdError` when the rules refuse it (usage: a date out of range).
    func spendFreeze(user: User, streak: String, date: String?, field: String = "--date", in w: any StoreWriter)
        throws -> (LocalDate, Int)
    {
        let id = user.id
        let settings = config.settings(for: streak)
        try w.lockStreak(user: id, streak: streak)
        let history = try history(of: user, streak: streak, in: w)
        let state = Engine.evaluate(history, at: now)
        var day = state.today
        if let date {
            guard let d = LocalDate(date) else {
                throw StreakdError.usage("\(field): \(quoted(date)) is not a date; use YYYY-MM-DD")
            }
            day = d
        }
        guard day >= state.today else {
            throw StreakdError.data(
                "\(field): \(day) has begun or ended already; freeze today (\(state.today)) or a coming date")
        }
        guard day <= state.today + 366 else { throw StreakdError.data("\(field): \(day) is more than a year ahead") }
        // A date given is named as the option (or the body's field) that gave it.
        let named = date == nil ? "" : "\(field): "
        guard state.mark(day) != .frozen else { throw StreakdError.data("\(named)\(day) is frozen already") }
        guard state.mark(day) != .qualifying else {
            throw StreakdError.data("\(named)\(day) qualifies already; it needs no freeze")
        }
        // A rest or paused date is bridged (SPEC §14): a freeze used on it would be given back.
        if let pause = history.pauses.first(where: { $0.contains(day) }) {
            throw StreakdError.data(
                "\(named)\(day) is paused (from \(pause.from) through \(pause.until)); it needs no freeze")
        }
        guard !history.settings.restDays.contains(day) else {
            throw StreakdError.data("\(named)\(day) is a rest day of \(streak); it needs no freeze")
        }
        guard state.current >= settings.freeze.minStreak else {
            throw StreakdError.data(
                "the current streak is \(days(state.current)); a freeze needs at least \(days(settings.freeze.minStreak)) (freeze.min_streak)"
            )
        }
        guard state.freezes > 0 else { throw StreakdError.data("\(id) has no freeze left for \(streak)") }
        try w.addFreezeEvent(FreezeEvent(at: now, kind: .use(day)), user: id, streak: streak)
        return (day, state.freezes - 1)
    }

    /// `config check`: every problem of the file (hooks whose program cannot be run included),
    /// else the effective configuration, after a warning for each secret other users can read.
    public func checkConfig(knownUsers: Set<String>? = nil) throws {
        if let source = config.source { try ConfigLoader.check(path: source, knownUsers: knownUsers) }
        for warning in ConfigLoader.exposedSecrets(config) { printer.warn(warning) }
        printer.record(config.json, short: config.toml)
    }
}
