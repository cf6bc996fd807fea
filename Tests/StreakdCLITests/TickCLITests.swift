import Foundation
import StreakTestKit
import Testing

/// `tick`, `preview` and `refill` as the built binary, on real SQLite files, with a real journald
/// and real hook processes.
@Suite("tick, preview and refill", .fastTier)
struct TickCLITests {
    /// Users with 7 days of check-ins ending yesterday in Berlin; ids unique to this run, since
    /// the journal outlives it. No badges (`badges = []`, here and in `hookConfig`): the streak
    /// they would unlock is the badges' tests' (AchievementCLITests); these count reminders.
    func setUp(_ s: Sandbox, users n: Int = 1) throws -> [String] {
        try Journal.ensureRunning()
        try s.file("config/streakd/streakd.toml", "badges = []\n")
        let tag = String(UUID().uuidString.prefix(8)).lowercased()
        let ids = (0..<n).map { "t\(tag)-\($0)" }
        var lines: [String] = []
        for id in ids {
            s.addUser(id)
            lines += (14...20).map { checkinLine("2026-11-\($0)T18:00:00+01:00", user: id) }
        }
        try s.importLines(lines)
        return ids
    }

    func hookConfig(_ s: Sandbox, _ command: [String], extra: String = "") throws -> String {
        let argv = command.map { "\"" + $0.replacingOccurrences(of: "\"", with: "\\\"") + "\"" }
        return try s.file(
            "streakd.toml",
            "badges = []\n\n[[hooks]]\nname = \"log\"\ncommand = [\(argv.joined(separator: ", "))]\n" + extra)
    }

