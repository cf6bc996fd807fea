import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOSSL
import StreakCore
import Synchronization

/// POSTs each notification to a webhook (SPEC §12) through AsyncHTTPClient: keep-alive
/// connections, up to `concurrency` requests in flight, https with the system's trust store
/// (and the webhook's CA file). The sink only reports the server's answer (`.answered`); what it
/// means (delivered, tried again, dead) is the lane's decision.
public final class WebhookSink: Sink {
    public let target: WebhookTarget
    public var name: String { "webhook:" + target.name }
    private let client: HTTPClient?
    /// Why no client could be made (a CA file that cannot be read): each delivery fails with it.
    private let clientError: String?
    /// The request without its headers and body: the URL is parsed once, not for each request.
    private let template: Result<HTTPClient.Request, any Error>

    /// The requests in flight, cancelled `HookSink.stopGrace` after the run is asked to stop
    /// (SIGTERM): a stopped run exits within seconds, as with a hook, whatever the time-out.
    private let inFlight: InFlightRequests

    /// The most of a server's answer that is read: its start names the error.
    static let answerBytesAtMost = 16 * 1024

    public init(target: WebhookTarget, stopRequested: @escaping @Sendable () -> Bool = { false }) {
        inFlight = InFlightRequests(stopRequested: stopRequested)
        var target = target
        do {
            if let file = target.secretFile {
                do {
                    target.secret = try WebhookTarget.secret(inFile: WebhookTarget.credentialPath(file))
                } catch {
                    throw WebhookSetupError(message: "secret_file \(error)")
                }
            }
            for h in target.headerFiles {
                do {
                    let value = try WebhookTarget.headerValue(inFile: WebhookTarget.credentialPath(h.file))
                    target.headers.append(.init(name: h.name, value: value))
                } catch {
                    throw WebhookSetupError(message: "header_files \(h.name): \(error)")
                }
            }
            client = try WebhookClients.client(caFile: target.caFile, concurrency: target.concurrency)
            clientError = nil
        } catch {
            client = nil
            clientError = "\(error)"
        }
        template = Result { try HTTPClient.Request(url: target.url, method: .POST) }
        self.target = target
    }

    public func accepts(_ notification: Notification) -> Bool {
        target.kinds?.contains(notification.kind) ?? true
    }

    public var width: Int { target.concurrency }
    public var timeLimit: Double { target.timeout + 1 }

    public func deliver(_ notification: Notification) -> DeliveryOutcome {
        deliver(notification, startingBefore: { Int64.max }) ?? .delivered
    }

    public func deliver(_ notification: Notification, startingBefore limit: () -> Int64?) -> DeliveryOutcome? {
        let result = Mutex<DeliveryOutcome?>(nil)
        let done = DispatchSemaphore(value: 0)
        post(notification, startingBefore: limit) { outcome in
            result.withLock { $0 = outcome }
            done.signal()
        }
        done.wait()
        return result.withLock { $0 }
    }

    public func start(
        _ notifications: [Notification], startingBefore limit: () -> Int64?,
        done: @escaping @Sendable ([DeliveryOutcome]?) -> Void
    ) {
        // One request each (the lane hands over one at a time: `batch` is 1).
        guard let n = notifications.first else { return done([]) }
        post(n, startingBefore: limit) { done($0.map { [$0] }) }
    }

    /// POSTs one notification; `done` gets the answer, from an event loop (nil: it did not start).
    func post(
        _ notification: Notification, startingBefore limit: () -> Int64?,
        done: @escaping @Sendable (DeliveryOutcome?) -> Void
    ) {
        guard let client else { return done(.failed(clientError ?? "no HTTP client")) }
        var request: HTTPClient.Request
        switch template {
        case .success(let made): request = made
        case .failure(let error): return done(.failed("cannot make a request to \(target.url): \(error)"))
        }
        let timestamp = Int64(Date().timeIntervalSince1970)
        let (headers, body) = target.request(for: notification, timestamp: timestamp)
        request.headers.reserveCapacity(headers.count)
        for h in headers { request.headers.add(name: h.name, value: h.value) }
        request.body = .byteBuffer(ByteBuffer(bytes: body))
        // Asked last, right before the request goes out.
        guard BootClock.instant(before: limit) != nil else { return done(nil) }
        let delegate = ResponseAccumulator(request: request, maxBodySize: Self.answerBytesAtMost)
        let deadline = NIODeadline.now() + .milliseconds(Int64(target.timeout * 1000))
        let timeout = target.timeout
        let plainHTTP = target.url.lowercased().hasPrefix("http:")
        // Any event loop of the client's: a sink's requests all on one loop (`.delegate(on:)`)
        // went at two thirds of the rate on 2 cores (one thread for all of them).
        let task = client.execute(request: request, delegate: delegate, deadline: deadline)
        let inFlight = self.inFlight
        let id = inFlight.add(task)
        task.futureResult.whenComplete { result in
            inFlight.remove(id)
            switch result {
            case .success(let response):
                let now = Int64(Date().timeIntervalSince1970)
                let status = Int(response.status.code)
                // The detail is for a failure's message only.
                done(
                    .answered(
                        status: status,
                        retryAfter: RetryAfter.seconds(response.headers.first(name: "Retry-After"), now: now),
                        detail: (200..<300).contains(status) ? "" : Self.detail(response)))
            case .failure(let error) where inFlight.cancelled && (error as? HTTPClientError) == .cancelled:
                done(.interrupted("stopped by a signal to streakd after \(HookSink.seconds(HookSink.stopGrace))s more"))
            case .failure(let error):
                done(.failed(Self.reason(error, timeout: timeout, plainHTTP: plainHTTP)))
            }
        }
    }

