import HTTPTypes
import Hummingbird
import Logging
import NIOCore
import NIOHTTP1
import NIOPosix
import ServiceLifecycle
import StreakJobs
import UnixSignals

#if canImport(Glibc)
    import Glibc
#endif

/// `streakd serve` (SPEC §11): Hummingbird's HTTP/1.1 server over the jobs' API endpoints. Wiring
/// only: every status, header and body is the jobs' (`APIAnswer`); this routes requests to them,
/// runs them on a thread pool (the store's calls block), and sends what they answer.
public struct APIServer: Sendable {
    public let sockets: [ListenSocket]
    public let settings: APISettings
    public let logger: Logger
    /// A context for one request: the store, configuration and "now" as of the request.
    public let context: @Sendable () throws -> Context

    public init(
        sockets: [ListenSocket], settings: APISettings, logger: Logger,
        context: @escaping @Sendable () throws -> Context
    ) {
        self.sockets = sockets
        self.settings = settings
        self.logger = logger
        self.context = context
    }

    /// Whether the request came over a Unix socket `[api] trust_socket` lets act as admin.
    @TaskLocal static var trustedConnection = false

    /// Serves until SIGTERM or SIGINT, then stops accepting, answers the requests already received
    /// (at most 10 s) and returns. `listening` is told where it listens once it does (the port
    /// the system chose for port 0), once for each socket.
    public func run(listening: @escaping @Sendable (String) -> Void) async throws {
        let server = Listeners(
            sockets: sockets, responder: router().buildResponder(), settings: settings, logger: logger,
            listening: listening)
        var configuration = ServiceGroupConfiguration(
            services: [server], gracefulShutdownSignals: [.sigterm, .sigint], logger: logger)
        configuration.maximumGracefulShutdownDuration = .seconds(10)
        try await ServiceGroup(configuration: configuration).run()
    }

    func router() -> Router<BasicRequestContext> {
        let router = Router()
        router.middlewares.add(ProblemMiddleware(logger: logger))
        router.get("/v1/health") { request, _ in
            try await answer(request, needs: nil) { c, _ in c.apiHealth() }
        }
        router.post("/v1/users/:user/checkins") { request, context in
            var request = request
            let body = try await request.collectBody(upTo: Context.apiBodyLimit)
            let user = context.parameters.get("user") ?? ""
            let contentType = request.headers[.contentType]
            let key = request.headers[Self.idempotencyKey]
            return try await answer(request, needs: .ingest) { c, _ in
                c.apiCheckin(
                    user: user, contentType: contentType, body: Array(body.readableBytesView), idempotencyKey: key)
            }
        }
        router.get("/v1/users/:user/streaks/:streak") { request, context in
            let user = context.parameters.get("user") ?? ""
            let streak = context.parameters.get("streak") ?? ""
            return try await answer(request, needs: .read) { c, _ in c.apiStreak(user: user, streak: streak) }
        }
        return router
    }

    static let idempotencyKey = HTTPField.Name("Idempotency-Key")!

    /// Runs a job on the thread pool, after checking the request's token when it `needs` a scope,
    /// logs the request (at debug: method, path, status, duration and token name, never the token
    /// or the body), and makes the answer a response.
    func answer(
        _ request: Request, needs: TokenScope?, _ job: @escaping @Sendable (Context, APIClient?) -> APIAnswer
    ) async throws -> Response {
        let started = ContinuousClock.now
        let authorization = request.headers[.authorization]
        let trusted = Self.trustedConnection
        let (answer, client) = try await NIOThreadPool.singleton.runIfActive { [context] () -> (APIAnswer, String?) in
            let c: Context
            do {
                c = try context()
            } catch {
                return (APIAnswer.failed(error), nil)
            }
            guard let needs else { return (job(c, nil), nil) }
            if trusted { return (job(c, .trustedSocket), APIClient.trustedSocket.name) }
            switch c.authorize(authorization, needs: needs) {
            case .failure(let refused): return (refused, nil)
            case .success(let client): return (job(c, client), client.name)
            }
        }
        logger.debug(
            "request",
            metadata: [
                "method": "\(request.method.rawValue)", "path": "\(request.uri.path)", "status": "\(answer.status)",
                "duration": "\(ContinuousClock.now - started)", "token": "\(client ?? "-")",
            ])
        return Self.response(answer)
    }

    static func response(_ answer: APIAnswer) -> Response {
        var headers = HTTPFields()
        headers[.contentType] = answer.contentType
        for (name, value) in answer.headers {
            if let name = HTTPField.Name(name) { headers.append(HTTPField(name: name, value: value)) }
        }
        return Response(
            status: HTTPResponse.Status(code: answer.status), headers: headers,
            body: ResponseBody(byteBuffer: ByteBuffer(string: answer.body)))
    }

    /// A socket file left by a server that is gone: binding to it would fail. Only a socket is
    /// removed, never another kind of file.
    static func removeStaleSocket(_ path: String) {
        var info = stat()
        if lstat(path, &info) == 0 && (info.st_mode & S_IFMT) == S_IFSOCK { unlink(path) }
    }
}

/// Errors a route or Hummingbird throws (an unknown path, a body over the limit) as problem
/// details: no request is answered with Hummingbird's own error bodies, nor with a 500.
struct ProblemMiddleware<Context: RequestContext>: RouterMiddleware {
    let logger: Logger

    func handle(
        _ request: Request, context: Context, next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        do {
            return try await next(request, context)
        } catch let error as any HTTPResponseError {
            let status = Int(error.status.code)
            if status == 404, let allowed = Self.methods(of: request.uri.path) {
                return APIServer.response(
                    .problem(
                        405, "\(request.uri.path) takes \(allowed), not \(request.method.rawValue)",
                        headers: [("Allow", allowed)]))
            }
            let detail =
                switch status {
                case 404: "no such path: \(request.method.rawValue) \(request.uri.path)"
                case 413: "the body is larger than \(StreakJobs.Context.apiBodyLimit / 1024) KiB"
                default: "\(error)"
                }
            return APIServer.response(.problem(status, detail))
        } catch let error as HTTPParserError {
            // Not HTTP/1.1 (a malformed chunked body): Hummingbird answers 400 and closes the
            // connection, whose next bytes cannot be read as a request.
            throw error
        } catch {
            logger.error("request failed", metadata: ["path": "\(request.uri.path)", "error": "\(error)"])
            return APIServer.response(.failed(error))
        }
    }

    /// The methods a path of the API takes (for 405 and `Allow`), or nil for a path it does not have.
    static func methods(of path: String) -> String? {
        let parts = path.split(separator: "/", omittingEmptySubsequences: false).dropFirst()
        switch Array(parts) {
        case ["v1", "health"]: return "GET"
        case let p where p.count == 4 && p[0] == "v1" && p[1] == "users" && p[3] == "checkins": return "POST"
        case let p where p.count == 5 && p[0] == "v1" && p[1] == "users" && p[3] == "streaks": return "GET"
        default: return nil
        }
    }
}
