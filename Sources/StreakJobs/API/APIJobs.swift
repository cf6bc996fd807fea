import StreakCore
import StreakStore

/// The HTTP API's endpoints (SPEC §11) as jobs: each takes what the request carried and answers
/// with an `APIAnswer`, using the command line's rules, texts and JSON objects.
extension Context {
    /// The fields a check-in's body may carry; the user is the path's.
    static let apiCheckinFields = ["streak", "at", "tz", "id", "meta"]
    /// The fields of a check-in's body, as JSON pointers, for messages.
    static let apiCheckinNames = [
        "user": "{user}", "streak": "/streak", "at": "/at", "tz": "/tz", "id": "/id", "meta": "/meta",
    ]
    /// The largest body of a single request (SPEC §11).
    public static let apiBodyLimit = 64 * 1024

    /// `POST /v1/users/{user}/checkins`: 201 with the streak object once the check-in is stored;
    /// 200 with it when a check-in with that id (or `Idempotency-Key`) is stored already.
    public func apiCheckin(user id: String, contentType: String?, body: [UInt8], idempotencyKey: String?)
        -> APIWork
    {
        if !body.isEmpty, let problem = Self.jsonContentProblem(contentType) { return .answer(problem) }
        let input: CheckinInput
        switch Self.checkinBody(user: id, body) {
        case .success(var parsed):
            if parsed.id == nil, let key = idempotencyKey {
                if let problem = Validate.eventID(key) {
                    return .problem(
                        400, "the Idempotency-Key header is not valid",
                        errors: [
                            .init(
                                parameter: "Idempotency-Key",
                                detail: "\(quoted(key)) is not an event id; use \(problem)")
                        ])
                }
                parsed.id = key
            }
            input = parsed
        case .failure(let answer): return .answer(answer)
        }
        return .checkin(CheckinWork(context: self, input: input))
    }

    /// The check-ins of `works` (requests with this one `now`), stored together in `w`
    /// (`storeCheckins`), each answered as `apiCheckin` says; a request whose token is gone
    /// answers 401 and stores nothing.
    static func apiCheckins(_ works: [CheckinWork], in w: any StoreWriter) throws -> [APIAnswer] {
        guard let c = works.first?.context else { return [] }
        var answers = [APIAnswer?](repeating: nil, count: works.count)
        var stored: Set<String>?
        for (i, work) in works.enumerated() {
            guard let check = work.token, !check.made else { continue }
            if stored == nil { stored = Set(try w.tokens().map(\.sha256)) }
            answers[i] = check.verify(among: stored!)
        }
        let storing = works.indices.filter { answers[$0] == nil }
        let outcomes = try c.storeCheckins(
            storing.map { works[$0].input }, names: Self.apiCheckinNames, achievements: true, in: w)
        for (i, outcome) in zip(storing, outcomes) {
            let input = works[i].input
            switch outcome {
            case .unknownUser:
                answers[i] = .problem(
                    422, "the check-in cannot be stored",
                    errors: [.init(parameter: "user", detail: UnknownUser.request.message(input.user))])
            case .refused(let problems): answers[i] = Self.checkinProblem(problems, input)
            case .stored(let o):
                let object = c.streakObject(user: o.user, streak: o.streak, history: o.history, streaks: o.streaks)
                let status = o.stored ? 201 : 200
                answers[i] = .later { .json(status, object()) }
            }
        }
        return answers.map { $0! }
    }

    /// `GET /v1/users/{user}/streaks/{streak}`: the `status -o json` object; 404 for a user that is
    /// not there. A streak with no check-ins yet has zeros, as in `status`.
    public func apiStreak(user id: String, streak: String) -> APIAnswer {
        if let problem = Validate.streakID(streak) {
            return .problem(
                404, "no such streak",
                errors: [.init(parameter: "streak", detail: "\(quoted(streak)) is not a streak id; use \(problem)")])
        }
        do {
            return try store.read { r -> APIAnswer in
                guard Validate.userID(id) == nil, let user = try r.user(id) else { return Self.noSuchUser(id) }
                let history = try history(of: user, streak: streak, in: r)
                return .json(200, try streakObject(user: user, streak: streak, history: history, in: r))
            }
        } catch {
            return .failed(error)
        }
    }

