import Foundation
import StreakCore

/// One configured webhook (SPEC §12, `[[webhooks]]`): where each notification is POSTed, and how.
public struct WebhookTarget: Equatable, Sendable {
    /// What the request's body and headers look like.
    public enum Format: String, CaseIterable, Sendable {
        /// The hook's JSON object, signed as Standard Webhooks say.
        case json
        /// ntfy: the text as the body, `Title`, `Priority` and `Tags` headers.
        case ntfy
        /// Gotify's `/message`: `{"title","message","priority"}`.
        case gotify
    }

    public var name: String
    /// An http or https URL (checked by the configuration).
    public var url: String
    /// The secret's bytes (a `whsec_` secret decoded from base64); nil: requests are not signed.
    public var secret: [UInt8]?
    /// A file holding the secret, read when the sink is made (only a run that delivers needs it);
    /// its trailing newline is not part of it.
    public var secretFile: String?
    public var format: Format
    /// Extra request headers, in the configuration's order.
    public var headers: [Header]
    /// Headers whose values are in files (a token streakd alone should read), read when the sink
    /// is made as `secretFile` is, and sent after `headers`.
    public var headerFiles: [HeaderFile] = []
    /// Seconds one request may take, connecting included.
    public var timeout: Double
    /// Requests in flight at once (and connections kept open) for this webhook.
    public var concurrency: Int
    /// The kinds this webhook wants; `nil` means all of them.
    public var kinds: Set<NotificationKind>?
    /// A PEM file of certificate authorities trusted besides the system's (a private CA).
    public var caFile: String?

    public struct Header: Equatable, Sendable {
        public var name: String
        public var value: String
        public init(name: String, value: String) {
            self.name = name
            self.value = value
        }
    }

    /// A header whose value is a file's text: an absolute path, or a systemd credential's name.
    public struct HeaderFile: Equatable, Sendable {
        public var name: String
        public var file: String
        public init(name: String, file: String) {
            self.name = name
            self.file = file
        }
    }

    public init(
        name: String, url: String, secret: [UInt8]? = nil, secretFile: String? = nil, format: Format = .json,
        headers: [Header] = [],
        timeout: Double = 10, concurrency: Int = 8, kinds: Set<NotificationKind>? = nil, caFile: String? = nil
    ) {
        self.name = name
        self.url = url
        self.secret = secret
        self.secretFile = secretFile
        self.format = format
        self.headers = headers
        self.timeout = timeout
        self.concurrency = concurrency
        self.kinds = kinds
        self.caFile = caFile
    }

    /// Headers the configuration may not set: streakd's own, and those HTTP itself decides.
    public static let reservedHeaders: Set<String> = [
        "webhook-id", "webhook-timestamp", "webhook-signature", "content-length", "host", "transfer-encoding",
        "connection",
    ]

    /// The longest secret, in bytes (a `whsec_` secret's decoded).
    public static let secretBytesAtMost = 1024

    /// A secret's bytes: a `whsec_` secret is base64 (Standard Webhooks), any other its UTF-8.
    /// Nil when a `whsec_` secret is not valid base64.
    public static func secretBytes(_ text: String) -> [UInt8]? {
        guard text.hasPrefix("whsec_") else { return Array(text.utf8) }
        return Data(base64Encoded: String(text.dropFirst(6))).map(Array.init)
    }

    /// Where a `secret_file` or a `header_files` file is: an absolute path is itself; a bare name
    /// is a systemd credential (`LoadCredential=NAME:FILE` in the unit), in `credentials`: the
    /// `$CREDENTIALS_DIRECTORY` systemd gives the service, unless a test gives another.
    public static func credentialPath(
        _ file: String, credentials: String? = ProcessInfo.processInfo.environment["CREDENTIALS_DIRECTORY"]
    ) throws -> String {
        guard !file.hasPrefix("/") else { return file }
        guard let credentials, !credentials.isEmpty else {
            throw WebhookSetupError(
                message: "\(file) names a systemd credential, and this process has none ($CREDENTIALS_DIRECTORY is "
                    + "not set): give the unit LoadCredential=\(file):/etc/streakd/\(file), or an absolute path")
        }
        return credentials + "/" + file
    }

    /// Whether a `secret_file` or a `header_files` file is a credential's name rather than a path.
    public static func isCredentialName(_ file: String) -> Bool {
        !file.isEmpty && !file.contains("/") && file != "." && file != ".."
    }

    /// The secret in `file`: its text without the trailing newline, as `secretBytes` reads it.
    public static func secret(inFile file: String) throws -> [UInt8] {
        let read = try line(inFile: file)
        guard read.count <= 4096, let text = String(validating: read, as: UTF8.self) else {
            throw WebhookSetupError(message: "\(file) does not hold a secret (UTF-8 text of at most 4096 bytes)")
        }
        guard !text.isEmpty, let bytes = secretBytes(text) else {
            throw WebhookSetupError(message: "\(file) does not hold a secret (empty, or a whsec_ secret not base64)")
        }
        guard bytes.count <= secretBytesAtMost else {
            throw WebhookSetupError(
                message: "\(file) holds a secret of \(bytes.count) bytes; at most \(secretBytesAtMost)")
        }
        return bytes
    }

