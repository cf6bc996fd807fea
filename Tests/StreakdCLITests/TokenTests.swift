import Foundation
import StreakTestKit
import Testing

@Suite("token add, list, remove", .fastTier)
struct TokenTests {
    /// `streakd_` and 64 lowercase hex digits (256 random bits).
    static func isToken(_ s: String) -> Bool {
        s.count == 72 && s.hasPrefix("streakd_") && s.dropFirst(8).allSatisfy { $0.isHexDigit && !$0.isUppercase }
    }

    @Test func addListAndRemove() throws {
        let s = try Sandbox()
        let add = s.run(["token", "add", "phone-app", "--scope", "ingest"])
        #expect(add.code == 0, "\(add)")
        let token = String(add.out.dropLast())
        #expect(add.out.hasSuffix("\n") && Self.isToken(token), "the token alone: \(add.out)")
        #expect(add.err == "added token phone-app (ingest); it is shown this once: keep it now\n")

        let json = s.run(["token", "add", "dashboard", "--scope", "read", "-o", "json"])
        #expect(json.code == 0 && json.err == "", "\(json)")
        let object = try jsonObject(json.out)
        #expect(object.keys.sorted() == ["name", "scope", "token"])
        #expect(object["name"] as? String == "dashboard" && object["scope"] as? String == "read")
        let second = try #require(object["token"] as? String)
        #expect(Self.isToken(second) && second != token)

        let list = s.run(["token", "list"])
        #expect(list.code == 0 && list.err == "", "\(list)")
        #expect(
            list.out == """
                NAME       SCOPE   CREATED               LAST USED
                dashboard  read    2026-11-21T11:00:00Z  never
                phone-app  ingest  2026-11-21T11:00:00Z  never

                """)
        let listJSON = s.run(["token", "list", "-o", "json"])
        #expect(
            listJSON.out == """
                {"name":"dashboard","scope":"read","created":"2026-11-21T11:00:00Z","last_used":null}
                {"name":"phone-app","scope":"ingest","created":"2026-11-21T11:00:00Z","last_used":null}

                """)
        #expect(!list.out.contains(token) && !listJSON.out.contains(second), "a token is shown once")
        if !TestStore.postgres {
            // The store holds the hash, never the token (the database and its log alike).
            var bytes = Data()
            for suffix in ["", "-wal"] {
                bytes += (try? Data(contentsOf: URL(fileURLWithPath: s.store + suffix))) ?? Data()
            }
            let text = String(decoding: bytes, as: UTF8.self)
            #expect(!text.contains(token) && !text.contains(second))
        }

        let remove = s.run(["token", "remove", "phone-app"])
        #expect(remove.code == 0 && remove.out == "removed token phone-app\n" && remove.err == "", "\(remove)")
        let again = s.run(["token", "remove", "phone-app"])
        #expect(again.code == 65 && again.out == "")
        #expect(again.err == error(#"unknown token "phone-app"; streakd token list shows the tokens"#))
        #expect(s.run(["token", "list", "-o", "json"]).out.split(separator: "\n").count == 1)
    }

    @Test func namesAndScopesAreChecked() throws {
        let s = try Sandbox()
        let missing = s.run(["token", "list"])
        #expect(missing.code == 66 && missing.err.contains("no store at"), "\(missing)")
        #expect(s.run(["token", "add", "app", "--scope", "admin"]).code == 0)
        let taken = s.run(["token", "add", "app", "--scope", "read"])
        #expect(taken.code == 65 && taken.out == "")
        #expect(
            taken.err
                == error(
                    #"token "app" exists already; pick another name, or remove it first with: streakd token remove app"#
                ))
        let scope = s.run(["token", "add", "other", "--scope", "write"])
        #expect(scope.code == 64 && scope.out == "")
        #expect(scope.err == error(#"--scope: "write" is not a scope; use one of read, ingest, admin"#))
        for name in ["_x", ".app", "a b", String(repeating: "a", count: 65), "ä"] {
            let bad = s.run(["token", "add", name, "--scope", "read"])
            #expect(bad.code == 64 && bad.out == "", "\(name): \(bad)")
            #expect(bad.err.contains("is not a token name; use 1 to 64 characters"), "\(name): \(bad.err)")
        }
        #expect(s.run(["token", "remove", "a b"]).code == 64)
        let empty = try Sandbox()
        _ = empty.run(["user", "add", "u1", "--tz", "UTC"])
        let none = empty.run(["token", "list"])
        #expect(none.code == 0 && none.out == "")
        #expect(none.err == "no tokens yet; add one with: streakd token add NAME --scope ingest|read|admin\n")
    }
}
