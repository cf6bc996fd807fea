import StreakCore
import StreakStore

/// A pause as recorded (SPEC §14): its streak, dates, instant and author.
public struct PauseRecord: Equatable, Sendable {
    public var user: String
    public var streak: String
    public var from: LocalDate
    public var until: LocalDate
    public var at: Instant
    public var author: String

    public var json: JSON {
        .object([
            ("user", .string(user)), ("streak", .string(streak)), ("from", .string(from.description)),
            ("until", .string(until.description)), ("at", .string(at.description)), ("author", .string(author)),
        ])
    }
}

/// What a `resume` did to one streak: the pause it ended (now ending on `until`, the day before
/// today) or dropped (`until` nil: it had not begun).
public struct ResumeRecord: Equatable, Sendable {
    public var user: String
    public var streak: String
    public var pause: DateSpan
    public var until: LocalDate?

    public var json: JSON {
        .object([
            ("user", .string(user)), ("streak", .string(streak)), ("from", .string(pause.from.description)),
            ("until", .optional(until?.description)), ("removed", .bool(until == nil)),
        ])
    }
}

/// `streakd pause` and `streakd resume`: jobs taking values and returning what they recorded,
/// for the command line and the HTTP API alike.
extension Context {
    /// The streaks `--streak S` or `--all` names.
    func forgivenStreaks(_ streak: String?, all: Bool, of user: String, in r: some HistoryReading) throws -> [String] {
        if all { return Set(try r.streaks(of: user) + ["daily"]).sorted() }
        return [try streakID(streak ?? "daily")]
    }

    /// Pauses one streak (or every streak of the user) from `from` through `until`, both
    /// included. Refused (65, nothing recorded) when a date is in the past, the pause is too
    /// long, the year's allowance would be exceeded, or it overlaps another pause.
    public func pause(user id: String, streak: String?, all: Bool, from: String, until: String, author: String)
        throws -> [PauseRecord]
    {
        guard let first = LocalDate(from) else {
            throw StreakdError.usage("--from: \(quoted(from)) is not a date; use YYYY-MM-DD")
        }
        guard let last = LocalDate(until) else {
            throw StreakdError.usage("--until: \(quoted(until)) is not a date; use YYYY-MM-DD")
        }
        return try store.write { w -> [PauseRecord] in
            let user = try self.user(id, in: w)
            let streaks = try forgivenStreaks(streak, all: all, of: id, in: w)
            switch try pause(user: user, streaks: streaks, DateSpan(from: first, until: last), author: author, in: w) {
            case .success(let records): return records
            case .failure(let refused): throw StreakdError.data(refused.reason)
            }
        }
    }

    /// Pauses `streaks` over `span` in a write: every streak is checked before anything is
    /// recorded, so a refusal (of any of them) leaves the store as it was. `names` are the
    /// dates' names in the reasons (the options, or the API's fields).
    func pause(
        user: User, streaks: [String], _ span: DateSpan, author: String, names: PauseRules.Names = .options,
        in w: any StoreWriter
    ) throws -> Result<[PauseRecord], PauseRules.Refusal> {
        let id = user.id
        let limits = config.pause
        for streak in streaks {
            try w.lockStreak(user: id, streak: streak)
            let history = try self.history(of: user, streak: streak, in: w)
            let state = Engine.evaluate(history, at: now)
            if var refused = PauseRules.refusal(
                span, today: state.today, pauses: history.pauses, maxDays: limits.maxDays,
                daysPerYear: limits.daysPerYear, names: names)
            {
                refused.reason = "\(id) (\(streak)): \(refused.reason)"
                return .failure(refused)
            }
        }
        var records: [PauseRecord] = []
        for streak in streaks {
            try w.addFreezeEvent(
                FreezeEvent(at: now, kind: .pause(from: span.from, until: span.until), author: author), user: id,
                streak: streak)
            records.append(
                PauseRecord(user: id, streak: streak, from: span.from, until: span.until, at: now, author: author))
        }
        try recordSettings(for: Set(streaks), in: w)
        // A paused date takes no leeway check-in (SPEC §14): the usual hour may move.
        if user.remindUsual { try refreshUsual(user, in: w) }
        return .success(records)
    }

    /// Ends the current pause from today on (today is no longer paused), or drops the next one
    /// that has not begun. Refused (65) when there is none.
    public func resume(user id: String, streak: String?, all: Bool, author: String) throws -> [ResumeRecord] {
        try store.write { w -> [ResumeRecord] in
            let user = try self.user(id, in: w)
            let records = try resume(
                user: user, streaks: try forgivenStreaks(streak, all: all, of: id, in: w), author: author, in: w)
            guard !records.isEmpty else {
                throw StreakdError.data(Self.nothingToResume(id, streak: all ? nil : streak ?? "daily"))
            }
            return records
        }
    }

    /// Why a resume did nothing: no pause in force or ahead (for `streak`; nil: of any streak).
    static func nothingToResume(_ id: String, streak: String?) -> String {
        "\(id) has no pause to resume\(streak.map { " for \($0)" } ?? "") (none in force or ahead)"
    }

