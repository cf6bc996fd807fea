import Crypto
import Foundation
import HTTPTypes
import Hummingbird
import NIOCore
import Synchronization

/// The webhook receiver of `Benchmarks/deliveries`: Hummingbird on loopback, fast enough that
/// neither streakd nor `hey` is held up by it. Every POST is checked as a Standard Webhooks
/// receiver would (HMAC-SHA256 of `id.timestamp.body` with swift-crypto, not streakd's own code;
/// the timestamp within 5 minutes) and counted by its `webhook-id`; the answer is 200. POST /hook.
///   webhook-sink PORT SECRET        (SECRET: whsec_ and base64, or the text's bytes)
/// GET /stats: the counts as JSON (requests, unique ids, duplicates, invalid signatures, the
/// instants of the first and last request, and the rate between them); GET /ids: every id
/// received, one a line; GET /sample: the first request's id, timestamp, signature and body, a
/// line each; POST /reset: start counting afresh.
let arguments = CommandLine.arguments
guard arguments.count == 3, let port = Int(arguments[1]) else {
    FileHandle.standardError.write(Data("usage: webhook-sink PORT SECRET\n".utf8))
    exit(64)
}
let secret: [UInt8] =
    arguments[2].hasPrefix("whsec_")
    ? Array(Data(base64Encoded: String(arguments[2].dropFirst(6))) ?? Data()) : Array(arguments[2].utf8)
let key = SymmetricKey(data: secret)

struct Counts: Sendable {
    var requests = 0
    var ids: Set<String> = []
    var duplicates = 0
    var invalid = 0
    var first = 0.0
    var last = 0.0
    /// The first request's id, timestamp, signature and body, a line each (for `hey`).
    var sample = ""
}
let counts = Mutex(Counts())

let idName = HTTPField.Name("webhook-id")!
let timestampName = HTTPField.Name("webhook-timestamp")!
let signatureName = HTTPField.Name("webhook-signature")!

/// Whether the request carries a valid, fresh signature for its body.
@Sendable func valid(_ request: Request, id: String, body: ByteBuffer) -> Bool {
    guard let timestamp = request.headers[timestampName], let seconds = Double(timestamp),
        abs(Date().timeIntervalSince1970 - seconds) < 300
    else { return false }
    var signed = Data("\(id).\(timestamp).".utf8)
    signed.append(contentsOf: body.readableBytesView)
    let mac = HMAC<SHA256>.authenticationCode(for: signed, using: key)
    let expected = "v1," + Data(mac).base64EncodedString()
    let given = (request.headers[signatureName] ?? "").split(separator: " ")
    return given.contains { $0 == expected }
}

let router = Router()
router.post("/hook") { request, _ -> HTTPResponse.Status in
    let body = try await request.body.collect(upTo: 1 << 20)
    let id = request.headers[idName] ?? ""
    let ok = !id.isEmpty && valid(request, id: id, body: body)
    let now = Date().timeIntervalSince1970
    counts.withLock { c in
        if c.requests == 0 {
            c.first = now
            let fields = [id, request.headers[timestampName] ?? "", request.headers[signatureName] ?? ""]
            c.sample = fields.joined(separator: "\n") + "\n" + String(buffer: body) + "\n"
        }
        c.requests += 1
        c.last = now
        if !ok { c.invalid += 1 }
        if !c.ids.insert(id).inserted { c.duplicates += 1 }
    }
    return .ok
}
router.get("/stats") { _, _ -> Response in
    let c = counts.withLock { $0 }
    let span = c.last - c.first
    let rate = c.requests > 1 && span > 0 ? Double(c.requests - 1) / span : 0
    let text =
        #"{"requests":\#(c.requests),"unique":\#(c.ids.count),"duplicates":\#(c.duplicates),"#
        + #""invalid":\#(c.invalid),"first":\#(c.first),"last":\#(c.last),"per_second":\#(rate)}"# + "\n"
    return Response(
        status: .ok, headers: [.contentType: "application/json"], body: ResponseBody(byteBuffer: ByteBuffer(string: text)))
}
router.get("/ids") { _, _ -> Response in
    let ids = counts.withLock { $0.ids }
    let text = ids.sorted().map { $0 + "\n" }.joined()
    return Response(status: .ok, body: ResponseBody(byteBuffer: ByteBuffer(string: text)))
}
router.get("/sample") { _, _ -> Response in
    Response(status: .ok, body: ResponseBody(byteBuffer: ByteBuffer(string: counts.withLock { $0.sample })))
}
router.post("/reset") { _, _ -> HTTPResponse.Status in
    counts.withLock { $0 = Counts() }
    return .ok
}
let app = Application(router: router, configuration: ApplicationConfiguration(address: .hostname("127.0.0.1", port: port)))
try await app.runService()
