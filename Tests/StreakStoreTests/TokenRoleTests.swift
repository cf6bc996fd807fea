import StreakCore
import StreakStore
import StreakTestKit
import Testing

/// The API's tokens (`TokenReading`, `TokenWriting`) on every engine: one per name, each hash
/// once, removed at once, the last use only moving forward.
@Suite(.fastTier) struct TokenRoleTests {
    static func token(_ name: String, _ scope: String, _ digit: Character) -> StoredToken {
        StoredToken(name: name, scope: scope, sha256: String(repeating: digit, count: 64), created: t0)
    }

    @Test(arguments: Engine.allCases) func tokensAreUniqueByNameAndHash(engine: Engine) throws {
        let store = try engine.open()
        try store.write { (w: any StoreWriter) throws in
            #expect(try w.addToken(Self.token("phone-app", "ingest", "a")))
            #expect(try !w.addToken(Self.token("phone-app", "read", "b")), "a name is taken once")
            #expect(try !w.addToken(Self.token("other", "read", "a")), "a hash is stored once")
            #expect(try w.addToken(Self.token("Dashboard", "read", "c")))
        }
        // Another process sees them, by name in bytes' order (upper case first).
        let tokens = try engine.again(store).read { try $0.tokens() }
        #expect(tokens == [Self.token("Dashboard", "read", "c"), Self.token("phone-app", "ingest", "a")])
    }

    @Test(arguments: Engine.allCases) func aRemovedTokenIsGoneAndUseOnlyMovesForward(engine: Engine) throws {
        let store = try engine.open()
        try store.write { w in _ = try w.addToken(Self.token("app", "admin", "d")) }
        let later = Instant(seconds: t0.seconds + 60)
        try store.write { w in try w.noteTokenUse("app", at: later) }
        try store.write { w in try w.noteTokenUse("app", at: t0) }
        try store.write { w in try w.noteTokenUse("nobody", at: t0) }
        #expect(try store.read { try $0.tokens() }.map(\.lastUsed) == [later])
        #expect(try store.write { w in try w.removeToken("app") })
        #expect(try !store.write { w in try w.removeToken("app") })
        #expect(try store.read { try $0.tokens() }.isEmpty)
    }
}
