import StreakCore
import StreakStore

/// What an API token allows (SPEC §11): `read` the GETs, `ingest` those and check-ins, `admin`
/// everything.
public enum TokenScope: String, CaseIterable, Sendable {
    case read, ingest, admin

    /// Whether a token of this scope may do what `needed` names.
    public func allows(_ needed: TokenScope) -> Bool { rank >= needed.rank }

    private var rank: Int {
        switch self {
        case .read: 0
        case .ingest: 1
        case .admin: 2
        }
    }

    static let names = allCases.map(\.rawValue).joined(separator: ", ")
}

/// `streakd token add|list|remove`: the HTTP API's tokens, kept in the store as SHA-256 only.
extension Context {
    static let tokenNameRule = "1 to 64 characters: a letter or digit, then letters, digits, '.', '_' or '-'"

    /// Prints a new random token once (256 bits), alone on a line, and stores its hash.
    public func addToken(name: String, scope: String) throws {
        let scope = try tokenScope(scope)
        try checkTokenName(name)
        var random = SystemRandomNumberGenerator()  // getrandom(2): the kernel's CSPRNG
        let secret = "streakd_" + hexDigits((0..<32).map { _ in random.next() as UInt8 })
        let token = StoredToken(name: name, scope: scope.rawValue, sha256: SHA256.hex(secret.utf8), created: now)
        guard try store.write({ w in try w.addToken(token) }) else {
            throw StreakdError.data(
                "token \(quoted(name)) exists already; pick another name, or remove it first with: "
                    + "streakd token remove \(name)")
        }
        printer.record(
            .object([("name", .string(name)), ("scope", .string(scope.rawValue)), ("token", .string(secret))]),
            short: secret)
        if printer.format == .short {
            printer.err("added token \(name) (\(scope.rawValue)); it is shown this once: keep it now")
        }
    }

    /// Names, scopes, when each was made and last used; never a token or its hash.
    public func listTokens() throws {
        let tokens = try store.read { r in try r.tokens() }
        if printer.format == .short && tokens.isEmpty {
            printer.err("no tokens yet; add one with: streakd token add NAME --scope ingest|read|admin")
        }
        let width = max(4, tokens.map(\.name.count).max() ?? 0)
        if printer.format == .short && !tokens.isEmpty {
            printer.out(pad("NAME", width) + "  " + pad("SCOPE", 6) + "  " + pad("CREATED", 20) + "  LAST USED")
        }
        for t in tokens {
            printer.record(
                .object([
                    ("name", .string(t.name)), ("scope", .string(t.scope)), ("created", .string(t.created.description)),
                    ("last_used", .optional(t.lastUsed?.description)),
                ]),
                short: pad(t.name, width) + "  " + pad(t.scope, 6) + "  " + pad(t.created.description, 20) + "  "
                    + (t.lastUsed?.description ?? "never"))
        }
    }

    /// Removes a token: a server refuses it from its next request on.
    public func removeToken(name: String) throws {
        try checkTokenName(name)
        guard try store.write({ w in try w.removeToken(name) }) else {
            throw StreakdError.data("unknown token \(quoted(name)); streakd token list shows the tokens")
        }
        printer.record(.object([("name", .string(name)), ("removed", .bool(true))]), short: "removed token \(name)")
    }

    func tokenScope(_ text: String) throws -> TokenScope {
        guard let scope = TokenScope(rawValue: text) else {
            throw StreakdError.usage("--scope: \(quoted(text)) is not a scope; use one of \(TokenScope.names)")
        }
        return scope
    }

    func checkTokenName(_ name: String) throws {
        let b = Array(name.utf8)
        func alnum(_ c: UInt8) -> Bool { (48...57).contains(c) || (65...90).contains(c) || (97...122).contains(c) }
        guard (1...64).contains(b.count), alnum(b[0]), b.allSatisfy({ alnum($0) || $0 == 46 || $0 == 95 || $0 == 45 })
        else { throw StreakdError.usage("\(quoted(name)) is not a token name; use \(Self.tokenNameRule)") }
    }
}

/// Which stored token a request's bearer token is, if any: its hash compared with every stored
/// hash in constant time, none skipped, so the time taken says nothing about which matched.
public func matchingToken(_ presented: String, among tokens: [StoredToken]) -> StoredToken? {
    let hash = Array(SHA256.hex(presented.utf8).utf8)
    var found: StoredToken?
    for token in tokens where SHA256.sameInConstantTime(hash, token.sha256.utf8) && found == nil { found = token }
    return found
}

func hexDigits(_ bytes: [UInt8]) -> String {
    let digits = Array("0123456789abcdef".utf8)
    var out: [UInt8] = []
    out.reserveCapacity(bytes.count * 2)
    for b in bytes { out += [digits[Int(b >> 4)], digits[Int(b & 15)]] }
    return String(decoding: out, as: UTF8.self)
}
