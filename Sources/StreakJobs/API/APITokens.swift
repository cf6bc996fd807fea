import Dispatch
import StreakCore
import StreakStore
import Synchronization

/// The API's tokens as a running server keeps them (SPEC §11): read from the store once, and
/// again when a request carries a token not among them (one added since). A request's token is
/// matched here, without a store round trip of its own, and then checked inside the first
/// transaction the request opens anyway (`TokenCheck`): a token `streakd token remove` removed,
/// from any process, fails from the next request on.
public final class APITokens: Sendable {
    private let known = Mutex<[StoredToken]?>(nil)

    public init() {}

    /// Where the tokens' uses are noted, one at a time, beside the requests.
    static let uses = DispatchQueue(label: "streakd.token-uses")

    /// The client an `Authorization` header names and the check its request makes in its own
    /// transaction; or the 401 (no or unknown token) or 403 (a token without `needs`) to answer.
    /// Its use is noted at most once a minute.
    public func authorize(_ authorization: String?, needs: TokenScope, in c: Context) -> Result<
        (APIClient, TokenCheck), APIAnswer
    > {
        match(authorization, needs: needs, in: c).map { token, scope in
            if token.lastUsed.map({ c.now.seconds - $0.seconds >= 60 }) ?? true, noteUse(token, at: c.now) {
                // Beside the request, not in its way: a GET does not wait for another
                // process's write (a tick, an import) to note when its token was used.
                let (store, name, now) = (c.store, token.name, c.now)
                Self.uses.async { _ = try? store.write { try $0.noteTokenUse(name, at: now) } }
            }
            return (APIClient(name: token.name, scope: scope), TokenCheck(sha256: token.sha256, tokens: self))
        }
    }

    /// Whether a token this server knows already allows `needs` (no store read): a request
    /// with a body reads it only then, or once `authorize` lets it through.
    public func knownAllows(_ authorization: String?, needs: TokenScope) -> Bool {
        guard let authorization, let presented = Context.bearerToken(authorization),
            let token = known.withLock({ $0 }).flatMap({ matchingToken(presented, among: $0) })
        else { return false }
        return TokenScope(rawValue: token.scope)?.allows(needs) == true
    }

    /// The 401 or 403 that refuses a request's token, or nil; its use is not noted.
    public func refusal(_ authorization: String?, needs: TokenScope, in c: Context) -> APIAnswer? {
        if case .failure(let refused) = match(authorization, needs: needs, in: c) {
            return refused
        }
        return nil
    }

