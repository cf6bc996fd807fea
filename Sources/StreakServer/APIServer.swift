import HTTPTypes
import Hummingbird
import Logging
import NIOCore
import NIOHTTP1
import NIOPosix
import ServiceLifecycle
import StreakJobs
import Synchronization
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
    /// Where the requests' write steps commit, together (group commit).
    public let writes: WriteGroups
    /// The threads the jobs run on (the store's calls block). On PostgreSQL a request's thread
    /// spends most of its time waiting for the server's answers (round trips), on a connection
    /// of its own: 64 threads (and up to 64 connections), so 64 clients' requests are in flight
    /// at once rather than queued behind 16 (check-ins commit on `writes`' lanes instead). On
    /// SQLite the writes go through `writes`' one thread and the reads through `sqliteReaders`
    /// connections: a thread each. Sixteen threads took turns on the four connections and
    /// answered GETs 12 % slower on 2 cores (BENCHMARKS.md, the API's table). The cost: while
    /// four slow reads run (a scrape of a large store's metrics), a check-in's first step, which
    /// reads nothing, waits for a thread too, not only the reads.
    let pool: NIOThreadPool
    /// The connections SQLite's reads take turns on, and the threads that make them.
    public static let sqliteReaders = 4
    /// How many threads `pool` has: as many store connections may be in use at once.
    public let threads: Int
    /// The requests answered, for `GET /metrics`.
    let requests = RequestCounts()
    /// The tokens, kept between requests (each request still checks its own in the store).
    let tokens = APITokens()
    /// The store's damage a request met, for health (`APIAnswer.damage`): kept until serve stops.
    let damage = SeenDamage()

    public init(
        sockets: [ListenSocket], settings: APISettings, logger: Logger, writes: WriteGroups,
        context: @escaping @Sendable () throws -> Context
    ) {
        self.sockets = sockets
        self.settings = settings
        self.logger = logger
        self.writes = writes
        self.context = context
        threads = writes.shared ? Self.sqliteReaders : 64
        pool = NIOThreadPool(numberOfThreads: threads)
        pool.start()
    }

    /// Whether the request came over a Unix socket `[api] trust_socket` lets act as admin.
    @TaskLocal static var trustedConnection = false

    /// Serves until SIGTERM or SIGINT, then stops accepting, answers the requests already received
    /// (at most 10 s) and returns. `listening` is told where it listens once it does (the port
    /// the system chose for port 0), once for each socket.
    public func run(listening: @escaping @Sendable (String) -> Void) async throws {
        // The requests at debug (SPEC §11), the server's own workings at info and above.
        var workings = logger
        workings.logLevel = max(logger.logLevel, .info)
        let server = Listeners(
            sockets: sockets, responder: router().buildResponder(), settings: settings, logger: workings,
            listening: listening)
        var configuration = ServiceGroupConfiguration(
            services: [server], gracefulShutdownSignals: [.sigterm, .sigint], logger: workings)
        configuration.maximumGracefulShutdownDuration = .seconds(10)
        do {
            try await ServiceGroup(configuration: configuration).run()
        } catch let error as IOError {
            throw ListenError(errno: error.errnoCode)
        }
    }

    static let idempotencyKey = HTTPField.Name("Idempotency-Key")!

    /// Runs a job on the thread pool, after checking the request's token when it `needs` a scope,
    /// logs the request (at debug: method, path, status, duration and token name, never the token
    /// or the body), and makes the answer a response.
    func answer(
        _ request: Request, needs: TokenScope?, _ job: @escaping @Sendable (Context) -> APIAnswer
    ) async throws -> Response {
        try await answer(request, needs: needs, work: { .answer(job($0)) })
    }

    /// As above, for a job whose work may be a write step: it runs in the next group commit, and
    /// its answer is sent after that commit.
    func answer(
        _ request: Request, needs: TokenScope?, work job: @escaping @Sendable (Context) -> APIWork
    ) async throws -> Response {
        try await answer(request, needs: needs) { c, _ in job(c) }
    }

    /// As above, for a job that records who asked (SPEC §14's author): the token's name.
    func answer(
        _ request: Request, needs: TokenScope?, _ job: @escaping @Sendable (Context, String) -> APIWork
    ) async throws -> Response {
        let started = ContinuousClock.now
        let authorization = request.headers[.authorization]
        let trusted = Self.trustedConnection
        let (work, client) = try await pool.runIfActive { () -> (APIWork, String?) in
            switch authorized(authorization, needs: needs, trusted: trusted) {
            case .failure(let refused): return (.answer(refused), nil)
            case .success(let (c, client)): return (c.tokenChecked(job(c, client ?? "-")), client)
            }
        }
        let answer: APIAnswer
        switch work {
        case .answer(let done): answer = done
        case .write(let step) where writes.shared: answer = await writes.write(step).made
        case .write(let step): answer = try await pool.runIfActive { writes.alone(step).made }
        case .checkin(let work): answer = await writes.checkin(work).made
        }
        if let found = answer.damage { damage.note(found) }
        log(request, status: answer.status, since: started, client: client)
        return Self.response(answer)
    }

    /// The request's context, and its token's name, once the token is matched when the request
    /// `needs` a scope (the context's first transaction checks it is still stored); or the answer
    /// that refuses it. On the thread pool: it may read the store.
    /// `trusted`: the request came over a socket `[api] trust_socket` trusts: it acts as admin.
    func authorized(_ authorization: String?, needs: TokenScope?, trusted: Bool) -> Result<
        (Context, String?), APIAnswer
    > {
        let c: Context
        do {
            c = try context()
        } catch {
            return .failure(APIAnswer.failed(error))
        }
        guard let needs else { return .success((c, nil)) }
        if trusted { return .success((c, APIClient.trustedSocket.name)) }
        return tokens.authorize(authorization, needs: needs, in: c).map { client, check in
            (c.checking(check), client.name)
        }
    }

    func log(_ request: Request, status: Int, since started: ContinuousClock.Instant, client: String?) {
        requests.count(request.uri.path, status)
        logger.debug(
            "request",
            metadata: [
                "method": "\(request.method.rawValue)", "path": "\(request.uri.path)", "status": "\(status)",
                "duration": "\(ContinuousClock.now - started)", "token": "\(client ?? "-")",
            ])
    }

    static func response(_ answer: APIAnswer) -> Response {
        var headers = HTTPFields()
        // None on an answer without content (204).
        if !answer.contentType.isEmpty { headers[.contentType] = answer.contentType }
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
    /// `streakd_api_requests_total`: the answers made here (no route, a wrong method, a body too
    /// large) are counted too, with the route's template or `other`.
    let requests: RequestCounts

    /// `64 KiB`, `16 MiB`: a limit as the documents give it.
    static func size(_ bytes: Int) -> String {
        bytes % (1 << 20) == 0 ? "\(bytes >> 20) MiB" : "\(bytes >> 10) KiB"
    }

    func handle(
        _ request: Request, context: Context, next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        do {
            return try await next(request, context)
        } catch let error as any HTTPResponseError {
            let status = Int(error.status.code)
            if status == 404, let allowed = APIRoutes.methods(of: request.uri.path) {
                return counted(
                    request,
                    .problem(
                        405, "\(request.uri.path) takes \(allowed), not \(request.method.rawValue)",
                        headers: [("Allow", allowed)]))
            }
            let detail =
                switch status {
                case 404: "no such path: \(request.method.rawValue) \(request.uri.path)"
                case 413: "the body is larger than \(Self.size(APIRoutes.bodyLimit(of: request.uri.path)))"
                default: "\(error)"
                }
            return counted(request, .problem(status, detail))
        } catch let error as HTTPParserError {
            // Not HTTP/1.1 (a malformed chunked body): Hummingbird answers 400 and closes the
            // connection, whose next bytes cannot be read as a request.
            throw error
        } catch {
            logger.error("request failed", metadata: ["path": "\(request.uri.path)", "error": "\(error)"])
            return counted(request, .failed(error))
        }
    }

    func counted(_ request: Request, _ answer: APIAnswer) -> Response {
        requests.count(request.uri.path, answer.status)
        return APIServer.response(answer)
    }
}

/// Why a socket could not be listened on, in words (NIO's own text reads "bind(descriptor:ptr:
/// bytes:): Address already in use) (errno: 98)").
struct ListenError: Error, CustomStringConvertible {
    var errno: CInt

    var description: String {
        switch errno {
        case EADDRINUSE: "the address is in use by another process (ss -ltnp shows which)"
        case EACCES: "permission denied (ports below 1024 need privileges; a socket file, write access to its folder)"
        case EADDRNOTAVAIL: "this host has no such address"
        default: String(cString: strerror(errno)).lowercased()
        }
    }
}

/// The store's damage a request met (`APIAnswer.damage`), kept for health until serve stops:
/// damage does not heal; a restored store is served by a restarted serve.
final class SeenDamage: Sendable {
    private let seen = Mutex<String?>(nil)
    func note(_ damage: String) { seen.withLock { $0 = damage } }
    var value: String? { seen.withLock { $0 } }
}
