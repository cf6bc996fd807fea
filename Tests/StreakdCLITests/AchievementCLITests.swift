import Foundation
import StreakTestKit
import Testing

/// Badges and levels (SPEC §9) as the built binary: `badges`, `status`, and `tick` delivering them
/// to the journal and a real hook, with four runs at once.
@Suite("badges and levels", .fastTier)
struct AchievementCLITests {
    /// A user unique to this run (the journal outlives it), with a hook that logs each key and
    /// keeps the JSON object it got.
    func setUp(_ s: Sandbox) throws -> (user: String, config: String, keys: String, objects: String) {
        try Journal.ensureRunning()
        let user = "a" + String(UUID().uuidString.prefix(8)).lowercased()
        s.addUser(user, tz: "Europe/Berlin")
        let keys = s.dir.appendingPathComponent("keys").path
        let objects = s.dir.appendingPathComponent("objects").path
        let config = try s.file(
            "streakd.toml",
            """
            [[hooks]]
            name = "log"
            command = ["/bin/sh", "-c", "echo \\"$STREAKD_KEY $STREAKD_BADGE\\" >> '\(keys)'; cat >> '\(objects)'; echo >> '\(objects)'"]
            """)
        return (user, config, keys, objects)
    }

    func lines(_ path: String) -> [String] {
        ((try? String(contentsOfFile: path, encoding: .utf8)) ?? "").split(separator: "\n").map(String.init)
    }

    /// A check-in that earns `social_1`; four ticks at once after it send it once, to the journal
    /// (its MESSAGE_ID, priority 6, STREAKD_BADGE) and the hook; later ticks never again.
    @Test func fourTicksAtOnceSendABadgeOnce() throws {
        let s = try Sandbox()
        let (user, config, keys, objects) = try setUp(s)
        let checkin = s.run(["checkin", user, "--meta", "kind=social"])
        #expect(checkin.code == 0, "\(checkin)")
        // preview shows none: it assumes no check-in, and one is what earns a badge.
        let preview = s.run(["preview", "--user", user, "--until", "2d", "-o", "json"])
        #expect(preview.code == 0 && !preview.out.contains("badge_unlocked"), "\(preview)")
        s.now = "2026-11-21T11:15:00Z"
        let runs = try (0..<4).map { _ in try s.spawn(["tick", "--config", config]) }.map { $0.wait() }
        for r in runs { #expect(r.code == 0, "\(r)") }
        #expect(runs.map { $0.out.components(separatedBy: "badge_unlocked").count - 1 }.reduce(0, +) == 1)
        #expect(lines(keys) == ["badge_unlocked/\(user)/social_1 social_1"])
        let object = try jsonObject(try #require(lines(objects).first))
        #expect(object["kind"] as? String == "badge_unlocked" && object["badge"] as? String == "social_1")
        #expect(object["streak"] is NSNull && object["due"] as? String == fixedNow)
        #expect(object["message"] as? String == "You unlocked the “Better Together” badge!")
        let entries = try Journal.entries(
            ["MESSAGE_ID=6bdd273e39db439d8b318a9fad96afc7", "STREAKD_USER=\(user)"], count: 1)
        #expect(entries.count == 1)
        #expect(entries.first?["STREAKD_BADGE"] as? String == "social_1")
        #expect(entries.first?["PRIORITY"] as? String == "6" && entries.first?["STREAKD_STREAK"] == nil)

        s.now = "2026-11-21T11:30:00Z"
        #expect(s.run(["checkin", user, "--meta", "kind=social"]).code == 0)
        #expect(s.run(["tick", "--config", config]).code == 0)
        #expect(lines(keys).count == 1)
        let log = s.run(["log", "--user", user, "--no-pager"])
        #expect(log.out.contains(" badge_unlocked \(user) badge social_1 2026-11-21: You unlocked"), "\(log)")
    }

    /// `badges -o json`: one object per badge with SPEC §9's keys; short output piped has no bar,
    /// on a terminal it has; `status -o json` has `xp`, `level` and `next_level_xp`.
    @Test func badgesAndStatusShowProgressAndLevel() throws {
        let s = try Sandbox()
        s.addUser("u1", tz: "Asia/Tokyo")
        try s.importLines((14...20).map { checkinLine("2026-11-\($0)T09:00:00+09:00", user: "u1") })
        let json = s.run(["badges", "u1", "-o", "json"])
        #expect(json.code == 0 && json.err.isEmpty, "\(json)")
        let objects = try json.out.split(separator: "\n").map { try jsonObject(String($0)) }
        #expect(objects.count == 12)
        #expect(
            objects.allSatisfy {
                $0.keys.sorted() == [
                    "badge", "category", "current", "description", "progress", "title", "unlocked_at", "user", "value",
                ]
            })
        let seven = try #require(objects.first { $0["badge"] as? String == "streak_7" })
        #expect(seven["unlocked_at"] as? String == "2026-11-20T00:00:00Z" && seven["progress"] as? Int == 100)
        let thirty = try #require(objects.first { $0["badge"] as? String == "streak_30" })
        #expect(thirty["progress"] as? Int == 23 && thirty["unlocked_at"] is NSNull)

        let short = s.run(["badges", "u1"])
        #expect(short.code == 0 && !short.out.contains("█") && !short.out.contains("░"), "\(short)")
        #expect(short.out.hasPrefix("u1 · level 1, 170 XP, level 2 at 500 XP · 2 of 12 badges\nstreaks\n"))
        #expect(short.out.contains("  ✓ streak_7      One Week Strong   100%  unlocked 2026-11-20T09:00:00+09:00\n"))
        #expect(short.out.contains("    streak_30     Habit Formed       23%  7 of 30\n"))

        // On a terminal (script(1) gives it one), a bar of ten cells per badge.
        let argv = [streakdBinary, "badges", "u1", "--store", s.store].map { "'" + $0 + "'" }.joined(separator: " ")
        let tty = run(["/usr/bin/script", "-qefc", argv, "/dev/null"], env: s.environment)
        #expect(tty.out.contains("streak_30     Habit Formed      ██░░░░░░░░  23%"), "\(tty)")

        let status = try s.statusObject("u1")
        #expect(status["xp"] as? Int == 170 && status["level"] as? Int == 1 && status["next_level_xp"] as? Int == 500)
        #expect(s.run(["badges", "nobody"]).code == 65)
    }
}
