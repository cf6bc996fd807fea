import StreakCore
import StreakStore

/// `streakd checkin`: one check-in, then the streak as it stands.
extension Context {
    public func checkin(user id: String, streak: String, at: String?, tz: String?, eventID: String?, meta: [String])
        throws
    {
        var input = CheckinInput(user: id, streak: streak, at: at, tz: tz, id: eventID)
        input.meta = try Self.metadata(meta)
        let (user, stored, state) = try store.write { w -> (User, InsertResult, StreakState) in
            let user = try self.user(id, in: w)
            if let at { input.at = try checkinTime(at, zone: tz ?? user.zone) }
            let outcome = try storeCheckin(input, of: user, names: Self.checkinOptions, in: w).mapError(\.asError).get()
            return (user, outcome.result, Engine.evaluate(try outcome.history(of: user, context: self, in: w), at: now))
        }
        let verb = stored.inserted == 1 ? "checked in" : "already checked in (event \(eventID ?? ""))"
        printer.record(
            .object([
                ("user", .string(user.id)), ("streak", .string(streak)), ("stored", .bool(stored.inserted == 1)),
                ("today", .string(state.today.description)), ("today_count", .int(state.todayCount)),
                ("goal", .int(state.goal)), ("current", .int(state.current)), ("longest", .int(state.longest)),
            ]),
            short: "\(user.id) \(verb) (\(streak)): today \(state.today) \(state.todayCount) of \(state.goal),"
                + " current streak \(days(state.current)), longest \(days(state.longest))")
    }
}

extension Context {
    /// Checks and stores one check-in of a known user in the caller's transaction, as `checkin` and
    /// the API's check-in do: the settings in force noted, and a new row's streak planned at once
    /// (for `preview`; the next tick still looks at it afresh). A user reminded at their usual
    /// hour has it worked out again, and when it moved every streak of theirs is planned.
    /// `names`: the fields as the input spells them, for messages.
    func storeCheckin(_ input: CheckinInput, of user: User, names: [String: String], in w: any StoreWriter) throws
        -> Result<CheckinOutcome, FieldProblem>
    {
        // The user's zone stands for a missing tz: one that is no zone is the store's damage (74),
        // not input's.
        if input.tz == nil { _ = try currentZone(of: user) }
        let rules = CheckinRules(zones: zones, now: now, names: names)
        let checkin: NewCheckin
        switch rules.check(input, userZone: { $0 == user.id ? user.zone : nil }) {
        case .success(let c): checkin = c
        case .failure(let problem): return .failure(problem)
        }
        // A usual user's hour is worked out below: locked before the row, so that two check-ins of
        // theirs at once (in two streaks) wait for each other rather than deadlock.
        if user.remindUsual { try w.lockUser(user.id) }
        let result = try w.insertCheckins([checkin], storedAt: now)
        try recordSettings(for: [checkin.streak], in: w)
        guard result.inserted == 1 else { return .success(CheckinOutcome(result: result, streak: checkin.streak)) }
        let planned =
            if user.remindUsual, try refreshUsual(user, in: w).moved {
                try w.streaks(of: user.id).map { DueStreak(user: user.id, streak: $0) }
            } else {
                [DueStreak(user: user.id, streak: checkin.streak)]
            }
        let read = try planChanged(planned, in: w)
        let stored = zip(planned, read).first { $0.0.streak == checkin.streak }?.1?.stored
        return .success(CheckinOutcome(result: result, streak: checkin.streak, stored: stored))
    }

    /// `checkin --at`: RFC 3339 as it is, else a time as `log --since` takes it (`TimeArgument`:
    /// "yesterday 21:00", "2 hours ago"), local forms read in the check-in's zone (`--tz`, else
    /// the user's), as RFC 3339 for the rules every check-in meets.
    func checkinTime(_ text: String, zone name: String) throws -> String {
        if RFC3339.parse(text) != nil { return text }
        let zone: Zone
        switch zones.zone(name) {
        case .success(let z): zone = z
        case .failure(let e): throw FieldProblem(field: "--tz", message: e.message).asError
        }
        let instant = try timeArgument(text, option: "--at", zone: zone)
        return RFC3339.format(instant, offset: zone.offset(at: instant), utcZ: true)
    }

    /// The options of `checkin` that carry each field, for messages.
    static let checkinOptions = [
        "user": "ID", "streak": "--streak", "at": "--at", "tz": "--tz", "id": "--id", "meta": "--meta",
    ]

    /// `--meta KEY=VALUE` items: `true`/`false` are booleans, integers written as
    /// Swift writes them are integers, anything else is a string (`007`, `+5`).
    static func metadata(_ items: [String]) throws -> Metadata {
        var meta: Metadata = []
        for item in items {
            guard let eq = item.firstIndex(of: "="), eq != item.startIndex else {
                throw StreakdError.usage("--meta: \(quoted(item)) is not KEY=VALUE; use e.g. --meta reps=20")
            }
            let key = String(item[..<eq])
            let raw = String(item[item.index(after: eq)...])
            guard !meta.contains(where: { $0.key == key }) else {
                throw StreakdError.usage("--meta: key \(quoted(key)) is given twice; give each key once")
            }
            let integer = Int64(raw).flatMap { String($0) == raw ? MetaValue.integer($0) : nil }
            let value: MetaValue = raw == "true" ? .bool(true) : raw == "false" ? .bool(false) : integer ?? .string(raw)
            meta.append((key, value))
        }
        return meta
    }
}

/// A check-in `storeCheckin` stored, or found stored already (an event id's replay).
struct CheckinOutcome {
    var result: InsertResult
    var streak: String
    /// The streak's history as the transaction sees it after the check-in, when planning read it
    /// (a new row): the answer shows it without reading it again.
    var stored: StoredStreak?

    /// The streak's history after the check-in: as planning read it, else read in `r`.
    func history(of user: User, context c: Context, in r: some HistoryReading) throws -> StreakHistory {
        guard let stored else { return try c.history(of: user, streak: streak, in: r) }
        return try c.history(of: stored, epochs: try r.settingsEpochs(of: streak))
    }
}

func days(_ n: Int) -> String { n == 1 ? "1 day" : "\(n) days" }
