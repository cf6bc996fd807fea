import Foundation
import StreakCore
import StreakDelivery
import TOMLKit

/// `[[webhooks]]` of `streakd.toml` (SPEC §12).
extension ConfigLoader {
    static let webhookKeys = [
        "name", "url", "secret", "secret_file", "format", "headers", "header_files", "timeout_seconds", "concurrency",
        "kinds", "ca_file",
    ]
    /// Extra headers of one webhook: at most this many, each value at most this many bytes.
    static let webhookHeadersAtMost = 32
    static let headerBytesAtMost = 4096

    static func readWebhooks(_ table: TOMLTable, reader: TableReader, into config: inout Config, checkFiles: Bool) {
        let webhooks = reader.arrayOfTables(
            table, "webhooks", rule: "must be an array of tables, each under a [[webhooks]] header",
            nameKey: "name", twice: { ("name", "\(quoted($0)) names two webhooks; give each its own name") },
            read: { t, i in readWebhook(t, index: i, reader: reader, checkFiles: checkFiles) })
        if let webhooks { config.webhooks += webhooks }
    }

    /// One `[[webhooks]]` table, or nil when it has problems: each is noted (`config check`
    /// reports every one of them, not only the first), as for `[[hooks]]`.
    static func readWebhook(_ t: TOMLTable, index i: Int, reader: TableReader, checkFiles: Bool) -> WebhookTarget? {
        var problems = 0
        func fail(_ key: String?, _ message: String) {
            reader.note(reader.error("webhooks", key, message, occurrence: i))
            problems += 1
        }
        func string(_ key: String) -> String? {
            guard let v = t[key] else { return nil }
            guard v.type == .string, let s = v.string else {
                fail(key, "must be a string")
                return nil
            }
            if s.utf8.contains(0) {
                fail(key, TableReader.nulRule)
                return nil
            }
            return s
        }
        for key in t.keys.sorted() where !webhookKeys.contains(key) {
            fail(key, "unknown setting; valid in [[webhooks]]: \(webhookKeys.joined(separator: ", "))")
        }
        let name = string("name")
        if let name, !isHookName(name) {
            fail("name", "\(quoted(name)) is not a webhook name; use \(hookNameRule)")
        } else if name == nil && t["name"] == nil {
            fail(nil, "every webhook needs a name = \"…\" of \(hookNameRule)")
        }
        let called = name.map { "webhook \(quoted($0))" } ?? "this webhook"
        let url = string("url")
        if let url, let problem = urlProblem(url) {
            fail("url", "\(quoted(url)) \(problem)")
        } else if t["url"] == nil {
            fail(nil, "\(called) needs a url = \"https://…\"")
        }
        var format: WebhookTarget.Format? = .json
        if let f = string("format") {
            format = WebhookTarget.Format(rawValue: f)
            if format == nil {
                let names = WebhookTarget.Format.allCases.map { quoted($0.rawValue) }.joined(separator: ", ")
                fail("format", "\(quoted(f)) is not a format; use one of \(names)")
            }
        }
        var target = WebhookTarget(name: name ?? "", url: url ?? "", format: format ?? .json)
        let secretRule =
            "a secret of 16 to \(WebhookTarget.secretBytesAtMost) bytes: a whsec_ secret (Standard Webhooks: whsec_ "
            + "and base64) or any text"
        if let s = string("secret") {
            if let problem = secretProblem(s) {
                fail("secret", "\(problem); give \(secretRule)")
            } else {
                target.secret = WebhookTarget.secretBytes(s)
            }
        }
        if let file = string("secret_file") {
            if t["secret"] != nil {
                fail("secret_file", "give secret or secret_file, not both")
            } else if !file.hasPrefix("/") && !WebhookTarget.isCredentialName(file) {
                fail(
                    "secret_file",
                    "\(quoted(file)) is neither an absolute path nor a systemd credential's name (LoadCredential=NAME:FILE in the unit)"
                )
            } else if checkFiles, let path = try? WebhookTarget.credentialPath(file),  // a credential: in its unit only
                let reason = secretFileProblem(path)
            {
                fail("secret_file", "cannot be used: \(reason); it must hold \(secretRule)")
            }
            target.secretFile = file
        }
        if format == .json && t["secret"] == nil && t["secret_file"] == nil {
            fail(
                nil,
                "\(called) of format \"json\" needs a secret = \"whsec_…\" or secret_file = \"/…\" to sign its requests"
            )
        }
        target.headers = readHeaders(t, fail: fail)
        target.headerFiles = readHeaderFiles(t, headers: target.headers, checkFiles: checkFiles, fail: fail)
        // A user and password in the URL go as HTTP Basic authentication (as curl sends them),
        // and the URL is kept without them: neither is shown nor put in a message.
        if let url, urlProblem(url) == nil, let (bare, authorization) = basicAuthorization(url) {
            if target.headers.contains(where: { $0.name.lowercased() == "authorization" })
                || target.headerFiles.contains(where: { $0.name.lowercased() == "authorization" })
            {
                fail(
                    "url",
                    "has a user and password, and headers or header_files has Authorization too; give one of them")
            }
            target.url = bare
            target.headers.append(.init(name: "Authorization", value: authorization))
        }
        func int(_ key: String, _ range: ClosedRange<Int>) -> Int? { readInt(t, key, range, fail: fail) }
        if let timeout = int("timeout_seconds", 1...600) { target.timeout = Double(timeout) }
        target.concurrency = int("concurrency", 1...256) ?? target.concurrency
        if t["kinds"] != nil { target.kinds = readKinds(t, fail: fail) }
        if let ca = string("ca_file") {
            if !ca.hasPrefix("/") {
                fail("ca_file", "\(quoted(ca)) is not an absolute path")
            } else if checkFiles && !FileManager.default.isReadableFile(atPath: ca) {
                fail("ca_file", "\(quoted(ca)) cannot be read; give a PEM file of certificate authorities")
            } else if checkFiles, let problem = WebhookClients.caFileProblem(ca) {
                fail("ca_file", "\(quoted(ca)) \(problem)")
            }
            target.caFile = ca
        }
        return problems == 0 ? target : nil
    }

