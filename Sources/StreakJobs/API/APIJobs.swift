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
            case .refused(let problem): answers[i] = Self.checkinProblem(problem, input)
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
    public func apiHealth() -> APIAnswer {
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

    /// A body's content type: JSON (any parameters, such as a charset) or a 415.
    static func jsonContentProblem(_ contentType: String?) -> APIAnswer? {
        guard mediaType(contentType) != "application/json" else { return nil }
        return .problem(
            415, "the body must be JSON: Content-Type: application/json (got \(quoted(contentType ?? "none")))")
    }

    /// A content type's media type, lowercased, without parameters.
    static func mediaType(_ contentType: String?) -> String {
        (contentType ?? "").split(separator: ";").first.map { $0.trimmed().lowercased() } ?? ""
    }

    /// A check-in's body: a JSON object of `apiCheckinFields`, all optional (an empty body is
    /// `{}`), read as import reads a line; or a 400 naming the field.
    static func checkinBody(user: String, _ body: [UInt8]) -> Result<CheckinInput, APIAnswer> {
        bodyObject(body, fields: apiCheckinFields, what: "a valid check-in", emptyIsObject: true) { o in
            CheckinInput(
                user: user, streak: try JSONInput.string(o, "streak", required: false).get(),
                at: try JSONInput.string(o, "at", required: false).get(),
                tz: try JSONInput.string(o, "tz", required: false).get(),
                id: try JSONInput.string(o, "id", required: false).get(), meta: try JSONInput.meta(o["meta"]).get())
        }
    }

    /// A body that is one JSON object of `fields` (an empty body is `{}` when `emptyIsObject`),
    /// read by import's reader and then by `read`; or the 400 naming the field (a JSON pointer)
    /// and saying the body is not `what`.
    static func bodyObject<T>(
        _ body: [UInt8], fields: [String], what: String, emptyIsObject: Bool = false,
        _ read: ([String: JSONInput]) throws -> T
    ) -> Result<T, APIAnswer> {
        guard let text = String(validating: body, as: UTF8.self) else {
            return .failure(.problem(400, "the body is not UTF-8 text"))
        }
        let parsed = Result { () throws -> T in
            let o = body.isEmpty && emptyIsObject ? [:] : try JSONInput.object(text[...], in: .body).get()
            if let unknown = o.keys.sorted().first(where: { !fields.contains($0) }) {
                throw JSONInput.unknownField(unknown, valid: fields)
            }
            return try read(o)
        }
        return parsed.mapError { error in
            let p = error as? FieldProblem ?? FieldProblem(field: "", message: "\(error)")
            return p.field.isEmpty
                ? .problem(400, p.message)
                : .problem(400, "the body is not \(what)", errors: [.init(pointer: "/" + p.field, detail: p.message)])
        }
    }

    /// A check-in the rules refused: 400 for a value that does not parse or has the wrong shape
    /// (an `at` that is no RFC 3339 instant, a streak or event id, metadata), 422 for one the rules
    /// refuse (an instant outside SPEC §1's window, an unknown zone).
    static func checkinProblem(_ problem: FieldProblem, _ input: CheckinInput) -> APIAnswer {
        let refused: Bool
        switch problem.field {
        case "/at": refused = input.at.flatMap(RFC3339.parse) != nil
        case "/tz": refused = true
        default: refused = false
        }
        return .problem(
            refused ? 422 : 400, refused ? "the check-in cannot be stored" : "the body is not a valid check-in",
            errors: [.init(pointer: problem.field, detail: problem.message)])
    }
}

extension Substring {
    fileprivate func trimmed() -> Substring {
        var s = self
        while s.first == " " || s.first == "\t" { s = s.dropFirst() }
        while s.last == " " || s.last == "\t" { s = s.dropLast() }
        return s
    }
}
