import Foundation
import StreakTestKit
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// `streakd log`'s refusals and the journals it reads from elsewhere (LogTests' suite).
extension LogTests {
    @Test func badOptionsAreUsageErrors() throws {
        let (s, _) = try Self.storeSandbox()
        let cases: [([String], String)] = [
            (
                ["--kind", "at-risk"],
                #"--kind: "at-risk" is not a kind; use one of at_risk, freeze_used, streak_broken, freeze_refilled, badge_unlocked, level_up, streak_repaired"#
            ),
            (["-n", "-3"], #"-n: "-3" is not a number of entries; use N (the last N), +N (the first N), or all"#),
            (["-n", "ten"], #"-n: "ten" is not a number of entries; use N (the last N), +N (the first N), or all"#),
            (
                ["--user", "bad id"],
                #"--user: "bad id" is not a user id; use 1 to 128 characters: a letter or digit, then letters, digits, '.', '_', '@' or '-'"#
            ),
            (
                ["--since", "2h"],
                #"--since: "2h" is a length of time, not a time; write "2h ago" or -2h for the past, +2h for the future"#
            ),
            (
                ["--since", "soon"],
                #"--since: "soon" is not a time; use a time as journalctl takes it: "2026-11-23 20:00[:00]", "2026-11-23" (its midnight), "21:00" (today), now, today, yesterday, tomorrow, "yesterday 21:00", "2 hours ago", -2h, +1d, "@1795287600", or RFC 3339 such as 2026-11-23T19:00:00Z (a date or time may end in UTC, an offset such as +01:00, or a zone name)"#
            ),
            (
                ["--since", "today", "--until", "yesterday", "--utc"],
                "--since 2026-11-21T00:00:00Z is after --until 2026-11-20T00:00:00Z; give --since an earlier time"
            ),
            (["-f", "--until", "now"], "-f and --until cannot be combined: a followed log has no end"),
            (["-f", "-r"], "-f and -r cannot be combined: a followed log grows at its end"),
            (
                ["-D", "/tmp", "--file", "/tmp/x.journal"],
                "-D, --file and -m each choose the journals to read; give one of them"
            ),
            (
                ["--all-stores", "--store-id", String(repeating: "a", count: 32)],
                "--all-stores and --store-id cannot be combined; give one of them"
            ),
            (
                ["--store-id", "abc"],
                #"--store-id: "abc" is not a store's identity; use its 32 hex digits, as journal entries carry it in STREAKD_STORE (journalctl -F STREAKD_STORE lists them)"#
            ),
        ]
        for (args, message) in cases {
            let r = s.run(["log"] + args)
            #expect(r.code == 64, "\(args): \(r)")
            #expect(r.out == "")
            #expect(r.err == error(message), "\(args)")
        }
        // -o cat and verbose are log's alone.
        let status = s.run(["status", "-o", "cat"])
        #expect(status.code == 64)
        #expect(status.err.contains("The value 'cat' is invalid for '-o <short|json>'"), "\(status)")
    }

    @Test(.requires(.root))
    func aJournalThatCannotBeReadIsUnavailable() throws {
        try Journal.ensureRunning()
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/setpriv")
        process.arguments = ["--reuid=65534", "--regid=65534", "--clear-groups", streakdBinary, "log", "--all-stores"]
        process.environment = ["PATH": "/usr/bin:/bin", "HOME": "/nonexistent"]
        let r = try Spawned(process, stdin: nil).wait()
        #expect(r.code == 69, "\(r)")
        #expect(r.out == "")
        #expect(
            r.err
                == error(
                    "cannot open the local journal: no journal files could be read (is systemd-journald running, and may "
                        + "this user read its journal? members of the group systemd-journal may)"))
    }

    /// A store its reader may not reach (the service's, for an admin in the systemd-journal
    /// group) is not "missing": 69, naming the ways to read the log without it.
    @Test(.enabled(if: !TestStore.postgres, "a SQLite file's"), .requires(.root))
    func aStoreOutOfReachSaysHowToReadTheLogWithoutIt() throws {
        let (s, _) = try Self.storeSandbox()
        chmod(s.dir.path, 0o700)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/setpriv")
        process.arguments = [
            "--reuid=65534", "--regid=65534", "--clear-groups", streakdBinary, "log", "--store", s.store,
        ]
        process.environment = ["PATH": "/usr/bin:/bin", "HOME": "/nonexistent"]
        let r = try Spawned(process, stdin: nil).wait()
        #expect(r.code == 69, "\(r)")
        #expect(
            r.err
                == error(
                    "cannot read the store \(s.store): Permission denied; log shows one store's entries: name the "
                        + "store with --store, give its identity with --store-id (journalctl -F STREAKD_STORE lists "
                        + "those in the journal), or read every store's with --all-stores"))
    }

