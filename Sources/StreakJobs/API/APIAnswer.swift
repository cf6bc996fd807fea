import StreakCore
import StreakStore

/// One answer of the HTTP API (SPEC §11) as the server sends it: the jobs decide every status,
/// header and body; the server (StreakServer) only carries them. An error too: a step of a job
/// that refuses the request fails with the answer to send (a `Result`'s failure).
public struct APIAnswer: Error, Sendable {
    public var status: Int
    public var contentType: String
    public var headers: [(name: String, value: String)]
    public var body: String
    /// The answer to send instead, made when the server calls it (`later`).
    public var then: (@Sendable () -> APIAnswer)?
    /// The store's damage this answer met (a 503), for the server to keep: health then answers
    /// 503 too, though the few rows it reads may still read (`apiHealth(damage:)`).
    public var damage: String?

    public init(status: Int, contentType: String, headers: [(name: String, value: String)] = [], body: String) {
        self.status = status
        self.contentType = contentType
        self.headers = headers
        self.body = body
    }

    /// An answer a write step read everything for and leaves to be made after its transaction
    /// commits, by the request's own task: the engine's and the JSON's work off the thread that
    /// holds the store's one writer (`WriteGroups` on SQLite), the requests' side by side.
    public static func later(_ make: @escaping @Sendable () -> APIAnswer) -> APIAnswer {
        var answer = APIAnswer(status: 200, contentType: "", body: "")
        answer.then = make
        return answer
    }

    /// This answer as it is to be sent (`later`'s made now).
    public var made: APIAnswer { then?() ?? self }

    /// A JSON answer, its object on one line with a line break after it.
    public static func json(_ status: Int, _ value: JSON) -> APIAnswer {
        APIAnswer(status: status, contentType: "application/json", body: value.text + "\n")
    }

    /// One bad field or parameter of a request: a JSON pointer into the body (`/at`), or the name
    /// of a path parameter or header, and what is wrong with it and what would be valid.
    public struct FieldError: Sendable {
        public var pointer: String?
        public var parameter: String?
        public var detail: String

        public init(pointer: String? = nil, parameter: String? = nil, detail: String) {
            self.pointer = pointer
            self.parameter = parameter
            self.detail = detail
        }

        var json: JSON {
            .object(
                (pointer.map { [("pointer", JSON.string($0))] } ?? [])
                    + (parameter.map { [("parameter", JSON.string($0))] } ?? []) + [("detail", .string(detail))])
        }
    }

    /// RFC 9457 problem details: `type` (about:blank: the status says it), `title` (the status's
    /// phrase), `status`, `detail`, and `errors`, each bad field.
    public static func problem(
        _ status: Int, _ detail: String, errors: [FieldError] = [], headers: [(name: String, value: String)] = []
    ) -> APIAnswer {
        var fields: [(String, JSON)] = [
            ("type", .string("about:blank")), ("title", .string(phrase(status))), ("status", .int(status)),
            ("detail", .string(detail)),
        ]
        if !errors.isEmpty { fields.append(("errors", .array(errors.map(\.json)))) }
        return APIAnswer(
            status: status, contentType: "application/problem+json", headers: headers,
            body: JSON.object(fields).text + "\n")
    }

    /// The reason phrases of the statuses the API answers with (RFC 9110).
    public static func phrase(_ status: Int) -> String {
        switch status {
        case 200: "OK"
        case 201: "Created"
        case 400: "Bad Request"
        case 401: "Unauthorized"
        case 403: "Forbidden"
        case 404: "Not Found"
        case 405: "Method Not Allowed"
        case 409: "Conflict"
        case 413: "Content Too Large"
        case 415: "Unsupported Media Type"
        case 422: "Unprocessable Content"
        case 503: "Service Unavailable"
        default: "Internal Server Error"
        }
    }

    /// A store that could not answer: busy or out of reach for now (503, try again in a second), or
    /// not usable at all (503 without a retry).
    static func storeProblem(_ error: StoreError) -> APIAnswer {
        switch error.kind {
        case .busy, .outdated:
            problem(503, "the store is busy or out of reach for now; try again", headers: [("Retry-After", "1")])
        case .damaged:
            {
                var answer = problem(503, "the store cannot be used: \(error.description)")
                answer.damage = error.description
                return answer
            }()
        default: problem(503, "the store cannot be used: \(error.description)")
        }
    }

    /// What a job threw, as an answer: the store's errors by kind, a person's error as 422 (the
    /// rules refused it), anything else 503 (a failure of this server, never a 500).
    public static func failed(_ error: any Error) -> APIAnswer {
        switch error {
        case let a as APIAnswer: a
        case let e as StoreError: storeProblem(e)
        case let e as StreakdError: problem(e.status == .dataError || e.status == .usage ? 422 : 503, e.message)
        default: problem(503, "the request could not be done: \(error)", headers: [("Retry-After", "1")])
        }
    }
}

/// What a request needs done: an answer at once (a refusal), or a step to run in a write
/// transaction, perhaps one it shares with other requests (`WriteGroups`), whose answer goes out
/// only after the commit (SPEC §11: acknowledged means stored). A step that refuses the request
/// answers without writing.
public enum APIWork: Sendable {
    case answer(APIAnswer)
    case write(@Sendable (any StoreWriter) throws -> APIAnswer)
    /// A check-in, stored together with the others waiting (`WriteGroups`, `apiCheckins`).
    case checkin(CheckinWork)

    static func problem(
        _ status: Int, _ detail: String, errors: [APIAnswer.FieldError] = [],
        headers: [(name: String, value: String)] = []
    ) -> APIWork {
        .answer(.problem(status, detail, errors: errors, headers: headers))
    }
}

/// One check-in request's write: its input, the context it came with (its `now`), and the
/// check of its token when its transaction is the request's first (`tokenChecked`).
public struct CheckinWork: Sendable {
    let context: Context
    let input: CheckinInput
    var token: TokenCheck?

    /// The `now` of its request: check-ins stored together share it (`WriteGroups`).
    public var now: Instant { context.now }
}

/// Who a request is, by its bearer token (SPEC §11).
public struct APIClient: Sendable {
    /// The token's name, for the request log (never the token).
    public var name: String
    public var scope: TokenScope

    /// A connection of a Unix socket `[api] trust_socket` trusts: admin, without a token.
    public static let trustedSocket = APIClient(name: "(trusted socket)", scope: .admin)
}
