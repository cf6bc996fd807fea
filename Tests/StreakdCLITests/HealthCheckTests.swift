import Foundation
import StreakTestKit
import Testing

/// `status --check` (SPEC §13): exit 0 and one line when healthy; exit 1 and a line per problem:
/// dead deliveries, deliveries pending an hour after their due instant, no successful tick in
/// 45 minutes, no successful refill in 26 hours. On SQLite and PostgreSQL alike.
@Suite("status --check", .fastTier)
struct HealthCheckTests {
    /// A user whose 7-day streak is at risk at 2026-11-21T19:00:00Z (20:00 in Berlin).
    func setUp(_ s: Sandbox) throws -> String {
        try Journal.ensureRunning()
        try s.file("config/streakd/streakd.toml", "badges = []\n")
        let id = "h" + UUID().uuidString.prefix(8).lowercased()
        s.addUser(id)
        try s.importLines((14...20).map { checkinLine("2026-11-\($0)T18:00:00+01:00", user: id) })
        return id
    }

    /// Runs `job` at `now`, expecting `code`.
    func run(
        _ s: Sandbox, _ args: [String], at now: String, code: Int32 = 0,
        sourceLocation: SourceLocation = #_sourceLocation
    ) {
        s.now = now
        let r = s.run(args)
        #expect(r.code == code, "\(args) at \(now): \(r)", sourceLocation: sourceLocation)
    }

    /// `status --check` at `now`: its exit status and lines.
    func check(_ s: Sandbox, at now: String) -> (code: Int32, lines: [String], err: String) {
        s.now = now
        let r = s.run(["status", "--check"])
        return (r.code, r.out.split(separator: "\n").map(String.init), r.err)
    }

