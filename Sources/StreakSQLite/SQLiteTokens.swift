import GRDB
import StreakCore
import StreakStore

/// The API's tokens in SQLite (migration 14): a row per name, the hash unique.
extension SQLiteAccess {
    func tokens() throws -> [StoredToken] {
        let s = try RawStatement(
            db, "SELECT name, scope, sha256, created_at, last_used_at FROM api_tokens ORDER BY name")
        var tokens: [StoredToken] = []
        try s.rows {
            tokens.append(
                StoredToken(
                    name: s.text(0), scope: s.text(1), sha256: s.text(2), created: Instant(seconds: s.int64(3)),
                    lastUsed: s.optionalInt64(4).map { Instant(seconds: $0) }))
        }
        return tokens
    }

    func token(sha256: String) throws -> StoredToken? {
        let s = try RawStatement(
            db, "SELECT name, scope, sha256, created_at, last_used_at FROM api_tokens WHERE sha256 = ?1")
        s.bind(1, sha256)
        var found: StoredToken?
        try s.rows {
            found = StoredToken(
                name: s.text(0), scope: s.text(1), sha256: s.text(2), created: Instant(seconds: s.int64(3)),
                lastUsed: s.optionalInt64(4).map { Instant(seconds: $0) })
        }
        return found
    }

    func addToken(_ token: StoredToken) throws -> Bool {
        try db.execute(
            sql: """
                INSERT INTO api_tokens (name, scope, sha256, created_at, last_used_at) VALUES (?, ?, ?, ?, ?)
                ON CONFLICT DO NOTHING
                """,
            arguments: [token.name, token.scope, token.sha256, token.created.seconds, token.lastUsed?.seconds])
        return db.changesCount == 1
    }

    func removeToken(_ name: String) throws -> Bool {
        try db.execute(sql: "DELETE FROM api_tokens WHERE name = ?", arguments: [name])
        return db.changesCount == 1
    }

    func noteTokenUse(_ name: String, at: Instant) throws {
        try db.execute(
            sql: "UPDATE api_tokens SET last_used_at = ?1 WHERE name = ?2 AND coalesce(last_used_at < ?1, true)",
            arguments: [at.seconds, name])
    }
}
