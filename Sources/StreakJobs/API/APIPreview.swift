import StreakCore
import StreakStore

/// `GET /v1/preview?until=&user=&kind=` (SPEC §11): `preview -o json`'s lines.
extension Context {
    /// What is wrong with the parameters (400 naming it; 404 for a user that is not there), or
    /// nil when the preview can start.
    public func apiPreviewProblem(until: String?, user: String?, kind: String?) -> APIAnswer? {
        func bad(_ parameter: String, _ detail: String) -> APIAnswer {
            .problem(
                400, "the query parameter \(parameter) is not valid",
                errors: [.init(parameter: parameter, detail: detail)])
        }
        do {
            _ = try untilInstant(until)
        } catch let e as StreakdError {
            return bad("until", e.message.hasPrefix("--until: ") ? String(e.message.dropFirst(9)) : e.message)
        } catch {
            return .failed(error)
        }
        if let kind, NotificationKind(rawValue: kind) == nil {
            let kinds = NotificationKind.allCases.map(\.rawValue).joined(separator: ", ")
            return bad("kind", "\(quoted(kind)) is not a kind; use one of \(kinds)")
        }
        guard let user else { return nil }
        if let rule = Validate.userID(user) { return bad("user", "\(quoted(user)) is not a user id; use \(rule)") }
        do {
            guard try store.read({ try $0.user(user) }) != nil else {
                return Self.noSuchUser(user)
            }
        } catch {
            return .failed(error)
        }
        return nil
    }

    /// The preview's JSON lines, handed to `send` a piece (some 256 KiB) at a time as they are made.
    public func apiPreview(
        until: String?, user: String?, kind: String?, send: @escaping @Sendable (UnsafeRawBufferPointer) -> Void
    ) throws {
        let lines = Printer(format: .json, out: { _ in }, err: { _ in }, outBytes: send)
        try Context(store: store, config: config, now: now, zones: zones, printer: lines, logger: logger, stop: stop)
            .preview(until: until, user: user, kind: kind)
    }
}
