import Foundation
import StreakTestKit
import Testing

/// What an operator meets: status without an ID, why there is no reminder, --version,
/// STREAKD_STORE, and config check's every problem.
@Suite(.fastTier) struct OperatorTests {
    /// ana (Berlin) and bo (Shanghai, zh-Hans, 21:00) with seven days each, cy without reminders;
    /// a tick at bo's reminder whose hook fails.
    static func fleet() throws -> Sandbox {
        let s = try Sandbox()
        s.addUser("ana")
        s.addUser("bo", tz: "Asia/Shanghai", ["--lang", "zh-Hans", "--remind-at", "21:00"])
        s.addUser("cy", tz: "UTC", ["--no-remind"])
        try s.importLines(
            (14...20).flatMap {
                [
                    checkinLine("2026-11-\($0)T18:00:00+01:00", user: "ana"),
                    checkinLine("2026-11-\($0)T08:00:00+08:00", user: "bo"),
                ]
            })
        return s
    }

    @Test func statusWithoutAnIDIsAnOverview() throws {
        try Journal.ensureRunning()
        let s = try Self.fleet()
        let fresh = s.run(["status"])
        #expect(fresh.code == 0 && fresh.err.isEmpty, "\(fresh)")
        #expect(fresh.out.contains("    Last tick: never (streakd-tick.timer runs it every quarter hour)\n"))

        let hook = try s.file(
            "hook.toml",
            // No badges: the fleet's 7-day streaks would unlock some, which the badges' tests count.
            "badges = []\n\n[[hooks]]\nname = \"chat\"\ncommand = [\"/bin/sh\", \"-c\", \"echo 503 Service Unavailable >&2; exit 22\"]\n"
        )
        s.now = "2026-11-21T13:00:00Z"
        let tick = s.run(["tick", "--config", hook])
        #expect(tick.code == 75)
        #expect(
            tick.err.hasPrefix(
                "failed hook:chat (exit 22): 503 Service Unavailable [at_risk/bo/daily/2026-11-21, attempt 1 of 5, "
                    + "next try from 2026-11-21T13:01:00Z]\n"), "\(tick)")
        s.now = "2026-11-21T13:05:00Z"
        let id = try #require(try jsonObject(s.run(["status", "-o", "json"]).out)["store_id"] as? String)
        let r = s.run(["status"])
        #expect(r.code == 0 && r.err.isEmpty, "\(r)")
        #expect(
            r.out == """
                ● streakd store \(s.store)
                     Identity: \(id)
                        Users: 3 (2 with reminders), 2 streaks
                      At risk: 2 in the next 24 h:
                               ana/daily, 7 days, reminder at 2026-11-21T20:00:00+01:00 (2026-11-21T19:00:00Z)
                               bo/daily, 7 days, reminder at 2026-11-22T21:00:00+08:00 (2026-11-22T13:00:00Z)
                   Deliveries: 1 pending, 0 dead
                               pending hook:chat at_risk/bo/daily/2026-11-21, 1 attempt: exit 22: 503 Service Unavailable
                    Last tick: 2026-11-21T13:00:00Z (5 min ago): 1 sent, 0 expired, 1 delivered, 1 failed, 0 dead, 0 retried, 1 pending, 2 streaks
                  Last refill: never (streakd-refill.timer runs it daily)

                """)
        let json = try jsonObject(s.run(["status", "-o", "json"]).out)
        #expect(json["users"] as? Int == 3 && json["users_reminded"] as? Int == 2 && json["streaks"] as? Int == 2)
        #expect(
            (json["at_risk"] as? [[String: Any]])?.map { $0["key"] as? String } == [
                "at_risk/ana/daily/2026-11-21", "at_risk/bo/daily/2026-11-22",
            ])
        #expect(
            (json["pending_deliveries"] as? [[String: Any]])?.first?["error"] as? String
                == "exit 22: 503 Service Unavailable")
        #expect((json["last_tick"] as? [String: Any])?["failed"] as? Int == 1)
        #expect(json["last_refill"] is NSNull)
        // A refill is noted too (75: the hook's delivery is still pending).
        s.now = "2026-12-21T12:00:00Z"
        #expect(s.run(["refill"]).code == 75)
        #expect(
            s.run(["status"]).out.contains(
                "  Last refill: 2026-12-21T12:00:00Z (0 s ago): 2 refilled, 0 at the maximum, 0 not due, 1 pending\n"))
        #expect(s.run(["status", "--streak", "daily"]).code == 64)
    }

    @Test func statusSaysWhyThereIsNoReminder() throws {
        let s = try Self.fleet()
        try s.importLines([checkinLine("2026-11-13T18:00:00+01:00", user: "ana")], name: "more.jsonl")
        func reminder(_ user: String, _ extra: [String] = []) -> String {
            let r = s.run(["status", user] + extra)
            return r.out.split(separator: "\n").first { $0.hasPrefix("  next reminder") }.map(String.init) ?? "\(r)"
        }
        #expect(reminder("ana") == "  next reminder    none: 8 days; reminders at 5, 7, 14 days")
        #expect(
            reminder("cy") == "  next reminder    off for this user (streakd user set cy --remind turns them on)")
        #expect(reminder("cy", ["--streak", "reading"]).hasPrefix("  next reminder    off"))
        s.addUser("di")
        #expect(reminder("di") == "  next reminder    none: no streak to keep yet (reminders at 5, 7, 14 days)")
    }

    @Test func versionNamesTheBuild() {
        let r = streakd(["--version"])
        #expect(r.code == 0 && r.err.isEmpty)
        // `swift build` runs without the Makefile's STREAKD_COMMIT; `make` passes git describe.
        #expect(
            r.out == "streakd 0.1.0 (commit unknown: built without make)\n" || r.out.hasPrefix("streakd 0.1.0 (git "))
    }

    /// STREAKD_STORE stands for --store in every command, between the flag and the default.
    @Test func streakdStoreNamesTheStore() throws {
        let s = try Sandbox()
        let env = ["STREAKD_STORE": s.store]
        #expect(s.runBare(["user", "add", "u1", "--tz", "UTC"], env: env).code == 0)
        #expect(s.runBare(["user", "list", "-o", "json"], env: env).out.contains(#""user":"u1""#))
        if !TestStore.postgres { #expect(FileManager.default.fileExists(atPath: s.store)) }
        let other = s.dir.appendingPathComponent("other.sqlite").path
        #expect(s.runBare(["user", "list", "--store", other], env: env).out == "")
        // Empty, it is as if unset: the default path.
        #expect(s.runBare(["user", "add", "u2", "--tz", "UTC"], env: ["STREAKD_STORE": ""]).code == 0)
        #expect(FileManager.default.fileExists(atPath: s.dir.path + "/state/streakd/streakd.sqlite"))
    }

    @Test func configCheckReportsEveryProblemAndHooksThatCannotRun() throws {
        let s = try Sandbox()
        let path = try s.file(
            "c.toml",
            """
            [reminders]
            days = [5, "seven"]
            [[hooks]]
            name = "chat"
            command = ["/usr/local/bin/no-such-notifier"]
            [[hooks]]
            name = "dir"
            command = ["/tmp"]
            [[hooks]]
            name = "ok"
            command = ["/bin/true"]
            [messages.zh-Hans]
            at_risk = "连续 {length} 天{"

            """)
        let r = s.run(["config", "check", "--config", path])
        #expect(r.code == 78)
        #expect(r.out == "")
        #expect(
            r.err == """
                streakd: error: \(path):2: reminders.days: must be a list of whole numbers from 1 to 100000, such as [5, 7, 14]
                \(path):5: hooks[1].command: "/usr/local/bin/no-such-notifier" cannot be run: No such file or directory; give the path of an executable file
                \(path):8: hooks[2].command: "/tmp" cannot be run: Is a directory; give the path of an executable file
                \(path):13: messages.zh-Hans.at_risk: a '{' needs a placeholder name; use {length}, {freezes}, {done}, {goal}, {streak}, {date} (at character 14)
                4 problems in \(path)

                """)
        // With the file otherwise right, the hooks' programs alone (config check only: a tick
        // retries a hook whose program is missing).
        let hooks = try s.file(
            "h.toml",
            """
            [[hooks]]
            name = "chat"
            command = ["/usr/local/bin/no-such-notifier"]
            [[hooks]]
            name = "dir"
            command = ["/tmp"]
            [[hooks]]
            name = "ok"
            command = ["/bin/true"]

            """)
        let h = s.run(["config", "check", "--config", hooks])
        #expect(h.code == 78)
        #expect(
            h.err == """
                streakd: error: \(hooks):3: hooks[1].command: "/usr/local/bin/no-such-notifier" cannot be run: No such file or directory; give the path of an executable file
                \(hooks):6: hooks[2].command: "/tmp" cannot be run: Is a directory; give the path of an executable file
                2 problems in \(hooks)

                """)
        s.addUser("u1")
        #expect(s.run(["tick", "--config", hooks, "--dry-run"]).code == 0)

        // A file that does not load (a value out of range, initial over max) still has its
        // programs, files and desktop users named, with every other problem, in one run.
        let broken = try s.file(
            "b.toml",
            """
            [desktop]
            users = ["ghost"]
            [[hooks]]
            name = "chat"
            command = ["/usr/local/bin/no-such-notifier"]
            [[webhooks]]
            name = "w"
            url = "http://127.0.0.1:9/x"
            secret_file = "\(s.dir.path)/no-such.secret"
            [freeze]
            initial = 5
            min_streak = 0

            """)
        let b = s.run(["config", "check", "--config", broken])
        #expect(b.code == 78)
        #expect(
            b.err == """
                streakd: error: \(broken):2: desktop.users: "ghost" is not a user of the store; add it (streakd user add ID --tz ZONE) or take it out of the list
                \(broken):5: hooks[1].command: "/usr/local/bin/no-such-notifier" cannot be run: No such file or directory; give the path of an executable file
                \(broken):9: webhooks[1].secret_file: cannot be used: \(s.dir.path)/no-such.secret: no such file or directory; it must hold a secret of 16 to 1024 bytes: a whsec_ secret (Standard Webhooks: whsec_ and base64) or any text
                \(broken):11: freeze.initial: 5 is more than max (1); use a number from 0 to 1
                \(broken):12: freeze.min_streak: 0 is out of range; use a whole number from 1 to 10000
                5 problems in \(broken)

                """)
    }
}