    @Test func tickSendsTheDueReminderToTheJournalOnce() throws {
        let s = try Sandbox()
        let id = try setUp(s)[0]
        s.now = "2026-11-21T18:45:00Z"
        var r = s.run(["tick"])
        #expect(r.code == 0 && r.out == "", "\(r)")
        #expect(
            r.err
                == "tick at 2026-11-21T18:45:00Z: 0 sent, 0 expired; 0 delivered, 0 failed, 0 dead, 0 retried; 0 pending (1 streaks looked at)\n"
        )
        s.now = "2026-11-21T19:00:00Z"
        r = s.run(["tick"])
        #expect(r.code == 0)
        #expect(
            r.out
                == "sent 2026-11-21T19:00:00Z at_risk \(id)/daily 2026-11-21: Your 7-day streak is at risk! Check in today to keep it going. 1 freeze left.\n"
        )
        r = s.run(["tick", "-o", "json"])
        #expect(r.code == 0 && r.out == "", "\(r)")
        let entries = try Journal.entries(["STREAKD_USER=\(id)"], count: 1)
        #expect(entries.count == 1)
        let e = try #require(entries.first)
        #expect(e["MESSAGE_ID"] as? String == "cf4039696c9c459e89e0e7f18de192c5")
        #expect(e["PRIORITY"] as? String == "5")
        #expect(e["SYSLOG_IDENTIFIER"] as? String == "streakd")
        #expect(e["STREAKD_KEY"] as? String == "at_risk/\(id)/daily/2026-11-21")
        #expect(e["STREAKD_DUE"] as? String == "2026-11-21T19:00:00Z")
        #expect(e["STREAKD_LOCAL_DUE"] as? String == "2026-11-21T20:00:00+01:00")
        #expect(e["STREAKD_TIMEZONE"] as? String == "Europe/Berlin")
        #expect(e["STREAKD_STREAK_LENGTH"] as? String == "7")
    }

    @Test func previewListsWhatIsDueInOrder() throws {
        let s = try Sandbox()
        let id = try setUp(s)[0]
        var r = s.run(["preview", "--until", "2d", "-o", "json"])
        #expect(r.code == 0, "\(r)")
        let lines = try jsonLines(r.out)
        #expect(lines.map { $0["kind"] as? String } == ["at_risk", "freeze_used", "at_risk", "streak_broken"])
        #expect(
            lines.map { $0["due"] as? String } == [
                "2026-11-21T19:00:00Z", "2026-11-21T23:00:00Z", "2026-11-22T19:00:00Z", "2026-11-22T23:00:00Z",
            ])
        #expect(
            r.out.split(separator: "\n").first
                == #"{"kind":"at_risk","user":"\#(id)","streak":"daily","due":"2026-11-21T19:00:00Z","local_due":"2026-11-21T20:00:00+01:00","timezone":"Europe/Berlin","local_date":"2026-11-21","streak_length":7,"message":"Your 7-day streak is at risk! Check in today to keep it going. 1 freeze left.","key":"at_risk/\#(id)/daily/2026-11-21"}"#
        )
        r = s.run(["preview", "--user", id, "--kind", "streak_broken", "--until", "2026-11-23T00:00:00Z"])
        #expect(
            r.out
                == "2026-11-22T23:00:00Z streak_broken \(id)/daily 2026-11-22: Your 7-day streak ended on 2026-11-22. Check in today to start a new one.\n"
        )
        r = s.run(["preview", "--until", "1h"])
        #expect(r.code == 0 && r.out == "")
        #expect(r.err == "preview: nothing due after 2026-11-21T11:00:00Z until 2026-11-21T12:00:00Z\n")
        r = s.run(["preview", "--kind", "reminder"])
        #expect(r.code == 64)
        #expect(
            r.err
                == error(
                    "--kind: \"reminder\" is not a kind; use one of at_risk, freeze_used, streak_broken, freeze_refilled, badge_unlocked, level_up, streak_repaired"
                ))
        r = s.run(["preview", "--until", "tomorrow"])
        #expect(r.code == 64)
        #expect(
            r.err
                == error(
                    "--until: \"tomorrow\" is not a duration or an instant; use a whole number and a unit m, h, d or w, such as 90m, 24h or 2d, or RFC 3339 such as 2026-11-22T20:00:00Z"
                ))
        // What tick has recorded, preview leaves out.
        s.now = "2026-11-21T19:00:00Z"
        #expect(s.run(["tick"]).code == 0)
        s.now = "2026-11-21T18:00:00Z"
        r = s.run(["preview", "--until", "2h", "-o", "json"])
        #expect(r.out == "")
    }

    @Test func aFailingHookLeavesTheDeliveryPendingThenRetriesIt() throws {
        let s = try Sandbox()
        let id = try setUp(s)[0]
        let flag = s.dir.appendingPathComponent("ok").path
        let runs = s.dir.appendingPathComponent("runs").path
        let config = try hookConfig(
            s, ["/bin/sh", "-c", "echo \"$STREAKD_KEY\" >> '\(runs)'; test -e '\(flag)'"])
        s.now = "2026-11-21T19:00:00Z"
        var r = s.run(["tick", "--config", config])
        #expect(r.code == 75, "\(r)")
        #expect(r.err.hasSuffix(error("1 delivery left pending; the next run retries")))
        #expect(
            r.err.hasPrefix(
                "failed hook:log (exit 1) [at_risk/\(id)/daily/2026-11-21, attempt 1 of 5, next try from "
                    + "2026-11-21T19:01:00Z]\n"), "\(r)")
        s.now = "2026-11-21T19:00:30Z"
        r = s.run(["tick", "--config", config])
        #expect(r.code == 75)  // back-off: not yet
        _ = FileManager.default.createFile(atPath: flag, contents: nil)
        s.now = "2026-11-21T19:01:00Z"
        r = s.run(["tick", "--config", config])
        #expect(r.code == 0, "\(r)")
        #expect(r.err.contains("1 delivered, 0 failed, 0 dead, 1 retried; 0 pending"))
        let lines = try String(contentsOfFile: runs, encoding: .utf8).split(separator: "\n")
        #expect(lines == ["at_risk/\(id)/daily/2026-11-21", "at_risk/\(id)/daily/2026-11-21"])
        // The notification once, and the one failure.
        let entries = try Journal.entries(["STREAKD_USER=\(id)"], count: 2)
        #expect(
            entries.map { $0["MESSAGE_ID"] as? String } == [
                TestJournal.messageIDs["at_risk"], TestJournal.failedMessageID,
            ])
    }

    @Test func severalTicksAtOnceSendEveryReminderExactlyOnce() throws {
        let s = try Sandbox()
        let ids = try setUp(s, users: 40)
        let runs = s.dir.appendingPathComponent("runs").path
        let config = try hookConfig(s, ["/bin/sh", "-c", "echo \"$STREAKD_KEY\" >> '\(runs)'"])
        s.now = "2026-11-21T19:00:00Z"
        let children = try (0..<4).map { _ in try s.spawn(["tick", "--config", config, "-o", "json"]) }
        var sent = 0
        for r in children.map({ $0.wait() }) {
            #expect(r.code == 0, "\(r)")
            sent += r.out.split(separator: "\n").count
        }
        #expect(sent == 40)
        let keys = try String(contentsOfFile: runs, encoding: .utf8).split(separator: "\n").map(String.init)
        #expect(keys.sorted() == ids.map { "at_risk/\($0)/daily/2026-11-21" }.sorted())
        let entries = try Journal.entries(ids.map { "STREAKD_USER=\($0)" }, count: 40)
        #expect(entries.count == 40)
        #expect(Set(entries.compactMap { $0["STREAKD_KEY"] as? String }).count == 40)
    }

    /// A run killed after the ledger is written and before the sinks are called: the next run
    /// delivers what was left, and nothing twice. The journal pacer (one entry per hour) holds the
    /// first run's journal lane after one entry; the hook's lane goes on without it (sinks are
    /// independent), so the kill may find it anywhere.
    @Test func aRunKilledBetweenLedgerAndSinkIsRepairedWithoutADuplicate() throws {
        let s = try Sandbox()
        let ids = try setUp(s, users: 3)
        let runs = s.dir.appendingPathComponent("runs").path
        let hook = ["/bin/sh", "-c", "echo \"$STREAKD_KEY\" >> '\(runs)'"]
        let slow = try hookConfig(s, hook, extra: "[journal]\nburst = 1\ninterval_seconds = 3600\n")
        s.now = "2026-11-21T19:00:00Z"
        let child = try s.spawn(["tick", "--config", slow])
        _ = try Journal.entries(ids.map { "STREAKD_USER=\($0)" }, count: 1)
        Thread.sleep(forTimeInterval: 0.5)
        kill(child.process.processIdentifier, SIGKILL)
        _ = child.wait()
        let hooked = try String(contentsOfFile: runs, encoding: .utf8).split(separator: "\n").count
        #expect((1...3).contains(hooked))
        let left = 2 + 3 - hooked
        let normal = try s.file(
            "normal.toml",
            "badges = []\n\n[[hooks]]\nname = \"log\"\ncommand = [\"/bin/sh\", \"-c\", \"echo \\\"$STREAKD_KEY\\\" >> '\(runs)'\"]\n"
        )
        let r = s.run(["tick", "--config", normal])
        #expect(r.code == 0, "\(r)")
        #expect(r.err.contains("0 sent, 0 expired; \(left) delivered, 0 failed, 0 dead, \(left) retried; 0 pending"))
        let keys = try String(contentsOfFile: runs, encoding: .utf8).split(separator: "\n").map(String.init)
        #expect(keys.sorted() == ids.map { "at_risk/\($0)/daily/2026-11-21" }.sorted())
        let entries = try Journal.entries(ids.map { "STREAKD_USER=\($0)" }, count: 3)
        #expect(entries.compactMap { $0["STREAKD_KEY"] as? String }.sorted() == keys.sorted())
    }

    /// What `preview` announced, `tick` sends and `log` shows, with the same keys; a hook that
    /// fails five times shows up in `log` as dead.
    @Test func previewTickAndLogAgree() throws {
        let s = try Sandbox()
        let id = try setUp(s)[0]
        let config = try hookConfig(s, ["/bin/false"])
        let preview = s.run(["preview", "--until", "8h", "-o", "json"])
        #expect(preview.out.split(separator: "\n").count == 1)
        for (i, t) in ["19:00:00", "19:01:00", "19:06:00", "19:36:00", "21:36:00"].enumerated() {
            s.now = "2026-11-21T\(t)Z"
            let r = s.run(["tick", "--config", config])
            #expect(r.code == (i < 4 ? 75 : 0), "\(r)")
        }
        _ = try Journal.entries(["STREAKD_USER=\(id)"], count: 6)
        let log = s.run(["log", "--user", id, "-o", "json"])
        #expect(log.code == 0, "\(log)")
        let lines = try jsonLines(log.out)
        #expect(lines.count == 6)  // the notification, four failures, then the delivery given up
        let announced = try jsonObject(preview.out)
        for key in [
            "kind", "user", "streak", "due", "local_due", "timezone", "local_date", "streak_length", "message", "key",
        ] {
            #expect("\(lines[0][key] ?? "-")" == "\(announced[key] ?? "+")", "\(key)")
        }
        for (i, line) in lines.dropFirst().enumerated() {
            #expect(line["delivery"] as? String == (i < 4 ? "failed" : "dead"))
            #expect(line["sink"] as? String == "hook:log")
            #expect(line["attempts"] as? Int == i + 1)
            #expect(line["error"] as? String == "exit 1")
        }
        #expect(lines[1]["retry"] as? String == "2026-11-21T19:01:00Z")
        #expect(try jsonLines(s.run(["log", "--user", id, "-o", "json", "--failed"]).out).count == 5)
        #expect(try jsonLines(s.run(["log", "--user", id, "-o", "json", "--dead"]).out).count == 1)
        let short = s.run(["log", "--user", id, "-n", "1"])
        #expect(
            short.out.hasSuffix(
                "DEAD hook:log at_risk \(id)/daily 2026-11-21 after 5 attempts: exit 1\n"), "\(short)")
    }

    @Test func noSessionBusIsAWarningNotAFailure() throws {
        let s = try Sandbox()
        let id = try setUp(s)[0]
        let config = try s.file("streakd.toml", "badges = []\n\n[desktop]\nusers = [\"\(id)\"]\n")
        s.now = "2026-11-21T19:00:00Z"
        let missing = s.dir.appendingPathComponent("no-bus").path
        let r = s.run(["tick", "--config", config], env: ["DBUS_SESSION_BUS_ADDRESS": "unix:path=" + missing])
        #expect(r.code == 0, "\(r)")
        #expect(r.out.hasPrefix("sent 2026-11-21T19:00:00Z at_risk \(id)/daily"))
        #expect(
            r.err.hasPrefix(
                "streakd: warning: desktop: no session bus: cannot connect to unix:path=\(missing): No such file or directory; its notifications in this run are recorded expired, unsent\n"
            ), "\(r)")
        #expect(r.err.contains("1 sent, 0 expired; 1 delivered, 0 failed, 0 dead, 0 retried; 0 pending"))
        #expect(try Journal.entries(["STREAKD_USER=\(id)"], count: 1).count == 1)
    }

    @Test func refillAddsAFreezeAndSaysSo() throws {
        let s = try Sandbox()
        let id = try setUp(s)[0]
        s.now = "2026-12-21T12:00:00Z"
        var r = s.run(["refill", "--dry-run"])
        #expect(r.code == 0)
        #expect(r.out == "would refill \(id)/daily: freezes 0 → 1, next refill from 2027-01-20T12:00:00Z\n")
        #expect(r.err == "refill at 2026-12-21T12:00:00Z (dry run): 1 refilled, 0 at the maximum, 0 not due\n")
        r = s.run(["refill"])
        #expect(r.code == 0 && r.out == "refilled \(id)/daily: freezes 0 → 1, next refill from 2027-01-20T12:00:00Z\n")
        r = s.run(["refill", "-o", "json"])
        #expect(r.out == "" && r.err == "refill at 2026-12-21T12:00:00Z: 0 refilled, 0 at the maximum, 1 not due\n")
        #expect(try s.statusObject(id)["freezes"] as? Int == 1)
        let entries = try Journal.entries(["STREAKD_USER=\(id)", "STREAKD_KIND=freeze_refilled"], count: 1)
        #expect(entries.first?["MESSAGE"] as? String == "You have a new freeze for your streak: 1 freeze left.")
    }
}