    @Test func aStoreLookedAfterIsHealthy() throws {
        let s = try Sandbox()
        _ = try setUp(s)
        run(s, ["tick"], at: "2026-11-21T19:00:00Z")
        run(s, ["refill"], at: "2026-11-21T19:00:00Z")
        let c = check(s, at: "2026-11-21T19:10:00Z")
        #expect(c.code == 0 && c.err.isEmpty, "\(c)")
        #expect(
            c.lines == [
                "healthy: store \(s.store); last tick 2026-11-21T19:00:00Z (10 min ago), last refill "
                    + "2026-11-21T19:00:00Z (10 min ago)"
            ] || TestStore.postgres, "\(c)")
        #expect(c.lines.count == 1 && c.lines[0].hasPrefix("healthy: store "), "\(c)")
        s.now = "2026-11-21T19:10:00Z"
        let json = s.run(["status", "--check", "-o", "json"])
        #expect(json.code == 0)
        let object = try jsonObject(json.out)
        #expect(object["status"] as? String == "healthy")
        #expect((object["problems"] as? [Any])?.isEmpty == true)
        #expect(object["last_tick"] as? String == "2026-11-21T19:00:00Z")
        #expect(object["last_refill"] as? String == "2026-11-21T19:00:00Z")
    }

    @Test func aStoreNoRunHasLookedAfterIsNot() throws {
        let s = try Sandbox()
        s.addUser("u1")
        let c = check(s, at: fixedNow)
        #expect(c.code == 1 && c.err.isEmpty, "\(c)")
        #expect(c.lines.map { $0.prefix { $0 != ":" } } == ["tick", "refill"], "\(c)")
        #expect(
            c.lines[0].hasPrefix(
                "tick: no tick has ever succeeded on this store: `systemctl status streakd-tick.timer`"))
        #expect(c.lines[1].hasPrefix("refill: no refill has ever succeeded on this store"))
        s.now = fixedNow
        let json = try jsonObject(s.run(["status", "--check", "-o", "json"]).out)
        #expect(json["status"] as? String == "unhealthy")
        let problems = try #require(json["problems"] as? [[String: Any]])
        #expect(problems.map { $0["check"] as? String } == ["tick", "refill"])
        #expect(problems.allSatisfy { $0["count"] is NSNull })
        #expect(json["last_tick"] is NSNull)
    }

    /// A tick over 45 minutes old, then a refill over 26 hours old too.
    @Test func staleRunsAreProblems() throws {
        let s = try Sandbox()
        _ = try setUp(s)
        run(s, ["tick"], at: "2026-11-21T19:00:00Z")
        run(s, ["refill"], at: "2026-11-21T19:00:00Z")
        #expect(check(s, at: "2026-11-21T19:45:00Z").code == 0)
        var c = check(s, at: "2026-11-21T19:46:00Z")
        #expect(c.code == 1)
        #expect(
            c.lines == [
                "tick: no successful tick since 2026-11-21T19:00:00Z (46 min ago), over 45 minutes ago: "
                    + "`systemctl status streakd-tick.timer` and `journalctl -u streakd-tick.service` say why"
            ], "\(c)")
        run(s, ["tick"], at: "2026-11-22T21:00:00Z", code: 0)
        c = check(s, at: "2026-11-22T21:01:00Z")
        #expect(c.code == 1)
        #expect(
            c.lines == [
                "refill: no successful refill since 2026-11-21T19:00:00Z (1 day ago), over 26 hours ago: "
                    + "`systemctl status streakd-refill.timer` and `journalctl -u streakd-refill.service` say why"
            ], "\(c)")
    }

    /// A hook that always fails: its delivery pending past an hour, then given up (dead).
    @Test func lateAndDeadDeliveriesAreProblems() throws {
        let s = try Sandbox()
        _ = try setUp(s)
        let config = try s.file(
            "streakd.toml", "badges = []\n\n[[hooks]]\nname = \"down\"\ncommand = [\"/bin/false\"]\n")
        for t in ["19:00", "19:01", "19:06"] {
            run(s, ["tick", "--config", config], at: "2026-11-21T\(t):00Z", code: 75)
        }
        // A refill exits 75 too while deliveries are pending.
        run(s, ["refill", "--config", config], at: "2026-11-21T19:06:00Z", code: 75)
        #expect(check(s, at: "2026-11-21T19:50:00Z").code == 0, "pending, but due less than an hour ago")
        run(s, ["tick", "--config", config], at: "2026-11-21T20:01:00Z", code: 75)
        var c = check(s, at: "2026-11-21T20:02:00Z")
        #expect(c.code == 1)
        #expect(
            c.lines == [
                "pending: 1 delivery still pending more than an hour after the notification was due: "
                    + "`streakd log --failed` shows the failures; each tick tries again"
            ], "\(c)")
        run(s, ["tick", "--config", config], at: "2026-11-21T22:01:00Z")
        run(s, ["refill", "--config", config], at: "2026-11-21T22:01:00Z")
        c = check(s, at: "2026-11-21T22:02:00Z")
        #expect(c.code == 1)
        #expect(
            c.lines == [
                "dead: 1 delivery given up (dead): `streakd log --dead` says why; the notifications were not received"
            ], "\(c)")
        s.now = "2026-11-21T22:02:00Z"
        let json = try jsonObject(s.run(["status", "--check", "-o", "json"]).out)
        let problems = try #require(json["problems"] as? [[String: Any]])
        #expect(problems.map { $0["check"] as? String } == ["dead"])
        #expect(problems.first?["count"] as? Int == 1)
    }

    @Test func checkTakesNoUser() throws {
        let s = try Sandbox()
        let r = s.run(["status", "u1", "--check"])
        #expect(r.code == 64 && r.err.contains("--check takes no user"), "\(r)")
    }

    /// A store that is not there: 66 as for every command that reads, nothing created.
    @Test func aMissingStoreIsNotAProblemListButAnError() throws {
        let s = try Sandbox()
        let path = s.dir.appendingPathComponent("none/s.sqlite").path
        let r = s.runBare(["status", "--check", "--store", path])
        #expect(r.code == 66, "\(r)")
        #expect(!FileManager.default.fileExists(atPath: path))
    }
}