    /// The stored token an `Authorization` header names, among those known (read again when
    /// it is not among them), and its scope; or the answer that refuses it.
    private func match(_ authorization: String?, needs: TokenScope, in c: Context)
        -> Result<(StoredToken, TokenScope), APIAnswer>
    {
        guard let authorization, let presented = Context.bearerToken(authorization) else {
            return .failure(
                .problem(
                    401, "this request needs a token: Authorization: Bearer TOKEN",
                    headers: [("WWW-Authenticate", "Bearer")]))
        }
        var token = known.withLock { $0 }.flatMap { matchingToken(presented, among: $0) }
        if token == nil {
            let tokens: [StoredToken]
            do {
                tokens = try c.store.read { try $0.tokens() }
            } catch {
                return .failure(.failed(error))
            }
            known.withLock { $0 = tokens }
            token = matchingToken(presented, among: tokens)
        }
        guard let token, let scope = TokenScope(rawValue: token.scope) else { return .failure(.unknownToken) }
        guard scope.allows(needs) else {
            return .failure(
                .problem(
                    403,
                    "the token \(quoted(token.name)) has the scope \(scope.rawValue); this request needs "
                        + "\(needs.rawValue) or more",
                    headers: [("WWW-Authenticate", #"Bearer error="insufficient_scope""#)]))
        }
        return .success((token, scope))
    }

    /// Notes the token's use at `now` here; answers whether the store is to note it too: not when
    /// a request at the same time noted it already (the first of many at once writes, the
    /// others do not wait for its row lock).
    private func noteUse(_ token: StoredToken, at now: Instant) -> Bool {
        known.withLock { known in
            guard let i = known?.firstIndex(where: { $0.sha256 == token.sha256 }) else { return true }
            guard known![i].lastUsed.map({ now.seconds - $0.seconds >= 60 }) ?? true else { return false }
            known![i].lastUsed = now
            return true
        }
    }

    /// A token the store no longer has: forgotten here too.
    func forget(_ sha256: String) {
        known.withLock { $0?.removeAll { $0.sha256 == sha256 } }
    }
}

/// One request's check of its token inside a transaction the request opens (its first): the
/// token must still be stored. Made once per request.
public final class TokenCheck: Sendable {
    let sha256: String
    let tokens: APITokens
    private let done = Atomic<Bool>(false)

    init(sha256: String, tokens: APITokens) {
        self.sha256 = sha256
        self.tokens = tokens
    }

    /// Whether the check was made already (by an earlier transaction of the request).
    public var made: Bool { done.load(ordering: .acquiring) }

    /// Nil when the token is still stored; else the 401 to answer instead (nothing else done).
    /// A read that fails leaves the check unmade: the request's next transaction makes it.
    public func verify(in r: some TokenReading) throws -> APIAnswer? {
        verify(among: Set(try r.token(sha256: sha256).map { [$0.sha256] } ?? []))
    }

    /// The same against the hashes of the tokens stored (read once for several requests).
    func verify(among stored: Set<String>) -> APIAnswer? {
        defer { done.store(true, ordering: .releasing) }
        guard !stored.contains(sha256) else { return nil }
        tokens.forget(sha256)
        return .unknownToken
    }
}

/// The store as one request's jobs see it: its first transaction checks the request's token
/// (`TokenCheck`); a token gone answers 401 (thrown as the answer) before anything else is read.
struct TokenCheckedStore: Store {
    let inner: any Store
    let token: TokenCheck

    func read<T>(_ body: (any StoreReader) throws -> T) throws -> T {
        try inner.read { r in
            try verify(r)
            return try body(r)
        }
    }

    func write<T>(_ mode: WriteMode, _ body: (any StoreWriter) throws -> T) throws -> T {
        try inner.write(mode) { w in
            try verify(w)
            return try body(w)
        }
    }

    func readBeside<T>(_ body: (any StoreReader) throws -> T) throws -> T {
        try inner.readBeside { r in
            try verify(r)
            return try body(r)
        }
    }

    private func verify(_ r: some TokenReading) throws {
        if !token.made, let refused = try token.verify(in: r) { throw refused }
    }

    func clock() throws -> Instant? { try inner.clock() }
    var concurrentClaims: Bool { inner.concurrentClaims }
    var location: String { inner.location }
    func check() throws -> StoreCheck { try inner.check() }
    func backup(to path: String) throws { try inner.backup(to: path) }
    func openConnections(_ count: Int) -> (open: Int, short: String?)? { inner.openConnections(count) }
    func holdUpkeep(_ hold: Bool) throws { try inner.holdUpkeep(hold) }
    func upkeep() throws { try inner.upkeep() }
}

extension Context {
    /// This context with its store checking `check` in the request's first transaction.
    public func checking(_ check: TokenCheck) -> Context {
        Context(
            store: TokenCheckedStore(inner: store, token: check), config: config, now: now, zones: zones,
            printer: printer, logger: logger, stop: stop)
    }

    /// The 401 to answer when the request's token is no longer stored, checked in a read of its
    /// own unless a transaction of the request checked it already; nil when it is stored (or the
    /// request needs no token).
    public func tokenRefusal() -> APIAnswer? {
        guard let checked = store as? TokenCheckedStore, !checked.token.made else { return nil }
        do {
            try store.read { _ in }
            return nil
        } catch {
            return .failed(error)
        }
    }

    /// A job's work with the request's token checked: in its write step (first, answering 401
    /// without writing when the token is gone), or, for an answer made without a transaction, in
    /// a read of its own.
    public func tokenChecked(_ work: APIWork) -> APIWork {
        guard let checked = store as? TokenCheckedStore, !checked.token.made else { return work }
        switch work {
        case .answer(let answer): return .answer(tokenRefusal() ?? answer)
        case .write(let step):
            let check = checked.token
            return .write { w in
                if !check.made, let refused = try check.verify(in: w) { return refused }
                return try step(w)
            }
        case .checkin(var work):
            work.token = checked.token
            return .checkin(work)
        }
    }

    /// The token of `Bearer TOKEN` (the scheme in any case, RFC 9110), or nil.
    static func bearerToken(_ header: String) -> String? {
        let parts = header.split(separator: " ", maxSplits: 1, omittingEmptySubsequences: true)
        guard parts.count == 2, parts[0].lowercased() == "bearer" else { return nil }
        let token = parts[1].trimmingCharacters(in: " \t")
        return token.isEmpty ? nil : String(token)
    }
}

extension APIAnswer {
    /// No token of that hash is stored.
    static let unknownToken = APIAnswer.problem(
        401, "the token is not known (removed, mistyped or from another store)",
        headers: [("WWW-Authenticate", #"Bearer error="invalid_token""#)])
}

extension Substring {
    fileprivate func trimmingCharacters(in set: String) -> Substring {
        var s = self
        while let c = s.first, set.contains(c) { s = s.dropFirst() }
        while let c = s.last, set.contains(c) { s = s.dropLast() }
        return s
    }
}