    /// A header's value in `file`: its text without the trailing newline, printable ASCII on one
    /// line, at most 4096 bytes.
    public static func headerValue(inFile file: String) throws -> String {
        let bytes = try line(inFile: file)
        guard !bytes.isEmpty, bytes.count <= 4096, bytes.allSatisfy({ $0 == 9 || (0x20..<0x7f).contains($0) }) else {
            throw WebhookSetupError(
                message: "\(file) does not hold a header's value (printable ASCII on one line, 1 to 4096 bytes)")
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// A file's bytes without the trailing newline, or an error saying why it cannot be read, in
    /// the system's words (Foundation's would show its domain and user info).
    static func line(inFile file: String) throws -> [UInt8] {
        guard let data = FileManager.default.contents(atPath: file) else {
            let reason = access(file, R_OK) == 0 ? "it cannot be read" : String(cString: strerror(errno)).lowercased()
            throw WebhookSetupError(message: "\(file): \(reason)")
        }
        var bytes = Array(data)
        if bytes.last == 10 { bytes.removeLast() }
        return bytes
    }

    /// The request for a notification: headers and body. `timestamp`: Unix seconds of the real
    /// clock when it is sent (never `--now`).
    public func request(for n: Notification, timestamp: Int64) -> (headers: [Header], body: [UInt8]) {
        var headers: [Header] = []
        headers.reserveCapacity(8 + self.headers.count)
        headers.append(Header(name: "User-Agent", value: "streakd"))
        let body: [UInt8]
        switch format {
        case .json:
            body = n.json.bytes
            headers.append(Header(name: "Content-Type", value: "application/json"))
        case .ntfy:
            body = Array(n.message.utf8)
            headers += [
                Header(name: "Content-Type", value: "text/plain; charset=utf-8"),
                Header(name: "Title", value: Self.headerText(n.title ?? n.kind.englishTitle)),
                Header(name: "Priority", value: String(Self.ntfyPriority(n.kind))),
                Header(name: "Tags", value: "streakd," + n.kind.rawValue),
            ]
        case .gotify:
            let object = JSON.object([
                ("title", .string(n.title ?? n.kind.englishTitle)), ("message", .string(n.message)),
                ("priority", .int(Self.gotifyPriority(n.kind))),
            ])
            body = object.bytes
            headers.append(Header(name: "Content-Type", value: "application/json"))
        }
        // Every format names the notification, so that a receiver can drop a repeat.
        let key = n.key
        headers.append(Header(name: "webhook-id", value: key))
        headers.append(Header(name: "webhook-timestamp", value: String(timestamp)))
        if let secret {
            headers.append(
                Header(
                    name: "webhook-signature",
                    value: Self.signature(id: key, timestamp: timestamp, body: body, secret: secret)))
        }
        headers += self.headers
        return (headers, body)
    }

    /// Standard Webhooks' signature: `v1,` and the base64 HMAC-SHA256 of `id.timestamp.body`.
    public static func signature(id: String, timestamp: Int64, body: [UInt8], secret: [UInt8]) -> String {
        var signed: [UInt8] = []
        signed.reserveCapacity(id.utf8.count + 22 + body.count)
        signed += id.utf8
        signed.append(UInt8(ascii: "."))
        signed += String(timestamp).utf8
        signed.append(UInt8(ascii: "."))
        signed += body
        return "v1," + Data(HMAC.sha256(key: secret, message: signed)).base64EncodedString()
    }

    /// ntfy's 1 (min) to 5 (max) from the kind's syslog priority: a warning 4 (high), a notice
    /// 3 (default), an info 2 (low).
    static func ntfyPriority(_ kind: NotificationKind) -> Int { min(5, max(1, 8 - kind.priority)) }

    /// Gotify's 0 to 10: a warning 8, a notice 5, an info 2.
    static func gotifyPriority(_ kind: NotificationKind) -> Int {
        switch kind.priority {
        case ...4: 8
        case 5: 5
        default: 2
        }
    }

    /// A text as a header value: as it is when printable ASCII, else RFC 2047's UTF-8 base64 form
    /// (which ntfy reads).
    static func headerText(_ text: String) -> String {
        if text.unicodeScalars.allSatisfy({ (0x20..<0x7f).contains($0.value) }) { return text }
        return "=?UTF-8?B?" + Data(text.utf8).base64EncodedString() + "?="
    }
}

/// An HTTP server's answer, and what `Retry-After` asks.
public enum RetryAfter {
    /// The longest wait honoured: a day (a later value is taken as a day).
    public static let atMost: Int64 = 86_400

    /// Seconds to wait from `now` (Unix seconds): delta-seconds or an HTTP date; nil when absent
    /// or unreadable.
    public static func seconds(_ value: String?, now: Int64) -> Int64? {
        guard let value = value?.trimmingCharacters(in: .whitespaces), !value.isEmpty else { return nil }
        if let s = Int64(value) { return s >= 0 ? min(s, atMost) : nil }
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss zzz"
        guard let date = formatter.date(from: value) else { return nil }
        return min(max(0, Int64(date.timeIntervalSince1970) - now), atMost)
    }
}

/// A secret or CA file that cannot be used.
public struct WebhookSetupError: Error, CustomStringConvertible {
    public var message: String
    public var description: String { message }
    public init(message: String) { self.message = message }
}