    /// The streak object (`status -o json`'s) of a history read in `r`, with the user's
    /// achievements, which take this history as it is rather than reading it again.
    func streakObject(user: User, streak: String, history: StreakHistory, in r: some HistoryReading & ScheduleReading)
        throws -> JSON
    {
        try streakObject(user: user, streak: streak, history: history, readIn: r)()
    }

    /// The same in two steps: what it needs read in `r` now, and made (the engine, the
    /// achievements, the JSON) when the function returned is called: a write step's answer
    /// is made after the commit, off the writer's thread (`APIAnswer.later`).
    func streakObject(
        user: User, streak: String, history: StreakHistory, readIn r: some HistoryReading & ScheduleReading
    ) throws -> @Sendable () -> JSON {
        let read = try achievementStreaks(
            of: user, in: r, known: KnownStreak(streak: streak, history: history, state: nil))
        return streakObject(user: user, streak: streak, history: history, streaks: read)
    }

    /// The same from the user's streaks as achievements take them, read already
    /// (`achievementStreaks`).
    func streakObject(user: User, streak: String, history: StreakHistory, streaks read: [UserStreak])
        -> @Sendable () -> JSON
    {
        return { [self] in
            let state = Engine.evaluate(history, at: now)
            var streaks = read
            if let i = streaks.firstIndex(where: { $0.streak == streak }) { streaks[i].state = state }
            let achieved = Achievements.evaluate(streaks, settings: config.achievements, at: now)
            return streakRecord(user: user, streak: streak, history: history, achieved: achieved, state: state).0
        }
    }

    /// `GET /v1/health`: 200 when the store can be read, with its place and the last tick; else 503.
    /// `damage`: what a request of this server found damaged in the store since it started
    /// (SQLite reads the pages a query needs, so health's few rows may read on a damaged file):
    /// 503 then too, as long as this server runs.
    public func apiHealth(damage: String? = nil) -> APIAnswer {
        if let damage {
            return .json(
                503,
                .object([
                    ("status", .string("unavailable")), ("store", .string(store.location)),
                    ("detail", .string("a request found the store damaged: \(damage)")),
                ]))
        }
        do {
            let tick = try store.read { try $0.meta(MetaKey.lastTick) }
            return .json(
                200,
                .object([
                    ("status", .string("ok")), ("store", .string(store.location)),
                    ("last_tick", .optional(tick.flatMap(Self.runSummary)?.at.description)),
                ]))
        } catch {
            return .json(
                503,
                .object([
                    ("status", .string("unavailable")), ("store", .string(store.location)),
                    ("detail", .string("\(error)")),
                ]))
        }
    }

    /// A check-in's body: a JSON object of `apiCheckinFields`, all optional (an empty body is
    /// `{}`), read as import reads a line; or a 400 naming each bad field.
    static func checkinBody(user: String, _ body: [UInt8]) -> Result<CheckinInput, APIAnswer> {
        bodyObject(body, fields: apiCheckinFields, what: "a valid check-in", emptyIsObject: true) { b in
            CheckinInput(
                user: user, streak: b.string("streak"), at: b.string("at"), tz: b.string("tz"), id: b.string("id"),
                meta: b.meta("meta"))
        }
    }

    /// A check-in the rules refused: 400 when a value does not parse or has the wrong shape (an
    /// `at` that is no RFC 3339 instant, a streak or event id, metadata), else 422, the rules
    /// refusing it (an instant outside SPEC §1's window, an unknown zone); each field named.
    static func checkinProblem(_ problems: [FieldProblem], _ input: CheckinInput) -> APIAnswer {
        let malformed = problems.contains { p in
            switch p.field {
            case "/at": input.at.flatMap(RFC3339.parse) == nil
            case "/tz": false
            default: true
            }
        }
        return .problem(
            malformed ? 400 : 422, malformed ? "the body is not a valid check-in" : "the check-in cannot be stored",
            errors: problems.map { .init(pointer: $0.field, detail: $0.message) })
    }
}
