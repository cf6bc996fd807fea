import StreakCore

/// An API token as the store keeps it (SPEC §11): its name, its scope, and the SHA-256 of the
/// token (64 lowercase hex digits), never the token itself.
public struct StoredToken: Equatable, Sendable {
    public var name: String
    /// `ingest`, `read` or `admin`, as the jobs name them.
    public var scope: String
    public var sha256: String
    public var created: Instant
    /// When a request last carried it (nil: never).
    public var lastUsed: Instant?

    public init(name: String, scope: String, sha256: String, created: Instant, lastUsed: Instant? = nil) {
        self.name = name
        self.scope = scope
        self.sha256 = sha256
        self.created = created
        self.lastUsed = lastUsed
    }
}

/// The API's tokens, one per name (a unique key), each hash stored once (a unique key).
public protocol TokenReading {
    /// Every token, by name (bytes compared). Few: a server compares a request's hash with each.
    func tokens() throws -> [StoredToken]
    /// The token whose hash is `sha256`, if it is stored (a unique key's lookup): a server that
    /// keeps the tokens in memory checks this inside each request's own transaction, so a removed
    /// token fails from the next request on.
    func token(sha256: String) throws -> StoredToken?
}

extension TokenReading {
    public func token(sha256: String) throws -> StoredToken? { try tokens().first { $0.sha256 == sha256 } }
}

public protocol TokenWriting {
    /// Adds a token; answers false when the name (or, against all odds, the hash) is taken.
    func addToken(_ token: StoredToken) throws -> Bool
    /// Removes a token by name; answers false when there is none. A server checking each
    /// request's token in that request's transaction (`token(sha256:)`) refuses it from the next
    /// request on.
    func removeToken(_ name: String) throws -> Bool
    /// Notes that a request carried the token at `at` (later than the last noted only).
    func noteTokenUse(_ name: String, at: Instant) throws
}
