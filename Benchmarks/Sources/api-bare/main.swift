import Hummingbird

/// The stack's ceiling for `Benchmarks/api`: a bare Hummingbird route at the path of
/// `GET /v1/users/{user}/streaks/{streak}`, answering a constant streak object of the same size,
/// with no store, token or job behind it.   api-bare PORT
let port = CommandLine.arguments.count > 1 ? Int(CommandLine.arguments[1]) ?? 8090 : 8090
let object =
    #"{"user":"u1","streak":"daily","timezone":"Europe/Berlin","today":"2026-11-27","current":7,"longest":7,"#
    + #""freezes":1,"today_count":1,"goal":1,"total_checkins":7,"last_qualifying_date":"2026-11-27","#
    + #""next_refill":"2026-12-27T03:16:40Z","next_reminder":null,"xp":170,"level":1,"next_level_xp":500}"# + "\n"
let router = Router()
router.get("/v1/users/:user/streaks/:streak") { _, _ in
    Response(
        status: .ok, headers: [.contentType: "application/json"], body: ResponseBody(byteBuffer: ByteBuffer(string: object)))
}
let app = Application(router: router, configuration: ApplicationConfiguration(address: .hostname("127.0.0.1", port: port)))
try await app.runService()
