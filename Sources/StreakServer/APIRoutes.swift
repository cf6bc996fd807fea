import Foundation
import HTTPTypes
import Hummingbird
import NIOCore
import NIOPosix
import StreakJobs
import Synchronization

/// The API's paths (SPEC §11, docs/openapi.json): each route takes what the request carries and
/// hands it to its job.
enum APIRoutes {
    /// The route a path is (its template, as docs/openapi.json names it) and the methods it takes
    /// (for 405 and `Allow`); nil for a path the API does not have. The one list of its paths here.
    static func route(of path: String) -> (template: String, methods: String)? {
        let p = Array(path.split(separator: "/", omittingEmptySubsequences: false).dropFirst())
        guard p.first == "v1" else {
            switch p {
            case ["openapi.json"]: return ("/openapi.json", "GET")
            case ["metrics"]: return ("/metrics", "GET")
            default: return nil
            }
        }
        switch (p.count, p.count > 1 ? p[1] : "", p.count > 3 ? p[3] : "") {
        case (2, "health", _): return ("/v1/health", "GET")
        case (2, "preview", _): return ("/v1/preview", "GET")
        case (2, "checkins", _): return ("/v1/checkins", "POST")
        case (3, "users", _): return ("/v1/users/{user}", "GET, PUT, DELETE")
        case (4, "users", "checkins"): return ("/v1/users/{user}/checkins", "POST")
        case (4, "users", "streaks"): return ("/v1/users/{user}/streaks", "GET")
        case (5, "users", "streaks"): return ("/v1/users/{user}/streaks/{streak}", "GET")
        case (4, "users", "badges"): return ("/v1/users/{user}/badges", "GET")
        case (6, "users", "streaks") where p[5] == "freezes":
            return ("/v1/users/{user}/streaks/{streak}/freezes", "POST")
        case (6, "users", "streaks") where p[5] == "repair":
            return ("/v1/users/{user}/streaks/{streak}/repair", "POST")
        case (4, "users", "pauses"): return ("/v1/users/{user}/pauses", "POST")
        case (5, "users", "pauses") where p[4] == "current": return ("/v1/users/{user}/pauses/current", "DELETE")
        default: return nil
        }
    }

    /// The methods a path takes, for `Allow`: HEAD wherever GET is (the router answers it).
    static func methods(of path: String) -> String? {
        route(of: path).map { $0.methods.replacingOccurrences(of: "GET", with: "GET, HEAD") }
    }

    /// The largest body a path takes.
    static func bodyLimit(of path: String) -> Int {
        path == "/v1/checkins" ? Context.apiBatchLimit : Context.apiBodyLimit
    }
}

extension APIServer {
    func router() -> Router<BasicRequestContext> {
        // HEAD wherever GET is (RFC 9110 §9.1): the GET's answer without its body.
        let router = Router(options: .autoGenerateHeadEndpoints)
        router.middlewares.add(ProblemMiddleware(logger: logger, requests: requests))
        router.get("/v1/health") { request, _ in
            let damage = damage.value
            return try await answer(request, needs: nil) { c in c.apiHealth(damage: damage) }
        }
        router.get("/openapi.json") { request, _ in
            try await answer(request, needs: nil) { _ in
                APIAnswer(status: 200, contentType: "application/json", body: APIDocument.text)
            }
        }
        router.get("/metrics") { request, _ in
            let openMetrics = MetricsText.prefersOpenMetrics(request.headers[.accept])
            let served = requests.families()
            return try await answer(request, needs: .read) { c in
                do {
                    return APIAnswer(
                        status: 200,
                        contentType: openMetrics ? MetricsText.openMetricsType : MetricsText.prometheusType,
                        body: try c.metricsText(openMetrics: openMetrics, extra: served))
                } catch {
                    return .failed(error)
                }
            }
        }
        router.post("/v1/checkins") { request, _ in
            if let refused = try await refused(request, needs: .ingest) { return refused }
            var request = request
            let body = try await request.collectBody(upTo: Context.apiBatchLimit)
            let contentType = request.headers[.contentType]
            let skip = request.uri.queryParameters["skip_invalid"].map(String.init)
            return try await answer(request, needs: .ingest) { c in
                switch skip {
                case nil, "false":
                    c.apiBatch(contentType: contentType, body: Array(body.readableBytesView), skipInvalid: false)
                case "true":
                    c.apiBatch(contentType: contentType, body: Array(body.readableBytesView), skipInvalid: true)
                case let other?:
                    .problem(
                        400, "the query parameter skip_invalid is not valid",
                        errors: [
                            .init(parameter: "skip_invalid", detail: "\(other) is not a boolean; use true or false")
                        ])
                }
            }
        }
        router.post("/v1/users/:user/checkins") { request, context in
            if let refused = try await refused(request, needs: .ingest) { return refused }
            var request = request
            let body = try await request.collectBody(upTo: Context.apiBodyLimit)
            let user = context.path("user")
            let contentType = request.headers[.contentType]
            let key = request.headers[Self.idempotencyKey]
            return try await answer(
                request, needs: .ingest,
                work: { c in
                    c.apiCheckin(
                        user: user, contentType: contentType, body: Array(body.readableBytesView), idempotencyKey: key)
                })
        }
        router.get("/v1/users/:user") { request, context in
            let user = context.path("user")
            return try await answer(request, needs: .read) { c in c.apiUser(user: user) }
        }
        router.put("/v1/users/:user") { request, context in
            if let refused = try await refused(request, needs: .admin) { return refused }
            var request = request
            let body = try await request.collectBody(upTo: Context.apiBodyLimit)
            let user = context.path("user")
            let contentType = request.headers[.contentType]
            let ifNoneMatch = request.headers[.ifNoneMatch]
            return try await answer(
                request, needs: .admin,
                work: { c in
                    c.apiPutUser(
                        user: user, contentType: contentType, body: Array(body.readableBytesView),
                        ifNoneMatch: ifNoneMatch)
                })
        }
        router.delete("/v1/users/:user") { request, context in
            let user = context.path("user")
            return try await answer(request, needs: .admin, work: { c in c.apiDeleteUser(user: user) })
        }
        router.get("/v1/users/:user/streaks") { request, context in
            let user = context.path("user")
            return try await answer(request, needs: .read) { c in c.apiStreaks(user: user) }
        }
        router.get("/v1/users/:user/streaks/:streak") { request, context in
            let user = context.path("user")
            let streak = context.path("streak")
            return try await answer(request, needs: .read) { c in c.apiStreak(user: user, streak: streak) }
        }
        router.get("/v1/users/:user/badges") { request, context in
            let user = context.path("user")
            return try await answer(request, needs: .read) { c in c.apiBadges(user: user) }
        }
        router.post("/v1/users/:user/streaks/:streak/freezes") { request, context in
            try await adminBody(request, context) { c, _, body in
                c.apiFreeze(user: body.user, streak: body.streak, contentType: body.contentType, body: body.bytes)
            }
        }
        router.post("/v1/users/:user/pauses") { request, context in
            try await adminBody(request, context) { c, author, body in
                c.apiPause(user: body.user, contentType: body.contentType, body: body.bytes, author: author)
            }
        }
        router.delete("/v1/users/:user/pauses/current") { request, context in
            let user = context.path("user")
            let query = request.uri.queryParameters
            let streak = query["streak"].map(String.init)
            let all = query["all"].map(String.init)
            return try await answer(request, needs: .admin) { c, author in
                c.apiResume(user: user, streak: streak, all: all, author: author)
            }
        }
        router.post("/v1/users/:user/streaks/:streak/repair") { request, context in
            try await adminBody(request, context) { c, author, body in
                c.apiRepair(
                    user: body.user, streak: body.streak, contentType: body.contentType, body: body.bytes,
                    author: author)
            }
        }
        router.get("/v1/preview") { request, _ in
            let query = request.uri.queryParameters
            let until = query["until"].map(String.init)
            let user = query["user"].map(String.init)
            let kind = query["kind"].map(String.init)
            return try await preview(request, until: until, user: user, kind: kind)
        }
        return router
    }
}

