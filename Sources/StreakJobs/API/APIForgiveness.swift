import StreakCore
import StreakStore

/// The HTTP API's pauses and repairs (SPEC §14): the command line's jobs (`pause`, `resume`,
/// `repair`) in a write step, their records as JSON, their refusals as 422 with the reason.
/// Scope admin, as freezes; the author recorded is the token's name.
extension Context {
    /// The fields of `POST /v1/users/{user}/pauses`.
    static let apiPauseFields = ["streak", "from", "until", "all"]

    /// `POST /v1/users/{user}/pauses`: `{"streak","from","until"}` (streak default daily) or
    /// `{"all":true,"from","until"}` → 201 with the pauses recorded (`pause -o json`'s objects, an
    /// array); 422 when the rules refuse it (for any streak: then nothing is recorded).
    public func apiPause(user id: String, contentType: String?, body: [UInt8], author: String) -> APIWork {
        if let problem = Self.jsonContentProblem(contentType) { return .answer(problem) }
        let parsed = Self.bodyObject(body, fields: Self.apiPauseFields, what: "a valid pause") { b in
            let streak = b.string("streak")
            if let streak, let problem = Validate.streakID(streak) {
                b.refuse("streak", "\(quoted(streak)) is not a streak id; use \(problem)")
            }
            let all = b.bool("all") ?? false
            if all && streak != nil { b.refuse("all", "a pause names one streak or all of them, not both") }
            func date(_ name: String) -> LocalDate {
                guard let text = b.string(name, required: true) else { return LocalDate(day: 0) }
                guard let d = LocalDate(text) else {
                    b.refuse(name, "\(quoted(text)) is not a date; use YYYY-MM-DD")
                    return LocalDate(day: 0)
                }
                return d
            }
            return (streak: streak, all: all, span: DateSpan(from: date("from"), until: date("until")))
        }
        let (streak, all, span): (String?, Bool, DateSpan)
        switch parsed {
        case .success(let request): (streak, all, span) = request
        case .failure(let problem): return .answer(problem)
        }
        return .write { w -> APIAnswer in
            guard Validate.userID(id) == nil, let user = try w.user(id) else { return Self.noSuchUser(id) }
            let streaks = try forgivenStreaks(streak, all: all, of: id, in: w)
            switch try pause(user: user, streaks: streaks, span, author: author, names: .fields, in: w) {
            case .success(let records): return .json(201, .array(records.map(\.json)))
            case .failure(let refused):
                return .problem(
                    422, "the pause is not allowed",
                    errors: [.init(pointer: "/" + refused.field, detail: refused.reason)])
            }
        }
    }

    /// `DELETE /v1/users/{user}/pauses/current[?streak=S|?all=true]`: `streakd resume`: ends the
    /// pause in force from today on, or removes the next one that has not begun (of the streak,
    /// default daily, or of every streak) → 200 with what it did (`resume -o json`'s objects, an
    /// array); 422 when there is no pause to resume.
    public func apiResume(user id: String, streak: String?, all allText: String?, author: String) -> APIWork {
        let all: Bool
        switch allText {
        case nil, "false": all = false
        case "true": all = true
        case let other?:
            return .problem(
                400, "the query parameter all is not valid",
                errors: [.init(parameter: "all", detail: "\(quoted(other)) is not a boolean; use true or false")])
        }
        if let streak, let problem = Validate.streakID(streak) {
            return .problem(
                400, "the query parameter streak is not valid",
                errors: [.init(parameter: "streak", detail: "\(quoted(streak)) is not a streak id; use \(problem)")])
        }
        if all && streak != nil {
            return .problem(
                400, "name one streak or all of them",
                errors: [.init(parameter: "all", detail: "a resume names one streak or all of them, not both")])
        }
        return .write { w -> APIAnswer in
            guard Validate.userID(id) == nil, let user = try w.user(id) else { return Self.noSuchUser(id) }
            let streaks = try forgivenStreaks(streak, all: all, of: id, in: w)
            let records = try resume(user: user, streaks: streaks, author: author, in: w)
            guard !records.isEmpty else {
                return .problem(
                    422, "there is no pause to resume",
                    errors: [
                        .init(
                            parameter: all ? "all" : "streak",
                            detail: Self.nothingToResume(id, streak: all ? nil : streak ?? "daily"))
                    ])
            }
            return .json(200, .array(records.map(\.json)))
        }
    }

    /// `POST /v1/users/{user}/streaks/{streak}/repair` (no body, or `{}`): `streakd repair` → 201
    /// with the repair recorded (`repair -o json`'s object); 422 with the reason when refused
    /// (nothing broken, too late, none left).
    public func apiRepair(user id: String, streak: String, contentType: String?, body: [UInt8], author: String)
        -> APIWork
    {
        if !body.isEmpty, let problem = Self.jsonContentProblem(contentType) { return .answer(problem) }
        if case .failure(let problem) = Self.bodyObject(
            body, fields: [], what: "a valid repair request", emptyIsObject: true, { _ in })
        {
            return .answer(problem)
        }
        if let problem = Validate.streakID(streak) {
            return .problem(
                404, "no such streak",
                errors: [.init(parameter: "streak", detail: "\(quoted(streak)) is not a streak id; use \(problem)")])
        }
        return .write { w -> APIAnswer in
            guard Validate.userID(id) == nil, let user = try w.user(id) else { return Self.noSuchUser(id) }
            switch try repair(user: user, streak: streak, author: author, in: w) {
            case .success(let record): return .json(201, record.json)
            case .failure(let refused):
                return .problem(
                    422, "the repair is not allowed",
                    errors: [.init(parameter: "streak", detail: "\(id) (\(streak)): \(refused.reason)")])
            }
        }
    }
}
