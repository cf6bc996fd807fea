import Foundation
import StreakCore
import StreakDelivery
import TOMLKit

/// `[[webhooks]]` of `streakd.toml` (SPEC §12).
extension ConfigLoader {
    static let webhookKeys = [
        "name", "url", "secret", "secret_file", "format", "headers", "timeout_seconds", "concurrency", "kinds",
        "ca_file",
    ]
    /// Extra headers of one webhook: at most this many, each value at most this many bytes.
    static let webhookHeadersAtMost = 32
    static let headerBytesAtMost = 4096

    static func readWebhooks(_ table: TOMLTable, reader: TableReader, into config: inout Config, checkFiles: Bool) {
        guard let value = table["webhooks"] else { return }
        guard let array = value.array, value.type == .array else {
            reader.note(reader.error("webhooks", nil, "must be an array of tables, each under a [[webhooks]] header"))
            return
        }
        for (i, item) in array.enumerated() {
            reader.attempt {
                guard let t = item.table else {
                    throw reader.error("webhooks", nil, "must be an array of tables, each under a [[webhooks]] header")
                }
                let webhook = try readWebhook(t, index: i, reader: reader, checkFiles: checkFiles)
                if config.webhooks.contains(where: { $0.name == webhook.name }) {
                    throw reader.error(
                        "webhooks", "name", "\(quoted(webhook.name)) names two webhooks; give each its own name",
                        occurrence: i)
                }
                config.webhooks.append(webhook)
            }
        }
    }

    static func readWebhook(_ t: TOMLTable, index i: Int, reader: TableReader, checkFiles: Bool) throws
        -> WebhookTarget
    {
        func fail(_ key: String?, _ message: String) -> StreakdError {
            reader.error("webhooks", key, message, occurrence: i)
        }
        func string(_ key: String) throws -> String? {
            guard let v = t[key] else { return nil }
            guard v.type == .string, let s = v.string else { throw fail(key, "must be a string") }
            if s.utf8.contains(0) { throw fail(key, TableReader.nulRule) }
            return s
        }
        for key in t.keys where !webhookKeys.contains(key) {
            throw fail(key, "unknown setting; valid in [[webhooks]]: \(webhookKeys.joined(separator: ", "))")
        }
        guard let name = try string("name"), isHookName(name) else {
            throw fail(t["name"] == nil ? nil : "name", "every webhook needs a name = \"…\" of \(hookNameRule)")
        }
        guard let url = try string("url") else {
            throw fail(nil, "webhook \(quoted(name)) needs a url = \"https://…\"")
        }
        if let problem = urlProblem(url) { throw fail("url", "\(quoted(url)) \(problem)") }
        var format = WebhookTarget.Format.json
        if let f = try string("format") {
            guard let known = WebhookTarget.Format(rawValue: f) else {
                let names = WebhookTarget.Format.allCases.map { quoted($0.rawValue) }.joined(separator: ", ")
                throw fail("format", "\(quoted(f)) is not a format; use one of \(names)")
            }
            format = known
        }
        var target = WebhookTarget(name: name, url: url, format: format)
        let secretRule =
            "a secret of at least 16 bytes: a whsec_ secret (Standard Webhooks: whsec_ and base64) or any text"
        if let s = try string("secret") {
            guard let bytes = WebhookTarget.secretBytes(s), bytes.count >= 16, bytes.count <= 1024 else {
                throw fail("secret", "is not \(secretRule)")
            }
            target.secret = bytes
        }
        if let file = try string("secret_file") {
            guard target.secret == nil else { throw fail("secret_file", "give secret or secret_file, not both") }
            guard file.hasPrefix("/") else { throw fail("secret_file", "\(quoted(file)) is not an absolute path") }
            if checkFiles {
                do {
                    let bytes = try WebhookTarget.secret(inFile: file)
                    guard bytes.count >= 16 else {
                        throw WebhookSetupError(message: "\(file) holds a secret shorter than 16 bytes")
                    }
                } catch {
                    throw fail("secret_file", "cannot be used: \(Self.reason(error)); it must hold \(secretRule)")
                }
            }
            target.secretFile = file
        }
        if format == .json && target.secret == nil && target.secretFile == nil {
            throw fail(
                nil,
                "webhook \(quoted(name)) of format \"json\" needs a secret = \"whsec_…\" or secret_file = \"/…\" to sign its requests"
            )
        }
        if let h = t["headers"] {
            guard h.type == .table, let headers = h.table else {
                throw fail("headers", "must be a table of header names and strings, such as { X-Priority = \"high\" }")
            }
            guard headers.count <= webhookHeadersAtMost else {
                throw fail("headers", "has more than \(webhookHeadersAtMost) headers")
            }
            for key in headers.keys.sorted() {
                guard let value = headers[key]?.string, headers[key]?.type == .string else {
                    throw fail("headers", "\(quoted(key)) must be a string")
                }
                if let problem = headerProblem(key, value) { throw fail("headers", "\(quoted(key)) \(problem)") }
                target.headers.append(.init(name: key, value: value))
            }
        }
        if let timeout = try readInt(t, "timeout_seconds", range: 1...600, fail: fail) {
            target.timeout = Double(timeout)
        }
        target.concurrency = try readInt(t, "concurrency", range: 1...256, fail: fail) ?? target.concurrency
        if t["kinds"] != nil { target.kinds = try readKinds(t, fail: fail) }
        if let ca = try string("ca_file") {
            guard ca.hasPrefix("/") else { throw fail("ca_file", "\(quoted(ca)) is not an absolute path") }
            if checkFiles && !FileManager.default.isReadableFile(atPath: ca) {
                throw fail("ca_file", "\(quoted(ca)) cannot be read; give a PEM file of certificate authorities")
            }
            target.caFile = ca
        }
        return target
    }

