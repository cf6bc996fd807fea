import StreakCore
import StreakStore

/// A repair as recorded (SPEC §14): the date it mended, the length restored and the repairs left.
public struct RepairRecord: Equatable, Sendable {
    public var user: String
    public var streak: String
    public var date: LocalDate
    public var through: LocalDate
    public var length: Int
    public var repairsLeft: Int
    public var at: Instant
    public var author: String
    /// The dates of `date` through `through` the repair made repaired: those that do not qualify.
    public var mended: [LocalDate] = []

    public var json: JSON {
        .object([
            ("user", .string(user)), ("streak", .string(streak)), ("date", .string(date.description)),
            ("through", .string(through.description)), ("current", .int(length)),
            ("repairs_left", .int(repairsLeft)), ("at", .string(at.description)), ("author", .string(author)),
        ])
    }
}

/// The limits of a repair (SPEC §14), pure.
public enum RepairRules {
    public static let period: Int64 = 720 * Instant.hour

    /// Repairs in effect (their date does not qualify: a check-in for it gives the repair back)
    /// recorded within 720 hours before `now`.
    public static func used(_ history: StreakHistory, state: StreakState, now: Instant) -> [Instant] {
        history.repairs.filter { $0.at <= now && $0.at > now - period && state.mark($0.span.from) != .qualifying }
            .map(\.at)
    }

    public static func left(_ history: StreakHistory, state: StreakState, now: Instant, per30Days: Int) -> Int {
        max(0, per30Days - used(history, state: state, now: now).count)
    }

    /// The latest break (the date of its `streak_broken`) and the span a repair now would mend,
    /// or why there is none to mend.
    public static func mend(
        _ history: StreakHistory, state: StreakState, now: Instant, windowHours: Int, per30Days: Int
    ) -> Result<DateSpan, Refusal> {
        guard let broke = state.settlements.last(where: { $0.kind == .streakBroken }) else {
            return .failure(Refusal("nothing broken: the streak has no break to repair"))
        }
        if now - broke.at > Int64(windowHours) * Instant.hour {
            return .failure(
                Refusal(
                    "too late: the streak broke on \(broke.date), which ended at \(broke.at); a repair must come within "
                        + "\(windowHours) hours of that (repair.window_hours)"))
        }
        let used = used(history, state: state, now: now)
        if used.count >= per30Days {
            let next = used.sorted()[used.count - per30Days] + period
            return .failure(
                Refusal(
                    "none left: \(used.count) repair\(used.count == 1 ? "" : "s") within 720 hours "
                        + "(repair.per_30_days = \(per30Days)); the next from \(next)"))
        }
        return .success(DateSpan(from: broke.date, until: max(broke.date, state.today - 1)))
    }

    public struct Refusal: Error, Equatable {
        public var reason: String
        init(_ reason: String) { self.reason = reason }
    }
}

/// `streakd repair`: a job taking values and returning what it recorded.
extension Context {
    /// Mends the streak's latest break. Refused (65, nothing recorded) with the reason: nothing
    /// broken, too late, none left.
    public func repair(user id: String, streak: String?, author: String) throws -> RepairRecord {
        let streak = try streakID(streak ?? "daily")
        return try store.write { w -> RepairRecord in
            switch try repair(user: try self.user(id, in: w), streak: streak, author: author, in: w) {
            case .success(let record): return record
            case .failure(let refused): throw StreakdError.data("\(id) (\(streak)): \(refused.reason)")
            }
        }
    }

    /// Mends the streak's latest break in a write; a refusal records nothing.
    func repair(user: User, streak: String, author: String, in w: any StoreWriter) throws -> Result<
        RepairRecord, RepairRules.Refusal
    > {
        let id = user.id
        let rules = config.repair
        try w.lockStreak(user: id, streak: streak)
        var history = try self.history(of: user, streak: streak, in: w)
        let state = Engine.evaluate(history, at: now)
        let span: DateSpan
        switch RepairRules.mend(
            history, state: state, now: now, windowHours: rules.windowHours, per30Days: rules.per30Days)
        {
        case .success(let s): span = s
        case .failure(let refusal): return .failure(refusal)
        }
        let event = FreezeEvent(at: now, kind: .repair(from: span.from, until: span.until), author: author)
        try w.addFreezeEvent(event, user: id, streak: streak)
        try recordSettings(for: [streak], in: w)
        history.freezeEvents.append(event)
        let after = Engine.evaluate(history, at: now)
        let length = after.settlements.last { $0.kind == .streakRepaired && $0.date == span.from }?.length ?? 0
        var mended: [LocalDate] = []
        var d = span.from
        while d <= span.until {
            if after.mark(d) == .repaired { mended.append(d) }
            d = d + 1
        }
        return .success(
            RepairRecord(
                user: id, streak: streak, date: span.from, through: span.until, length: length,
                repairsLeft: RepairRules.left(history, state: after, now: now, per30Days: rules.per30Days), at: now,
                author: author, mended: mended))
    }

    /// Dates in words: one, a span of consecutive ones (`A through B`), or a list (`A, B and C`).
    static func dates(_ dates: [LocalDate]) -> String {
        guard let first = dates.first, let last = dates.last, dates.count > 1 else {
            return dates.first?.description ?? ""
        }
        if last - first == dates.count - 1 { return "\(first) through \(last)" }
        return dates.dropLast().map(\.description).joined(separator: ", ") + " and \(last)"
    }

    public func report(_ r: RepairRecord) {
        printer.record(
            r.json,
            short:
                "repaired \(r.user)'s \(r.streak) streak: \(Self.dates(r.mended.isEmpty ? [r.date] : r.mended)) "
                + "mended, back at \(days(r.length)); \(r.repairsLeft) repair\(r.repairsLeft == 1 ? "" : "s") left")
    }
}
