import Foundation
import StreakTestKit
import Testing

/// A delivery pending on a sink the configuration no longer has, or whose `kinds` no longer take
/// it, is given up as any other: a line from `tick`, a "delivery given up" entry (`log --dead`),
/// counted dead in the summary, and never sent.
@Suite("a sink changed under its pending deliveries", .fastTier)
struct SinkChangeTests {
    /// A user at risk on 2026-11-21, and a hook named `chat` that fails once (a pending delivery).
    func pendingOnAHook(_ s: Sandbox) throws -> (config: String, seen: String) {
        try Journal.ensureRunning()
        let user = "sc" + String(UUID().uuidString.prefix(8)).lowercased()
        s.addUser(user)
        try s.importLines((14...20).map { checkinLine("2026-11-\($0)T18:00:00+01:00", user: user) })
        let seen = s.dir.appendingPathComponent("seen").path
        let config = try s.file("streakd.toml", Self.hook("chat", "echo no >&2; exit 1", seen: seen))
        s.now = "2026-11-21T19:00:00Z"
        let r = s.run(["tick", "--config", config])
        #expect(r.code == 75 && r.err.contains("failed hook:chat"), "\(r)")
        return (config, seen)
    }

    static func hook(_ name: String, _ script: String, seen: String, kinds: String = "") -> String {
        "badges = []\n\n[[hooks]]\nname = \"\(name)\"\ncommand = [\"/bin/sh\", \"-c\", "
            + "\"echo \\\"$STREAKD_KEY\\\" >> '\(seen)'; \(script)\"]\n\(kinds)\n"
    }

    func expectGivenUp(_ s: Sandbox, _ config: String, sink: String, why: String) throws {
        s.now = "2026-11-21T19:05:00Z"
        let r = s.run(["tick", "--config", config])
        #expect(r.code == 0, "\(r)")
        #expect(r.err.contains("\(sink) gave up on at_risk/") && r.err.contains(why), "\(r.err)")
        #expect(r.err.contains("0 failed, 1 dead, 1 retried"), "\(r.err)")
        let dead = s.run(["log", "--dead", "--no-pager"])
        #expect(dead.out.contains("DEAD \(sink) at_risk") && dead.out.contains(why), "\(dead)")
    }

    @Test func aRemovedHooksDeliveriesAreGivenUpAndTold() throws {
        let s = try Sandbox()
        let (_, seen) = try pendingOnAHook(s)
        let renamed = try s.file("renamed.toml", Self.hook("talk", "exit 0", seen: seen))
        try expectGivenUp(s, renamed, sink: "hook:chat", why: "hook:chat is no longer configured")
        #expect(try String(contentsOfFile: seen, encoding: .utf8).split(separator: "\n").count == 1)
    }

    @Test func aDeliveryAHookNoLongerTakesIsGivenUpNotSent() throws {
        let s = try Sandbox()
        let (_, seen) = try pendingOnAHook(s)
        let narrowed = try s.file(
            "narrowed.toml", Self.hook("chat", "exit 0", seen: seen, kinds: "kinds = [\"streak_broken\"]"))
        try expectGivenUp(s, narrowed, sink: "hook:chat", why: "no longer takes this notification")
        #expect(try String(contentsOfFile: seen, encoding: .utf8).split(separator: "\n").count == 1, "sent again")
    }
}