    /// `503 Service Unavailable: the body's first line`.
    static func detail(_ response: HTTPClient.Response) -> String {
        let line = "\(response.status.code) \(response.status.reasonPhrase)"
        guard var body = response.body, body.readableBytes > 0 else { return line }
        let text = body.readString(length: min(body.readableBytes, 200)) ?? ""
        let first = text.split(whereSeparator: \.isNewline).first.map(String.init) ?? ""
        return first.isEmpty ? line : line + ": " + first
    }

    /// A socket's error in words (NIO's own text reads "connection reset (error set): Connection
    /// refused) (errno: 111)" for a port nobody listens on).
    static func socket(_ code: CInt) -> String {
        switch code {
        case ECONNREFUSED: "connection refused: nothing listens at the webhook's address and port"
        case ECONNRESET: "connection reset by the server"
        case EHOSTUNREACH, ENETUNREACH: "no route to the host"
        case ETIMEDOUT: "connection timed out"
        default: String(cString: strerror(code)).lowercased()
        }
    }

    /// What went wrong, for people: a time-out, a refused connection, a TLS failure. `plainHTTP`:
    /// the URL is http, where a server that drops the connection at once may speak only https.
    static func reason(_ error: any Error, timeout: Double, plainHTTP: Bool = false) -> String {
        let said = words(for: error, timeout: timeout)
        guard plainHTTP, said == socket(ECONNRESET) || said == "the server closed the connection" else { return said }
        return said + ": an https server behind an http URL?"
    }

    private static func words(for error: any Error, timeout: Double) -> String {
        if let e = error as? HTTPClientError {
            switch e {
            case .deadlineExceeded, .readTimeout, .connectTimeout:
                return "timed out after \(HookSink.seconds(timeout))s"
            case .remoteConnectionClosed: return "the server closed the connection"
            default: break
            }
            if e == .bodyLengthMismatch { return "the server's answer was cut short" }
        }
        if error is NIOSSLError || error is BoringSSLError || error is NIOSSLExtraError { return tls(error) }
        if let io = error as? IOError { return socket(io.errnoCode) }
        if let e = error as? NIOConnectionError {
            if let dns = e.dnsAError ?? e.dnsAAAAError {
                let why = (dns as? SocketAddressError.UnknownHost)?.errorDescription.lowercased() ?? "\(dns)"
                return "DNS: the host \(e.host) is not known (\(why))"
            }
            if let first = e.connectionErrors.first { return words(for: first.error, timeout: timeout) }
        }
        if String(describing: error).contains("ResponseTooBig") {
            return "the server's answer is longer than \(answerBytesAtMost) bytes"
        }
        return "\(error)"
    }

    /// A TLS failure in words: BoringSSL's reason without its code and source path, and what to
    /// do for the two an operator meets (an http server behind an https URL, an authority the
    /// system does not trust).
    static func tls(_ error: any Error) -> String {
        let text = String(describing: error)
        if text.contains("failedToValidateHostname") {
            return "TLS: the server's certificate is not for the URL's host name"
        }
        guard let r = text.range(of: "OPENSSL_internal:") else { return "TLS: \(text)" }
        let code = text[r.upperBound...].prefix { $0.isLetter || $0.isNumber || $0 == "_" }
        switch code {
        case "WRONG_VERSION_NUMBER":
            return "TLS: the server does not speak TLS at that address and port (an http server behind an https URL?)"
        case "CERTIFICATE_VERIFY_FAILED":
            return "TLS: the server's certificate is not trusted; give the authority that signed it as ca_file"
        default: return "TLS: " + code.lowercased().replacingOccurrences(of: "_", with: " ")
        }
    }
}

/// The HTTP clients of the process, one per TLS setting and concurrency: each keeps its
/// connections open between requests and runs. Made once and kept for the life of the process
/// (a client must be shut down before it is released; the process's end closes its sockets).
public enum WebhookClients {
    private static let clients = Mutex<[String: HTTPClient]>([:])

    /// Why `file` is no `ca_file` (not a PEM file of certificates), or nil: words to follow its name.
    public static func caFileProblem(_ file: String) -> String? {
        var isFolder: ObjCBool = false
        if FileManager.default.fileExists(atPath: file, isDirectory: &isFolder), isFolder.boolValue {
            return "is a folder; give a PEM file of certificate authorities"
        }
        guard let certificates = try? NIOSSLCertificate.fromPEMFile(file), !certificates.isEmpty else {
            return "is not a PEM file of certificates (-----BEGIN CERTIFICATE-----)"
        }
        return nil
    }

    static func client(caFile: String?, concurrency: Int) throws -> HTTPClient {
        let key = "\(caFile ?? "")\u{0}\(concurrency)"
        return try clients.withLock { clients in
            if let client = clients[key] { return client }
            var tls = TLSConfiguration.makeClientConfiguration()
            if let caFile {
                do {
                    tls.additionalTrustRoots = [.certificates(try NIOSSLCertificate.fromPEMFile(caFile))]
                } catch {
                    throw WebhookSetupError(message: "\(caFile): not a PEM file of certificates (\(error))")
                }
            }
            var configuration = HTTPClient.Configuration(
                tlsConfiguration: tls, redirectConfiguration: .disallow,
                timeout: .init(connect: .seconds(10)),
                connectionPool: .init(
                    idleTimeout: .seconds(60), concurrentHTTP1ConnectionsPerHostSoftLimit: concurrency))
            configuration.httpVersion = .http1Only
            // A connection that cannot be made fails the requests waiting for it at once, with
            // its reason (refused, TLS), rather than at their deadlines: later runs try again.
            configuration.connectionPool.retryConnectionEstablishment = false
            let client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
            clients[key] = client
            return client
        }
    }
}
