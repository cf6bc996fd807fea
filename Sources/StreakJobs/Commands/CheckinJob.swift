import StreakCore
import StreakStore

/// `streakd checkin`: one check-in, then the streak as it stands.
extension Context {
    public func checkin(user id: String, streak: String, at: String?, tz: String?, eventID: String?, meta: [String])
        throws
    {
        var input = CheckinInput(user: id, streak: streak, at: at, tz: tz, id: eventID)
        input.meta = try Self.metadata(meta)
        if let problem = Validate.userID(id) {
            throw StreakdError.usage("\(quoted(id)) is not a user id; use \(problem)")
        }
        let outcome = try store.write { w -> CheckinOutcome in
            let stored = try storeCheckins([input], names: Self.checkinOptions, in: w) { input, user in
                var input = input
                if let at { input.at = try checkinTime(at, zone: tz ?? user.zone) }
                return input
            }
            switch stored[0] {
            case .unknownUser: throw StreakdError.unknownUser(id)
            case .refused(let problems): throw problems[0].asError
            case .stored(let outcome): return outcome
            }
        }
        // A replay shows the streak its event id was stored for, which may not be `streak`.
        let (user, state, streak) = (outcome.user, Engine.evaluate(outcome.history, at: now), outcome.streak)
        let verb = outcome.stored ? "checked in" : "already checked in (event \(eventID ?? ""))"
        printer.record(
            .object([
                ("user", .string(user.id)), ("streak", .string(streak)), ("stored", .bool(outcome.stored)),
                ("today", .string(state.today.description)), ("today_count", .int(state.todayCount)),
                ("goal", .int(state.goal)), ("current", .int(state.current)), ("longest", .int(state.longest)),
            ]),
            short: "\(user.id) \(verb) (\(streak)): today \(state.today) \(state.todayCount) of \(state.goal),"
                + " current streak \(days(state.current)), longest \(days(state.longest))")
    }
}

extension Context {
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

func days(_ n: Int) -> String { n == 1 ? "1 day" : "\(n) days" }
