import StreakCore
import StreakStore

/// `streakd user add|set|list|remove|import`.
extension Context {
    public func addUser(id: String, tz: String, remindAt: String?, remind: Bool, language: String? = nil) throws {
        let user = try checkedUser(
            id: id, tz: tz, remindAt: remindAt ?? "20:00", remind: remind, fields: ("ID", "--tz", "--remind-at"),
            language: language
        )
        .mapError(\.asError).get()
        let added = try store.write { w in try w.addUser(try inForce(user, in: w), at: now) }
        guard added else {
            throw StreakdError.data("user \(quoted(id)) exists already; change it with: streakd user set \(id)")
        }
        printer.record(
            userJSON(user),
            short: "added user \(id) (\(user.zone), reminders \(reminderText(user))\(languageNote(user)))")
    }

    public func setUser(id: String, tz: String?, remindAt: String?, remind: Bool?, language: String? = nil) throws {
        let user = try store.write { w -> User in
            try w.lockUser(id)  // a usual hour is worked out from what check-ins at once committed
            var user = try self.user(id, in: w)
            // A reminder time kept from before is not checked against the grid again.
            var checked = try checkedUser(
                id: id, tz: tz ?? user.zone, remindAt: remindAt ?? remindAtText(user),
                remind: remind ?? user.remind, fields: ("ID", "--tz", "--remind-at"), language: language,
                onGrid: remindAt != nil
            ).mapError(\.asError).get()
            if language == nil { checked.language = user.language }
            user = try inForce(checked, in: w)
            try w.updateUser(user, at: now)
            return user
        }
        printer.record(
            userJSON(user),
            short: "updated user \(id) (\(user.zone), reminders \(reminderText(user))\(languageNote(user)))")
    }

    public func listUsers() throws {
        let users = try store.read { r in try r.users() }
        if printer.format == .short && users.isEmpty {
            printer.err("no users yet; add one with: streakd user add ID --tz ZONE")
        }
        let width = max(4, users.map(\.id.count).max() ?? 0)
        let reminders = max(9, users.map { reminderText($0).count }.max() ?? 0)
        if printer.format == .short && !users.isEmpty {
            printer.out(
                pad("USER", width) + "  " + pad("ZONE", 30) + "  " + pad("REMINDERS", reminders) + "  LANGUAGE")
        }
        for u in users {
            printer.record(
                userJSON(u),
                short: pad(u.id, width) + "  " + pad(u.zone, 30) + "  " + pad(reminderText(u), reminders) + "  "
                    + languageText(u))
        }
    }

    public func removeUser(id: String) throws {
        if let problem = Validate.userID(id) {
            throw StreakdError.usage("\(quoted(id)) is not a user id; use \(problem)")
        }
        let removed = try store.write { w in try w.removeUser(id) }
        // Nothing to remove: adding the user first is not what was asked.
        guard removed else { throw StreakdError.data("unknown user \(quoted(id)); nothing was removed") }
        printer.record(
            .object([("user", .string(id)), ("removed", .bool(true))]), short: "removed user \(id) and all their data")
    }

    /// Bulk users from JSON lines; all-or-nothing. Existing users are updated.
    /// Read, checked and stored a line at a time in one transaction, which an
    /// invalid record rolls back.
    public func importUsers(path: String) throws {
        do {
            try importUsers(from: try InputFile(path))
        } catch let stop as InputFile.NotText {
            throw StreakdError.data(stop.message + "\nno user was added or changed")
        } catch let error as StoreError where error.kind == .full {
            throw storeFull(nothing: "no user was added or changed")
        }
    }

    private func importUsers(from file: InputFile) throws {
        var problems = Problems(file: file.name)
        let (added, updated) = try store.write { w -> (Int, Int) in
            let bulk = try w.userImport(at: now)
            var seen = ByteTable()  // user ids and the lines they are on
            while let line = try file.nextRecord() {
                do {
                    if let why = line.problem { throw FieldProblem(field: "", message: why) }
                    let user = try userRecord(line.string)
                    if let first = seen.add(user.id, value: UInt64(line.number)) {
                        throw FieldProblem(
                            field: "user", message: "\(quoted(user.id)) appears already on line \(first)")
                    }
                    guard problems.count == 0 else { continue }  // it will all roll back: only check the rest
                    try bulk.put(try inForce(user, in: w))
                } catch let p as FieldProblem {
                    problems.add(line: line.number, p)
                }
            }
            if problems.count > 0 {
                throw StreakdError.data(
                    problems.listed(more: false)
                        + "\n\(problems.count) invalid record\(problems.count == 1 ? "" : "s"); no user was added or changed"
                )
            }
            return try bulk.finish()
        }
        printer.record(
            .object([("added", .int(added)), ("updated", .int(updated))]),
            short: "imported users from \(file.name): \(added) added, \(updated) updated")
    }