    /// Why a secret's text is not one, or nil.
    static func secretProblem(_ text: String) -> String? {
        guard let bytes = WebhookTarget.secretBytes(text) else { return "is a whsec_ secret whose rest is not base64" }
        if bytes.count < 16 { return "is \(bytes.count) bytes, shorter than 16" }
        if bytes.count > WebhookTarget.secretBytesAtMost {
            return "is \(bytes.count) bytes, longer than \(WebhookTarget.secretBytesAtMost)"
        }
        return nil
    }

    /// Why a secret file cannot be used, or nil.
    static func secretFileProblem(_ file: String) -> String? {
        do {
            let bytes = try WebhookTarget.secret(inFile: file)
            return bytes.count >= 16 ? nil : "\(file) holds a secret shorter than 16 bytes"
        } catch {
            return reason(error)
        }
    }

    /// A webhook's extra `headers`, each checked; the problems noted.
    static func readHeaders(_ t: TOMLTable, fail: (String?, String) -> Void) -> [WebhookTarget.Header] {
        guard let h = t["headers"] else { return [] }
        guard h.type == .table, let headers = h.table else {
            fail("headers", "must be a table of header names and strings, such as { X-Priority = \"high\" }")
            return []
        }
        guard headers.count <= webhookHeadersAtMost else {
            fail("headers", "has more than \(webhookHeadersAtMost) headers")
            return []
        }
        var list: [WebhookTarget.Header] = []
        for key in headers.keys.sorted() {
            guard let value = headers[key]?.string, headers[key]?.type == .string else {
                fail("headers", "\(quoted(key)) must be a string")
                continue
            }
            if let problem = headerProblem(key, value) {
                fail("headers", "\(quoted(key)) \(problem)")
                continue
            }
            list.append(.init(name: key, value: value))
        }
        return list
    }

    /// A webhook's `header_files`: header names and the files holding their values (a token kept
    /// where only streakd reads it), each an absolute path or a systemd credential's name; the
    /// problems noted.
    static func readHeaderFiles(
        _ t: TOMLTable, headers: [WebhookTarget.Header], checkFiles: Bool, fail: (String?, String) -> Void
    ) -> [WebhookTarget.HeaderFile] {
        guard let h = t["header_files"] else { return [] }
        guard h.type == .table, let files = h.table, files.count <= webhookHeadersAtMost else {
            fail(
                "header_files",
                "must be a table of at most \(webhookHeadersAtMost) header names and files, such as "
                    + "{ Authorization = \"ntfy-token\" } (a systemd credential's name, or an absolute path)")
            return []
        }
        var list: [WebhookTarget.HeaderFile] = []
        for key in files.keys.sorted() {
            guard let file = files[key]?.string, files[key]?.type == .string else {
                fail("header_files", "\(quoted(key)) must be a string: a credential's name or an absolute path")
                continue
            }
            let problem: String? =
                if let p = headerProblem(key, "") {
                    p
                } else if headers.contains(where: { $0.name.lowercased() == key.lowercased() }) {
                    "is in headers too; give it in one of them"
                } else if !file.hasPrefix("/") && !WebhookTarget.isCredentialName(file) {
                    "names \(quoted(file)), neither an absolute path nor a systemd credential's name"
                } else if checkFiles && file.hasPrefix("/") {  // a credential: in its unit only
                    headerFileProblem(file)
                } else {
                    nil
                }
            if let problem {
                fail("header_files", "\(quoted(key)) \(problem)")
            } else {
                list.append(.init(name: key, file: file))
            }
        }
        return list
    }

    /// Why a header's file cannot be used, or nil.
    static func headerFileProblem(_ file: String) -> String? {
        do {
            _ = try WebhookTarget.headerValue(inFile: file)
            return nil
        } catch {
            return "cannot be used: \(error)"
        }
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

    /// A URL with a user (and password) as the URL without them and the `Basic` credentials
    /// they make; nil for a URL without.
    static func basicAuthorization(_ url: String) -> (url: String, authorization: String)? {
        guard var u = URLComponents(string: url), let user = u.user else { return nil }
        let credentials = "\(user):\(u.password ?? "")"
        u.user = nil
        u.password = nil
        guard let bare = u.string else { return nil }
        return (bare, "Basic " + Data(credentials.utf8).base64EncodedString())
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

    static func readKinds(_ t: TOMLTable, fail: (String?, String) -> Void) -> Set<NotificationKind>? {
        let rule = "must be a list of kinds from \(NotificationKind.allCases.map(\.rawValue).joined(separator: ", "))"
        guard let k = t["kinds"], k.type == .array, let list = k.array else {
            fail("kinds", rule)
            return nil
        }
        var kinds: Set<NotificationKind> = []
        for item in list {
            guard let s = item.string, let kind = NotificationKind(rawValue: s) else {
                fail("kinds", "\(item.string.map(quoted) ?? "a value") is not a kind; \(rule)")
                continue
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