    /// An error's words: a POSIX error's text (a missing or unreadable file), else its own.
    static func reason(_ error: any Error) -> String {
        let e = error as NSError
        if e.domain == NSCocoaErrorDomain, let underlying = e.userInfo[NSUnderlyingErrorKey] as? NSError,
            underlying.domain == NSPOSIXErrorDomain
        {
            return String(cString: strerror(Int32(underlying.code)))
        }
        return "\(error)"
    }

    static func isHookName(_ name: String) -> Bool {
        (1...32).contains(name.count)
            && name.unicodeScalars.allSatisfy {
                ("a"..."z").contains($0) || ("0"..."9").contains($0) || $0 == "_" || $0 == "-"
            }
    }

    /// What is wrong with a webhook's URL, or nil.
    static func urlProblem(_ url: String) -> String? {
        guard url.utf8.count <= 2048 else { return "is longer than 2048 bytes" }
        guard let u = URLComponents(string: url), let scheme = u.scheme?.lowercased() else {
            return "is not a URL; use one such as \"https://example.com/hook\""
        }
        guard scheme == "http" || scheme == "https" else { return "is not an http or https URL" }
        guard let host = u.host, !host.isEmpty else { return "names no host" }
        if u.fragment != nil { return "has a #fragment, which is never sent; leave it out" }
        return nil
    }

    /// What is wrong with an extra request header, or nil.
    static func headerProblem(_ name: String, _ value: String) -> String? {
        let token = "!#$%&'*+-.^_`|~"
        guard !name.isEmpty,
            name.unicodeScalars.allSatisfy({
                $0.isASCII
                    && ($0.properties.isAlphabetic || ("0"..."9").contains($0) || token.unicodeScalars.contains($0))
            })
        else { return "is not a header name (letters, digits and !#$%&'*+-.^_`|~)" }
        if WebhookTarget.reservedHeaders.contains(name.lowercased()) { return "is set by streakd or HTTP itself" }
        guard value.utf8.count <= headerBytesAtMost else { return "is longer than \(headerBytesAtMost) bytes" }
        guard value.unicodeScalars.allSatisfy({ $0 == "\t" || (0x20..<0x7f).contains($0.value) }) else {
            return "must be printable ASCII on one line"
        }
        return nil
    }

    static func readKinds(_ t: TOMLTable, fail: (String?, String) -> StreakdError) throws -> Set<NotificationKind> {
        let rule = "must be a list of kinds from \(NotificationKind.allCases.map(\.rawValue).joined(separator: ", "))"
        guard let k = t["kinds"], k.type == .array, let list = k.array else { throw fail("kinds", rule) }
        var kinds: Set<NotificationKind> = []
        for item in list {
            guard let s = item.string, let kind = NotificationKind(rawValue: s) else {
                throw fail("kinds", "\(item.string.map(quoted) ?? "a value") is not a kind; \(rule)")
            }
            kinds.insert(kind)
        }
        return kinds
    }
}

extension Config {
    /// `[[webhooks]]` as TOML, secrets and header values left out (they are often tokens), a
    /// URL's query too.
    var webhookLines: [String] {
        var lines: [String] = []
        for w in webhooks {
            lines += [
                "", "[[webhooks]]", "name = \(JSON.string(w.name).text)",
                "url = \(JSON.string(Self.shown(w.url)).text)",
            ]
            lines.append("format = \"\(w.format.rawValue)\"")
            if let file = w.secretFile { lines.append("secret_file = \(JSON.string(file).text)") }
            if w.secret != nil { lines.append("# secret: set, not shown") }
            if !w.headers.isEmpty {
                lines.append("# headers (values not shown): " + w.headers.map(\.name).joined(separator: ", "))
            }
            lines += ["timeout_seconds = \(Int(w.timeout))", "concurrency = \(w.concurrency)"]
            if let kinds = w.kinds {
                lines.append("kinds = [\(kinds.map(\.rawValue).sorted().map { "\"\($0)\"" }.joined(separator: ", "))]")
            }
            if let ca = w.caFile { lines.append("ca_file = \(JSON.string(ca).text)") }
        }
        return lines
    }

    var webhooksJSON: JSON {
        .array(
            webhooks.map { w in
                .object([
                    ("name", .string(w.name)), ("url", .string(Self.shown(w.url))),
                    ("format", .string(w.format.rawValue)),
                    ("secret", .bool(w.secret != nil)), ("secret_file", .optional(w.secretFile)),
                    ("headers", .array(w.headers.map { .string($0.name) })),
                    ("timeout_seconds", .int(Int(w.timeout))), ("concurrency", .int(w.concurrency)),
                    ("kinds", w.kinds.map { .array($0.map(\.rawValue).sorted().map { .string($0) }) } ?? .null),
                    ("ca_file", .optional(w.caFile)),
                ])
            })
    }

    /// A URL as shown: without its query, which may hold a token (Gotify's).
    static func shown(_ url: String) -> String {
        guard let q = url.firstIndex(of: "?") else { return url }
        return url[..<q] + "?…"
    }
}