    /// A fleet's notifications in one place: journal files as systemd-journal-remote keeps them on
    /// a central host (hosts a and b, two stores), read with -D and --file, word for word.
    @Test func aJournalDirectoryFromElsewhereReadsWordForWord() throws {
        let s = try Sandbox()
        let fleet = "0123456789abcdef0123456789abcdef"
        let other = "fedcba9876543210fedcba9876543210"
        let base: UInt64 = 1_795_287_600_000_000  // 2026-11-21T19:00:00Z
        let dir = s.dir.appendingPathComponent("remote").path
        let file = try TestJournal.remoteJournal(
            [
                (base + 1_500_000, "host-a", TestJournal.notification("at_risk", user: "ana", store: fleet)),
                (
                    base + 2_000_000, "host-b",
                    TestJournal.notification(
                        "at_risk", user: "bo", streak: "workout", message: "你已连续打卡 7 天", store: fleet)
                ),
                (base + 3_000_000, "host-c", TestJournal.notification("at_risk", user: "ana", store: other)),
                (
                    base + 61_000_000, "host-a",
                    TestJournal.dead(
                        "at_risk", user: "ana", sink: "hook:chat", attempts: 5, error: "exit 22: 503", store: fleet)
                ),
            ], in: dir)
        let tokyo = ["TZ": "Asia/Tokyo"]
        let r = s.runBare(["log", "-D", dir, "--store-id", fleet], env: tokyo)
        #expect(r.code == 0 && r.err.isEmpty, "\(r)")
        #expect(
            r.out == """
                2026-11-22T04:00:01+09:00 host-a at_risk ana/daily 2026-11-21: Your 7-day streak is at risk! Check in today to keep it going.
                2026-11-22T04:00:02+09:00 host-b at_risk bo/workout 2026-11-21: 你已连续打卡 7 天
                2026-11-22T04:01:01+09:00 host-a DEAD hook:chat at_risk ana/daily 2026-11-21 after 5 attempts: exit 22: 503

                """)
        let files = s.runBare(["log", "--file", file, "--all-stores", "--utc", "--user", "ana", "-r", "-o", "json"])
        #expect(files.code == 0, "\(files)")
        #expect(
            try jsonLines(files.out).map { "\($0["logged"]!) \($0["host"]!) \($0["store"]!)" } == [
                "2026-11-21T19:01:01Z host-a \(fleet)", "2026-11-21T19:00:03Z host-c \(other)",
                "2026-11-21T19:00:01Z host-a \(fleet)",
            ])
        let window = s.runBare(
            ["log", "-D", dir, "--all-stores", "--since", "2026-11-22 04:00:02", "--until", "04:00:03"],
            env: tokyo.merging(["STREAKD_NOW": "2026-11-21T20:00:00Z"]) { $1 })
        #expect(window.out.split(separator: "\n").map { $0.split(separator: " ")[1] } == ["host-b", "host-c"])
        // Issue 31, item 13: a folder or file that is not there is 66 (was 69); one without journal files 69.
        let none = s.dir.appendingPathComponent("none").path
        let missing = s.runBare(["log", "-D", none, "--all-stores"])
        #expect(missing.code == 66 && missing.err == error("-D: no folder \(none)"), "\(missing)")
        let missingFile = s.runBare(["log", "--file", none + ".journal", "--all-stores"])
        #expect(missingFile.code == 66, "\(missingFile)")
        let empty = s.dir.appendingPathComponent("empty").path
        try FileManager.default.createDirectory(atPath: empty, withIntermediateDirectories: true)
        #expect(s.runBare(["log", "-D", empty, "--all-stores"]).code == 69)
    }
}