    func userRecord(_ line: Substring) throws -> User {
        let o = try JSONInput.object(line).get()
        let fields = ["user", "tz", "remind_at", "remind", "lang"]
        if let unknown = o.keys.sorted().first(where: { !fields.contains($0) }) {
            throw JSONInput.unknownField(unknown, valid: fields)
        }
        let id = try JSONInput.string(o, "user", required: true).get()!
        let tz = try JSONInput.string(o, "tz", required: true).get()!
        let at = try JSONInput.string(o, "remind_at", required: false).get() ?? "20:00"
        var remind = true
        switch o["remind"] {
        case nil: break
        case .bool(let b)?: remind = b
        case let other?: throw FieldProblem(field: "remind", message: "must be true or false, not \(other.kind)")
        }
        // As `user add --lang`: a BCP 47 tag streakd has messages for; left out, the stored one stays.
        let language = try JSONInput.string(o, "lang", required: false).get()
        return try checkedUser(
            id: id, tz: tz, remindAt: at, remind: remind, fields: ("user", "tz", "remind_at"), language: language,
            languageField: "lang"
        ).get()
    }

    /// A user whose id, zone, reminder time and language are valid, or the field that is not.
    /// `onGrid`: the reminder time must fall on one of the timer's firings.
    func checkedUser(
        id: String, tz: String, remindAt: String, remind: Bool, fields: (String, String, String),
        language: String? = nil, languageField: String = "--lang", onGrid: Bool = true
    ) -> Result<User, FieldProblem> {
        if let problem = Validate.userID(id) {
            return .failure(FieldProblem(field: fields.0, message: "\(quoted(id)) is not a user id; use \(problem)"))
        }
        let zone: Zone
        switch zones.zone(tz) {
        case .success(let z): zone = z
        case .failure(let e): return .failure(FieldProblem(field: fields.1, message: e.message))
        }
        // `usual` (SPEC §14): the time in force comes from the history (`inForce`); 20:00 until then.
        let usual = remindAt == "usual"
        guard let seconds = usual ? UsualHour.fallback : Validate.wallTime(remindAt) else {
            return .failure(
                FieldProblem(
                    field: fields.2,
                    message: "\(quoted(remindAt)) is not a time of day; use HH:MM from 00:00 to 23:59, or usual")
            )
        }
        if onGrid, !usual, let problem = offGrid(seconds, in: zone) {
            return .failure(FieldProblem(field: fields.2, message: problem))
        }
        var tag: String?
        if let language {
            switch checkedLanguage(language) {
            case .success(let t): tag = t
            case .failure(let message): return .failure(FieldProblem(field: languageField, message: message.text))
            }
        }
        return .success(User(id: id, zone: tz, remindAt: seconds, remind: remind, language: tag, remindUsual: usual))
    }

    struct Message: Error {
        var text: String
    }

    /// A language tag in canonical case, if streakd has messages it can be served in.
    func checkedLanguage(_ text: String) -> Result<String, Message> {
        guard let tag = LanguageTag.canonical(text) else {
            return .failure(Message(text: "\(quoted(text)) is not a language tag; \(LanguageTag.rule)"))
        }
        guard config.messages.language(for: tag) != nil else {
            let languages = config.messages.languages.joined(separator: ", ")
            return .failure(
                Message(
                    text: "streakd has no messages in \(tag); use one of \(languages), or add a [messages.\(tag)] "
                        + "table to the configuration"))
        }
        return .success(tag)
    }

    /// Why a reminder time is refused: the timer fires every quarter hour of UTC (:00, :15, :30,
    /// :45), so a time between two firings would be reminded at the next one, minutes late.
    /// Every zone's offset today is a multiple of 15 minutes, so this is a local :00/:15/:30/:45.
    func offGrid(_ seconds: Int, in zone: Zone) -> String? {
        let quarter = 900
        let offset = zone.offset(at: now)
        let past = ((seconds - offset) % quarter + quarter) % quarter
        guard past != 0 else { return nil }
        let earlier = (seconds - past + 86400) % 86400
        let later = (earlier + quarter) % 86400
        return "\(Validate.wallTimeText(seconds)) falls between the timer's firings (every quarter hour, "
            + ":00, :15, :30 and :45 UTC), so its reminders would come minutes late; use "
            + "\(Validate.wallTimeText(earlier)) or \(Validate.wallTimeText(later))"
    }

    func userJSON(_ u: User) -> JSON {
        .object([
            ("user", .string(u.id)), ("timezone", .string(u.zone)),
            ("remind_at", .string(Validate.wallTimeText(u.remindAt))), ("remind_usual", .bool(u.remindUsual)),
            ("remind", .bool(u.remind)), ("language", .optional(u.language)),
        ])
    }

    /// `usual (18:00)` for a user reminded at their usual hour (18:00 in force now), else `at 20:00`;
    /// `off` without reminders.
    func reminderText(_ u: User) -> String {
        guard u.remind else { return "off" }
        return u.remindUsual ? "usual (\(Validate.wallTimeText(u.remindAt)))" : "at \(Validate.wallTimeText(u.remindAt))"
    }

    /// The reminder time as `--remind-at` and `remind_at` take it: `usual`, or the fixed HH:MM.
    func remindAtText(_ u: User) -> String { u.remindUsual ? "usual" : Validate.wallTimeText(u.remindAt) }

    /// `, language zh-Hans` for a user with a language of their own.
    func languageNote(_ u: User) -> String { u.language.map { ", language \($0)" } ?? "" }

    /// The user's language, or the default's with a note that it is one.
    func languageText(_ u: User) -> String { u.language ?? "\(config.messages.defaultLanguage) (default)" }
}

func pad(_ s: String, _ width: Int) -> String {
    s.count >= width ? s : s + String(repeating: " ", count: width - s.count)
}
