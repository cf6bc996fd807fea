import StreakCore
import StreakStore

/// A check-in as it comes in, before it is checked.
struct CheckinInput {
    var user: String
    var streak: String?
    var at: String?
    var tz: String?
    var id: String?
    var meta: Metadata = []

    /// The streak it is for: `daily` when the input names none.
    var streakID: String { streak ?? "daily" }
}

/// One thing wrong with one input: which field, and what would be valid.
struct FieldProblem: Error {
    var field: String
    var message: String
    /// Whether the value is not of its field's form or range (a zone that is none, a time that
    /// does not read), rather than well formed and refused by the data (an unknown user, an
    /// instant outside the allowed ones).
    var malformed = true

    /// As an error of the command line, `FIELD: message`: a malformed value of an option or
    /// argument is a usage error (64), one the data refuses is bad input data (65; docs/RULES.md).
    var asError: StreakdError {
        StreakdError(malformed ? .usage : .dataError, field.isEmpty ? message : "\(field): \(message)")
    }

    /// Every field's problem, not only the first (the API names each, SPEC §11): `check` runs
    /// again with each field that failed left out, until it passes or a field left out fails
    /// again (one that has no stand-in, such as the user).
    static func every(_ check: (_ leftOut: Set<String>) -> FieldProblem?) -> [FieldProblem] {
        var problems: [FieldProblem] = []
        var leftOut: Set<String> = []
        while let p = check(leftOut), leftOut.insert(p.field).inserted { problems.append(p) }
        return problems
    }
}

/// The rules every check-in must meet at the boundary (SPEC §1).
struct CheckinRules {
    let zones: ZoneBook
    let now: Instant
    /// Field names as the input spells them (JSON keys, CSV columns or options).
    var names = ["user": "user", "streak": "streak", "at": "at", "tz": "tz", "id": "id", "meta": "meta"]
    /// What an unknown user's message says to do: the API's batch names its request.
    var unknownUser = UnknownUser.command

    static let futureSlack = Engine.clockSkew
    static let maxAge: Int64 = 365 * Instant.day

    /// A field's name as the input spells it.
    func name(_ field: String) -> String { names[field] ?? field }

    /// Every problem of a check-in `check` refuses: a field left out is what leaving it out of
    /// the input means (no streak is daily, no instant now, no zone the user's).
    func problems(_ input: CheckinInput, userZone: (String) -> String?) -> [FieldProblem] {
        FieldProblem.every { leftOut in
            var input = input
            for field in leftOut {
                switch field {
                case name("streak"): input.streak = nil
                case name("at"): input.at = nil
                case name("tz"): input.tz = nil
                case name("id"): input.id = nil
                case name("meta"): input.meta = []
                default: break
                }
            }
            if case .failure(let p) = check(input, userZone: userZone) { return p }
            return nil
        }
    }

    /// Checks a check-in; `userZone` answers a known user's current zone.
    func check(_ input: CheckinInput, userZone: (String) -> String?) -> Result<NewCheckin, FieldProblem> {
        func fail(_ field: String, _ message: String, malformed: Bool = true) -> Result<NewCheckin, FieldProblem> {
            .failure(FieldProblem(field: name(field), message: message, malformed: malformed))
        }
        if let problem = Validate.userID(input.user) {
            return fail("user", "\(quoted(input.user)) is not a user id; use \(problem)")
        }
        guard let userZone = userZone(input.user) else {
            return fail("user", unknownUser.message(input.user), malformed: false)
        }
        let streak = input.streakID
        if let problem = Validate.streakID(streak) {
            return fail("streak", "\(quoted(streak)) is not a streak id; use \(problem)")
        }
        let instant: Instant
        if let at = input.at {
            guard let parsed = RFC3339.parse(at) else {
                return fail(
                    "at", "\(quoted(at)) is not an RFC 3339 instant with an offset; use e.g. 2026-11-20T19:03:00-05:00")
            }
            instant = parsed
        } else {
            instant = now
        }
        if instant > now + Self.futureSlack {
            return fail(
                "at", "\(instant) is in the future (now is \(now)); a check-in may be at most 5 minutes ahead",
                malformed: false)
        }
        if instant < now - Self.maxAge {
            return fail(
                "at", "\(instant) is more than a year before now (\(now)); check-ins must be from the last 365 days",
                malformed: false)
        }
        let zone = input.tz ?? userZone
        if case .failure(let e) = zones.zone(zone) { return fail("tz", e.message) }
        if let id = input.id, let problem = Validate.eventID(id) {
            return fail("id", "\(quoted(id)) is not an event id; use \(problem)")
        }
        if input.meta.count > 32 { return fail("meta", "too many keys (\(input.meta.count)); at most 32") }
        var metaFields: [(String, JSON)] = []
        for (key, value) in input.meta {
            if let problem = Validate.metaKey(key) {
                return fail("meta", "key \(quoted(key)) is not valid; use \(problem)")
            }
            switch value {
            case .string(let s):
                guard s.utf8.count <= Validate.maxMetaString else {
                    return fail(
                        "meta",
                        "value of \(quoted(key)) is \(s.utf8.count) bytes long; at most \(Validate.maxMetaString)")
                }
                metaFields.append((key, .string(s)))
            case .bool(let b): metaFields.append((key, .bool(b)))
            case .integer(let i): metaFields.append((key, .int(i)))
            }
        }
        return .success(
            NewCheckin(
                user: input.user, streak: streak, instant: instant, zone: zone, eventID: input.id,
                meta: metaFields.isEmpty ? nil : JSON.object(metaFields).text))
    }
}