    /// Resumes `streaks` in a write: what it did to each that had a pause in force or ahead (none:
    /// nothing written).
    func resume(user: User, streaks: [String], author: String, in w: any StoreWriter) throws -> [ResumeRecord] {
        let id = user.id
        var records: [ResumeRecord] = []
        for streak in streaks {
            try w.lockStreak(user: id, streak: streak)
            let history = try self.history(of: user, streak: streak, in: w)
            let today = Engine.evaluate(history, at: now).today
            let events = history.freezeEvents.filter {
                guard case .pause(_, let until) = $0.kind else { return false }
                return until >= today
            }.sorted { a, b in
                guard case .pause(let f1, _) = a.kind, case .pause(let f2, _) = b.kind else { return false }
                return f1 < f2
            }
            guard let event = events.first, case .pause(let from, let until) = event.kind else { continue }
            try w.removeFreezeEvent(event, user: id, streak: streak)
            var kept: LocalDate?
            if from < today {
                kept = today - 1
                try w.addFreezeEvent(
                    FreezeEvent(at: now, kind: .pause(from: from, until: today - 1), author: author), user: id,
                    streak: streak)
            }
            records.append(
                ResumeRecord(user: id, streak: streak, pause: DateSpan(from: from, until: until), until: kept))
        }
        if !records.isEmpty && user.remindUsual { try refreshUsual(user, in: w) }
        return records
    }

    /// `pause`'s records as the command line shows them.
    public func report(_ records: [PauseRecord]) {
        for r in records {
            printer.record(
                r.json,
                short:
                    "paused \(r.user) (\(r.streak)) from \(r.from) through \(r.until) (\(days(r.until - r.from + 1)))")
        }
    }

    /// `resume`'s records as the command line shows them.
    public func report(_ records: [ResumeRecord]) {
        for r in records {
            printer.record(
                r.json,
                short: r.until.map { "resumed \(r.user) (\(r.streak)): paused \(r.pause.from) through \($0) only" }
                    ?? "removed \(r.user)'s pause (\(r.streak)) from \(r.pause.from) through \(r.pause.until)")
        }
    }
}

/// The limits of a pause (SPEC §14), pure.
public enum PauseRules {
    /// How the reasons name the pause's dates: the command line's options, or the API's fields
    /// (which a problem detail's pointer names: the reason is then about that field's date).
    public struct Names: Sendable {
        public var from: String
        public var until: String
        public static let options = Names(from: "--from ", until: "--until ")
        public static let fields = Names(from: "", until: "")
    }

    /// Why a pause is refused: the date it is about (`from` or `until`), and the reason.
    public struct Refusal: Error, Equatable {
        public var field: String
        public var reason: String
    }

    /// Why `span` cannot be paused, or nil when it can.
    public static func refusal(
        _ span: DateSpan, today: LocalDate, pauses: [DateSpan], maxDays: Int, daysPerYear: Int, names: Names = .options
    ) -> Refusal? {
        if span.from < today {
            return Refusal(
                field: "from",
                reason: "\(names.from)\(span.from) is in the past; a pause begins today (\(today)) or later")
        }
        // Not in SPEC §14: a pause is planned within the year ahead, as a freeze is used and the
        // year's allowance counted (docs/RULES.md, "Pause dates").
        if span.from > today + 365 {
            return Refusal(
                field: "from",
                reason: "\(names.from)\(span.from) is more than a year ahead; a pause begins by \(today + 365)")
        }
        if span.until < span.from {
            return Refusal(
                field: "until",
                reason: names.from.isEmpty
                    ? "\(span.until) is before from (\(span.from))"
                    : "\(names.until)\(span.until) is before \(names.from)\(span.from)")
        }
        if span.count > maxDays {
            return Refusal(
                field: "until",
                reason: "\(days(span.count)) is too long a pause; at most \(days(maxDays)) (pause.max_days)")
        }
        if let other = pauses.first(where: { $0.from <= span.until && span.from <= $0.until }) {
            return Refusal(field: "from", reason: "it overlaps the pause from \(other.from) through \(other.until)")
        }
        let most = mostInAYear(pauses + [span])
        if most > daysPerYear {
            return Refusal(
                field: "until",
                reason: "\(days(most)) paused within 365 consecutive dates would be over the allowance of "
                    + "\(days(daysPerYear)) (pause.days_per_year)")
        }
        return nil
    }

    /// The most paused dates within any 365 consecutive dates (spans do not overlap). A window
    /// holding the most begins on a span's first date or ends on a span's last.
    public static func mostInAYear(_ spans: [DateSpan]) -> Int {
        var most = 0
        let windows =
            spans.map { DateSpan(from: $0.from, until: $0.from + 364) }
            + spans.map { DateSpan(from: $0.until - 364, until: $0.until) }
        for w in windows {
            var n = 0
            for s in spans where s.from <= w.until && w.from <= s.until {
                n += min(s.until, w.until) - max(s.from, w.from) + 1
            }
            most = max(most, n)
        }
        return most
    }
}