/// What an admin route with a body (a freeze, a pause, a repair) hands its job: the body (at most
/// `Context.apiBodyLimit`), the path's user and streak (empty where the path has none) and the
/// content type.
struct RouteBody: Sendable {
    var bytes: [UInt8]
    var user: String
    var streak: String
    var contentType: String?
}

extension APIServer {
    /// The 401 or 403 for a request whose token does not allow `needs`, answered before its body
    /// is read, or nil: a client without such a token never has a body held in memory (its
    /// bytes are read and dropped). A token this server knows is checked here without a hop to
    /// the thread pool; `answer` checks it again, as for every request.
    func refused(_ request: Request, needs: TokenScope) async throws -> Response? {
        let authorization = request.headers[.authorization]
        if Self.trustedConnection || tokens.knownAllows(authorization, needs: needs) { return nil }
        let started = ContinuousClock.now
        let refusal = try await pool.runIfActive { () -> APIAnswer? in
            (try? context()).flatMap { tokens.refusal(authorization, needs: needs, in: $0) }
        }
        guard let refusal else { return nil }
        log(request, status: refusal.status, since: started, client: nil)
        return Self.response(refusal)
    }

    /// Collects the body up to the limit, reads the path's user and streak and the content type,
    /// and runs `job` as an admin request (`answer`), with the token's name as its author.
    func adminBody(
        _ request: Request, _ context: BasicRequestContext,
        _ job: @escaping @Sendable (Context, String, RouteBody) -> APIWork
    ) async throws -> Response {
        if let refused = try await refused(request, needs: .admin) { return refused }
        var request = request
        let collected = try await request.collectBody(upTo: Context.apiBodyLimit)
        let body = RouteBody(
            bytes: Array(collected.readableBytesView), user: context.path("user"),
            streak: context.path("streak"), contentType: request.headers[.contentType])
        return try await answer(request, needs: .admin) { c, author in job(c, author, body) }
    }
}

/// `streakd_api_requests_total{route,status}` (SPEC §13): the requests this server answered, by
/// route (docs/openapi.json's template; `other` for a path the API does not have) and status.
final class RequestCounts: Sendable {
    private let counts = Mutex<[String: [Int: Int]]>([:])

    func count(_ path: String, _ status: Int) {
        let route = APIRoutes.route(of: path)?.template ?? "other"
        counts.withLock { $0[route, default: [:]][status, default: 0] += 1 }
    }

    func families() -> [MetricFamily] {
        let samples = counts.withLock { counts in
            counts.keys.sorted().flatMap { route in
                counts[route]!.keys.sorted().map { status in
                    (labels: [("route", route), ("status", String(status))], value: Double(counts[route]![status]!))
                }
            }
        }
        return [
            MetricFamily(
                "streakd_api_requests_total", .counter, help: "Requests this serve answered, by route and status.",
                samples: samples)
        ]
    }
}

extension BasicRequestContext {
    /// A path's parameter as the client meant it, percent-decoded (`eve%40example.com` is
    /// `eve@example.com`, as a client that encodes each path segment sends it); "" where the
    /// path has none. A sequence that does not decode stays as it came, and the id's check
    /// refuses it.
    func path(_ name: String) -> String {
        guard let raw = parameters.get(name) else { return "" }
        return raw.removingPercentEncoding ?? raw
    }
}
