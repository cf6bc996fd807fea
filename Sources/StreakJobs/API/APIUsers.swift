import StreakCore
import StreakStore

/// The HTTP API's user resources (SPEC §11): a user, their streaks, badges and freezes, with the
/// command line's rules and JSON objects (`user list`, `status`, `badges -o json`).
extension Context {
    /// The fields of `PUT /v1/users/{user}`.
    static let apiUserFields = ["tz", "remind_at", "lang", "remind"]

    /// `PUT /v1/users/{user}`: creates the user (201; `tz` required) or updates the fields given
    /// (200; the others keep their values); 409 for a user that exists when `ifNoneMatch` is `*`.
    public func apiPutUser(
        user id: String, contentType: String?, body: [UInt8], ifNoneMatch: String?
    ) -> APIWork {
        if let problem = Self.jsonContentProblem(contentType) { return .answer(problem) }
        if let problem = Validate.userID(id) {
            return .problem(
                404, "no such path: not a user id",
                errors: [.init(parameter: "user", detail: "\(quoted(id)) is not a user id; use \(problem)")])
        }
        let parsed = Self.bodyObject(body, fields: Self.apiUserFields, what: "a valid user") { b in
            (tz: b.string("tz"), remindAt: b.string("remind_at"), lang: b.string("lang"), remind: b.bool("remind"))
        }
        let (tz, remindAt, lang, remindGiven): (String?, String?, String?, Bool?)
        switch parsed {
        case .success(let fields): (tz, remindAt, lang, remindGiven) = fields
        case .failure(let problem): return .answer(problem)
        }
        return .write { w -> APIAnswer in
            try w.lockUser(id)  // a usual hour is worked out from what check-ins at once committed
            let existing = try w.user(id)
            if existing != nil && ifNoneMatch?.trimmingSpaces == "*" {
                return .problem(409, "the user \(quoted(id)) exists already (If-None-Match: *)")
            }
            guard let zone = tz ?? existing?.zone else {
                return .problem(
                    422, "the user cannot be created",
                    errors: [
                        .init(pointer: "/tz", detail: "missing; a new user needs a zone, such as Europe/Berlin")
                    ])
            }
            let at = remindAt ?? existing.map(remindAtText) ?? "20:00"
            func checked(leftOut: Set<String> = []) -> Result<User, FieldProblem> {
                checkedUser(
                    id: id, tz: leftOut.contains("tz") ? "UTC" : zone,
                    remindAt: leftOut.contains("remind_at") ? "20:00" : at,
                    remind: remindGiven ?? existing?.remind ?? true, fields: ("user", "tz", "remind_at"),
                    language: leftOut.contains("lang") ? nil : lang, languageField: "lang",
                    onGrid: existing == nil || remindAt != nil)
            }
            var user: User
            switch checked() {
            case .success(let u): user = u
            case .failure:
                let problems = FieldProblem.every { leftOut in
                    if case .failure(let p) = checked(leftOut: leftOut) { p } else { nil }
                }
                return Self.userProblem(problems, remindAt: remindAt, lang: lang)
            }
            if lang == nil { user.language = existing?.language }
            user = try inForce(user, in: w)
            if existing == nil {
                _ = try w.addUser(user, at: now)
            } else {
                try w.updateUser(user, at: now)
            }
            return .json(existing == nil ? 201 : 200, userJSON(user))
        }
    }

    /// User fields refused (SPEC §11), each named: 400 when a value does not parse (a time that is
    /// not HH:MM, a language that is no tag), else 422, each parsing and refused (a zone tzdata
    /// does not have, as for a check-in; a time between the timer's firings; a language without
    /// messages).
    static func userProblem(_ problems: [FieldProblem], remindAt: String?, lang: String?) -> APIAnswer {
        let malformed = problems.contains { p in
            switch p.field {
            case "remind_at": remindAt.map { $0 != "usual" && Validate.wallTime($0) == nil } ?? false
            case "lang": lang.map { LanguageTag.canonical($0) == nil } ?? false
            default: false
            }
        }
        return .problem(
            malformed ? 400 : 422, malformed ? "the body is not a valid user" : "the user cannot be stored",
            errors: problems.map { .init(pointer: "/" + $0.field, detail: $0.message) })
    }

    /// `GET /v1/users/{user}`: the user object of `user list -o json`.
    public func apiUser(user id: String) -> APIAnswer {
        reading(user: id) { user, _ in .json(200, userJSON(user)) }
    }

