import StreakCore
import StreakStore

/// The API's tokens in PostgreSQL (migration 7): a row per name, the hash unique.
extension PGAccess {
    func tokens() throws -> [StoredToken] {
        try pg.query(
            "SELECT name, scope, sha256, created_at, last_used_at FROM api_tokens ORDER BY name COLLATE \"C\""
        ).rows.map { row in
            StoredToken(
                name: try row.string(0), scope: try row.string(1), sha256: try row.string(2), created: try row.get(3),
                lastUsed: try row.get(4))
        }
    }

    func token(sha256: String) throws -> StoredToken? {
        try pg.query(
            reusing: "SELECT name, scope, sha256, created_at, last_used_at FROM api_tokens WHERE sha256 = $1", sha256
        ).rows.first.map { row in
            StoredToken(
                name: try row.string(0), scope: try row.string(1), sha256: try row.string(2), created: try row.get(3),
                lastUsed: try row.get(4))
        }
    }

    func addToken(_ token: StoredToken) throws -> Bool {
        try pg.query(
            """
            INSERT INTO api_tokens (name, scope, sha256, created_at, last_used_at) VALUES ($1, $2, $3, $4, $5)
            ON CONFLICT DO NOTHING
            """, token.name, token.scope, token.sha256, token.created, token.lastUsed
        ).affectedRows == 1
    }

    func removeToken(_ name: String) throws -> Bool {
        try pg.query("DELETE FROM api_tokens WHERE name = $1", name).affectedRows == 1
    }

    func noteTokenUse(_ name: String, at: Instant) throws {
        try pg.query(
            "UPDATE api_tokens SET last_used_at = $1 WHERE name = $2 AND (last_used_at IS NULL OR last_used_at < $1)",
            at, name)
    }
}
