import StreakCore
@testable import StreakJobs
import StreakStore
import StreakTestKit
import Testing

/// The API tokens' hash (FIPS 180-4's SHA-256, checked against its published vectors and the
/// padding's edges) and how a presented token is matched.
@Suite(.fastTier) struct TokenHashTests {
    @Test func sha256MatchesThePublishedVectors() {
        #expect(SHA256.hex("".utf8) == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
        #expect(SHA256.hex("abc".utf8) == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        #expect(
            SHA256.hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq".utf8)
                == "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1")
        #expect(
            SHA256.hex([UInt8](repeating: 0x61, count: 1_000_000))
                == "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0")
        // 55, 56 and 64 bytes: the length fits in the last block, or needs one of its own.
        #expect(
            SHA256.hex([UInt8](repeating: 0x61, count: 55))
                == "9f4390f8d30c2dd92ec9f095b65e2b9ae9b0a925a5258e241c9f1e910f734318")
        #expect(
            SHA256.hex([UInt8](repeating: 0x61, count: 56))
                == "b35439a4ac6f0948b6d6f9e3c6af0f5f590ce20f1bde7090ef7970686ec6738a")
        #expect(
            SHA256.hex([UInt8](repeating: 0x61, count: 64))
                == "ffe054fe7ae0cb6dc65c3af9b61d5209f439851db43d0ba5997337df154668eb")
    }

    @Test func aPresentedTokenMatchesItsHashAlone() {
        let stored = [
            StoredToken(name: "a", scope: "read", sha256: SHA256.hex("streakd_one".utf8), created: Instant(seconds: 0)),
            StoredToken(
                name: "b", scope: "admin", sha256: SHA256.hex("streakd_two".utf8), created: Instant(seconds: 0)),
        ]
        #expect(matchingToken("streakd_two", among: stored)?.name == "b")
        #expect(matchingToken("streakd_one", among: stored)?.name == "a")
        #expect(matchingToken("streakd_on", among: stored) == nil)
        #expect(matchingToken("", among: stored) == nil)
        #expect(matchingToken(stored[0].sha256, among: stored) == nil, "the hash itself is no token")
        #expect(SHA256.sameInConstantTime([1, 2], [1, 2]) && !SHA256.sameInConstantTime([1, 2], [1, 3]))
        #expect(!SHA256.sameInConstantTime([1, 2], [1, 2, 3]))
    }

    /// A transaction whose token read fails leaves the check to the request's next one; a read
    /// that answers makes it, once.
    @Test func aFailedTokenReadLeavesTheCheckUnmade() throws {
        struct Reader: TokenReading {
            var fails: Bool
            func tokens() throws -> [StoredToken] { [] }
            func token(sha256: String) throws -> StoredToken? {
                if fails { throw StoreError(.unavailable, "the store is not there") }
                return StoredToken(name: "a", scope: "read", sha256: sha256, created: Instant(seconds: 0))
            }
        }
        let check = TokenCheck(sha256: SHA256.hex("streakd_one".utf8), tokens: APITokens())
        #expect(throws: StoreError.self) { try check.verify(in: Reader(fails: true)) }
        #expect(!check.made)
        #expect(try check.verify(in: Reader(fails: false)) == nil)
        #expect(check.made)
    }

    @Test func scopesAllowWhatTheyNameAndLess() {
        #expect(TokenScope.admin.allows(.ingest) && TokenScope.admin.allows(.read))
        #expect(TokenScope.ingest.allows(.read) && !TokenScope.ingest.allows(.admin))
        #expect(!TokenScope.read.allows(.ingest))
    }
}