    /// `DELETE /v1/users/{user}`: 204 once the user and all their data are gone.
    public func apiDeleteUser(user id: String) -> APIWork {
        guard Validate.userID(id) == nil else { return .answer(Self.noSuchUser(id)) }
        return .write { w in
            try w.removeUser(id)
                ? APIAnswer(status: 204, contentType: "", body: "") : Self.noSuchUser(id, adding: false)
        }
    }

    /// `GET /v1/users/{user}/streaks`: every streak's object, as `status -o json` prints them.
    public func apiStreaks(user id: String) -> APIAnswer {
        reading(user: id) { user, r in
            let achieved = try achievements(of: user, in: r)
            let streaks = Set(try r.streaks(of: id) + ["daily"]).sorted()
            return .json(
                200,
                .array(
                    try streaks.map { streak in
                        streakRecord(
                            user: user, streak: streak, history: try history(of: user, streak: streak, in: r),
                            achieved: achieved
                        ).0
                    }))
        }
    }

    /// `GET /v1/users/{user}/badges`: the `badges -o json` objects, as an array.
    public func apiBadges(user id: String) -> APIAnswer {
        reading(user: id) { user, r in .json(200, .array(badgeRecords(of: user, try achievements(of: user, in: r)))) }
    }

    /// `POST /v1/users/{user}/streaks/{streak}/freezes`: `{"action":"add"}` or
    /// `{"action":"use","date"}`, then the streak object; 422 when the rules refuse it.
    public func apiFreeze(user id: String, streak: String, contentType: String?, body: [UInt8]) -> APIWork {
        if let problem = Self.jsonContentProblem(contentType) { return .answer(problem) }
        if let problem = Validate.streakID(streak) {
            return .problem(
                404, "no such streak",
                errors: [.init(parameter: "streak", detail: "\(quoted(streak)) is not a streak id; use \(problem)")])
        }
        let parsed = Self.bodyObject(body, fields: ["action", "date"], what: "a valid freeze request") { b in
            let action = b.string("action", required: true)
            if let action, action != "add" && action != "use" {
                b.refuse("action", "\(quoted(action)) is not an action; use add or use")
            }
            let date = b.string("date")
            if let date, LocalDate(date) == nil {
                b.refuse("date", "\(quoted(date)) is not a date; use YYYY-MM-DD")
            } else if action == "add", date != nil {
                b.refuse("date", "only a freeze used takes a date; leave it out to add one")
            }
            return (action: action ?? "", date: date)
        }
        let (action, date): (String, String?)
        switch parsed {
        case .success(let request): (action, date) = request
        case .failure(let problem): return .answer(problem)
        }
        return .write { w -> APIAnswer in
            guard Validate.userID(id) == nil, let user = try w.user(id) else { return Self.noSuchUser(id) }
            do {
                if action == "add" {
                    _ = try grantFreeze(user: user, streak: streak, in: w)
                } else {
                    _ = try spendFreeze(user: user, streak: streak, date: date, field: "/date", in: w)
                }
            } catch let refused as StreakdError where refused.status == .dataError || refused.status == .usage {
                // A refusal about the date names it (`/date: ...`); the others are the action's.
                let onDate = refused.message.hasPrefix("/date: ")
                return .problem(
                    422, "the freeze is not allowed",
                    errors: [
                        .init(
                            pointer: onDate ? "/date" : "/action",
                            detail: onDate ? String(refused.message.dropFirst(7)) : refused.message)
                    ])
            }
            let history = try history(of: user, streak: streak, in: w)
            return .json(200, try streakObject(user: user, streak: streak, history: history, in: w))
        }
    }

    /// A read of one user's resource: 404 for a user that is not there.
    func reading(user id: String, _ body: (User, any StoreReader) throws -> APIAnswer) -> APIAnswer {
        do {
            return try store.read { r -> APIAnswer in
                guard Validate.userID(id) == nil, let user = try r.user(id) else { return Self.noSuchUser(id) }
                return try body(user, r)
            }
        } catch {
            return .failed(error)
        }
    }

    /// 404 for a path's user: an id that is none says what one is; an unknown one, how to add
    /// it (`adding`: not where the request removes it).
    static func noSuchUser(_ id: String, adding: Bool = true) -> APIAnswer {
        let detail =
            Validate.userID(id).map { "\(quoted(id)) is not a user id; use \($0)" }
            ?? (adding ? UnknownUser.request.message(id) : "unknown user \(quoted(id))")
        return .problem(404, "no such user", errors: [.init(parameter: "user", detail: detail)])
    }
}
