import Foundation
import StreakTestKit
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// `streakd log` against a real journald. Entries of earlier runs (and of other tests) stay in the
/// journal, so every test writes for users of its own and filters on them.
@Suite struct LogTests {
    static func user(_ name: String) -> String { "log-\(name)-\(UUID().uuidString.lowercased().prefix(8))" }

    /// The wall clock, to the second (journald stamps entries with it).
    static var wallClock: Date { Date(timeIntervalSince1970: Date().timeIntervalSince1970.rounded(.down)) }

    /// RFC 3339: `…Z`, or with the offset (seconds east of UTC).
    static func text(_ date: Date, offset: Int = 0) -> String {
        let f = ISO8601DateFormatter()
        f.formatOptions = [.withInternetDateTime]
        f.timeZone = TimeZone(secondsFromGMT: offset)!
        return f.string(from: date)
    }

    /// Sleeps into the next second of the wall clock; answers it.
    static func nextSecond() -> Date {
        let next = wallClock.addingTimeInterval(1)
        while wallClock < next { usleep(20_000) }
        return next
    }

    /// Writes entries, then waits until `log --user` shows all `total` entries of the user.
    static func write(_ entries: [[String]], user: String, total: Int, in s: Sandbox) throws {
        for fields in entries { #expect(Journal.send(fields)) }
        let deadline = ContinuousClock.now + .seconds(20)
        while try jsonLines(s.run(["log", "--user", user, "-o", "json"]).out).count < total {
            try #require(ContinuousClock.now < deadline, "\(user)'s entries never became readable")
            usleep(100_000)
        }
    }

    /// The `logged` values of JSON lines, checked to lie in the window.
    static func logged(_ out: String, from: Date, to: Date) throws -> [String] {
        let values = try jsonLines(out).map { try #require($0["logged"] as? String) }
        for value in values {
            #expect(value >= text(from) && value <= text(to), "logged \(value) outside \(from)...\(to)")
        }
        return values
    }

    @Test func jsonLinesCarryThePreviewKeysThenLogged() throws {
        try Journal.ensureRunning()
        let s = try Sandbox()
        let u = Self.user("json")
        let before = Self.wallClock
        try Self.write([TestJournal.notification("at_risk", user: u)], user: u, total: 1, in: s)
        let r = s.run(["log", "--user", u, "-o", "json"])
        #expect(r.code == 0 && r.err.isEmpty, "\(r)")
        let logged = try Self.logged(r.out, from: before, to: Self.wallClock)
        try #require(logged.count == 1)
        #expect(
            r.out
                == #"{"kind":"at_risk","user":"\#(u)","streak":"daily","due":"2026-11-21T19:00:00Z","local_due":"2026-11-21T20:00:00+01:00","timezone":"Europe/Berlin","local_date":"2026-11-21","streak_length":7,"message":"Your 7-day streak is at risk! Check in today to keep it going.","key":"at_risk/\#(u)/daily/2026-11-21","logged":"\#(logged[0])"}"#
                + "\n")
        #expect(logged[0].hasSuffix("Z") && logged[0].count == 20)
    }

    @Test func shortLinesShowNotificationsAndDeadDeliveries() throws {
        try Journal.ensureRunning()
        let s = try Sandbox()
        let u = Self.user("short")
        try Self.write(
            [
                TestJournal.notification(
                    "freeze_used", user: u, streak: "reading", date: "2026-11-20",
                    message: "A freeze covered it.\nNo more left."),
                TestJournal.dead("at_risk", user: u, sink: "hook:notify", attempts: 5, error: "exit status 1"),
            ], user: u, total: 2, in: s)
        let json = s.run(["log", "--user", u, "-o", "json"])
        let logged = try Self.logged(json.out, from: .distantPast, to: .distantFuture)
        let r = s.run(["log", "--user", u])
        #expect(r.code == 0 && r.err.isEmpty, "\(r)")
        #expect(
            r.out == """
                \(logged[0]) freeze_used \(u)/reading 2026-11-20: A freeze covered it. No more left.
                \(logged[1]) DEAD hook:notify at_risk \(u)/daily 2026-11-21 after 5 attempts: exit status 1

                """)
        let dead = try jsonLines(json.out)[1]
        #expect(dead["delivery"] as? String == "dead")
        #expect(dead["sink"] as? String == "hook:notify")
        #expect(dead["attempts"] as? Int == 5)
        #expect(dead["error"] as? String == "exit status 1")
        #expect(
            dead["message"] as? String
                == "hook:notify gave up on at_risk/\(u)/daily/2026-11-21 after 5 attempts: exit status 1")
        #expect(dead["key"] as? String == "at_risk/\(u)/daily/2026-11-21")
        #expect(
            json.out.contains(
                #""logged":"\#(logged[1])","delivery":"dead","sink":"hook:notify","attempts":5,"error":"exit status 1"}"#
            ))
    }

    @Test func nTakesTheLastEntriesAndKindFilters() throws {
        try Journal.ensureRunning()
        let s = try Sandbox()
        let u = Self.user("n")
        let kinds = ["at_risk", "freeze_used", "streak_broken", "freeze_refilled", "at_risk"]
        try Self.write(
            kinds.enumerated().map { TestJournal.notification($0.element, user: u, streak: "s\($0.offset)") },
            user: u, total: 5, in: s)
        func streaks(_ args: [String]) throws -> [String] {
            let r = s.run(["log", "--user", u, "-o", "json"] + args)
            #expect(r.code == 0 && r.err.isEmpty, "\(args): \(r)")
            return try jsonLines(r.out).map { try #require($0["streak"] as? String) }
        }
        #expect(try streaks([]) == ["s0", "s1", "s2", "s3", "s4"])
        #expect(try streaks(["-n", "2"]) == ["s3", "s4"])
        #expect(try streaks(["--lines=1"]) == ["s4"])
        #expect(try streaks(["-n", "0"]) == [])
        #expect(try streaks(["-n", "all"]) == ["s0", "s1", "s2", "s3", "s4"])
        #expect(try streaks(["-n", "99"]) == ["s0", "s1", "s2", "s3", "s4"])
        #expect(try streaks(["--kind", "at_risk"]) == ["s0", "s4"])
        #expect(try streaks(["--kind", "at_risk", "-n", "1"]) == ["s4"])
        #expect(try streaks(["--kind", "streak_broken"]) == ["s2"])
        #expect(try streaks(["--user", Self.user("nobody")]) == [])
    }

    @Test func badOptionsAreUsageErrors() throws {
        let s = try Sandbox()
        let cases: [([String], String)] = [
            (
                ["--kind", "at-risk"],
                #"--kind: "at-risk" is not a kind; use one of at_risk, freeze_used, streak_broken, freeze_refilled"#
            ),
            (["-n", "-3"], #"-n: "-3" is not a number of entries; use 0 or more, or all"#),
            (["-n", "ten"], #"-n: "ten" is not a number of entries; use 0 or more, or all"#),
            (
                ["--user", "bad id"],
                #"--user: "bad id" is not a user id; use 1 to 128 characters: a letter or digit, then letters, digits, '.', '_', '@' or '-'"#
            ),
            (
                ["--since", "2h"],
                #"--since: "2h" is not a time; use an RFC 3339 instant such as 2026-11-21T19:00:00Z, a date YYYY-MM-DD (its midnight UTC), now, today, yesterday or tomorrow (midnights UTC), or a time relative to now such as -90m, 2h ago or +1d (units m, h, d, w)"#
            ),
            (
                ["--since", "today", "--until", "yesterday"],
                "--since 2026-11-21T00:00:00Z is after --until 2026-11-20T00:00:00Z; give --since an earlier time"
            ),
            (["-f", "--until", "now"], "-f and --until cannot be combined: a followed log has no end"),
        ]
        for (args, message) in cases {
            let r = s.run(["log"] + args)
            #expect(r.code == 64, "\(args): \(r)")
            #expect(r.out == "")
            #expect(r.err == error(message), "\(args)")
        }
    }

    @Test func sinceAndUntilTakeAbsoluteAndRelativeTimes() throws {
        try Journal.ensureRunning()
        let s = try Sandbox()
        let u = Self.user("window")
        try Self.write(
            ["a1", "a2"].map { TestJournal.notification("at_risk", user: u, streak: $0) }, user: u, total: 2, in: s)
        let split = Self.nextSecond()
        try Self.write(
            ["b1", "b2"].map { TestJournal.notification("at_risk", user: u, streak: $0) }, user: u, total: 4, in: s)
        func streaks(_ args: [String], now: Date? = nil) throws -> [String] {
            let env = now.map { ["STREAKD_NOW": Self.text($0)] } ?? [:]
            let r = s.run(["log", "--user", u, "-o", "json"] + args, env: env)
            #expect(r.code == 0 && r.err.isEmpty, "\(args): \(r)")
            return try jsonLines(r.out).map { try #require($0["streak"] as? String) }
        }
        let justBefore = split.addingTimeInterval(-1)
        #expect(try streaks(["--since", Self.text(split)]) == ["b1", "b2"])
        #expect(try streaks(["--until", Self.text(justBefore)]) == ["a1", "a2"])
        #expect(try streaks(["--until", Self.text(justBefore), "-n", "1"]) == ["a2"])
        #expect(Self.text(split, offset: 3600).hasSuffix("+01:00"))
        #expect(try streaks(["--since", Self.text(split, offset: 3600)]) == ["b1", "b2"])
        #expect(try streaks(["--until", Self.text(justBefore, offset: -18000)]) == ["a1", "a2"])
        // Relative to --now / STREAKD_NOW.
        #expect(try streaks(["--since", "-2h"], now: split.addingTimeInterval(7200)) == ["b1", "b2"])
        #expect(try streaks(["--since", "120m ago"], now: split.addingTimeInterval(7200)) == ["b1", "b2"])
        #expect(try streaks(["--until", "-1d"], now: justBefore.addingTimeInterval(86400)) == ["a1", "a2"])
        #expect(try streaks(["--until", "1w ago"], now: justBefore.addingTimeInterval(604_800)) == ["a1", "a2"])
        #expect(try streaks(["--since", "yesterday", "--until", "tomorrow"], now: Date()) == ["a1", "a2", "b1", "b2"])
        #expect(try streaks(["--since", "tomorrow"], now: Date()) == [])
        #expect(try streaks(["--since", "now"], now: split.addingTimeInterval(3600)) == [])
    }

    @Test func followPrintsNewEntriesAndStopsOnSIGINT() throws {
        try Journal.ensureRunning()
        let s = try Sandbox()
        let u = Self.user("follow")
        try Self.write(
            (0..<12).map { TestJournal.notification("at_risk", user: u, streak: "old\($0)") }, user: u, total: 12, in: s
        )
        let follower = try s.spawn(["log", "-f", "--user", u, "-o", "json"])
        let streaksSoFar = { () throws -> [String] in
            let text = (try? String(contentsOf: follower.outURL, encoding: .utf8)) ?? ""
            return try jsonLines(text).map { try #require($0["streak"] as? String) }
        }
        try Self.waitFor(follower) { try streaksSoFar().count >= 10 }
        #expect(try streaksSoFar() == (2..<12).map { "old\($0)" })  // the last 10, as journalctl -f
        #expect(Journal.send(TestJournal.notification("streak_broken", user: u, streak: "new1")))
        #expect(Journal.send(TestJournal.notification("at_risk", user: u, streak: "new2")))
        try Self.waitFor(follower) { try streaksSoFar().count >= 12 }
        #expect(try streaksSoFar().suffix(2) == ["new1", "new2"])

        let stopped = ContinuousClock.now
        follower.process.interrupt()
        try Self.waitFor(follower, timeout: .seconds(5)) { !follower.process.isRunning }
        #expect(ContinuousClock.now - stopped < .seconds(1))
        let r = follower.wait()
        #expect(r.code == 0 && r.err.isEmpty, "\(r)")
        #expect(follower.process.terminationReason == .exit)
    }

    @Test func followWithNZeroShowsOnlyNewEntriesAndStopsOnSIGTERM() throws {
        try Journal.ensureRunning()
        let s = try Sandbox()
        let u = Self.user("term")
        try Self.write([TestJournal.notification("freeze_refilled", user: u)], user: u, total: 1, in: s)
        let follower = try s.spawn(["log", "--follow", "-n", "0", "--user", u])
        let output = { (try? String(contentsOf: follower.outURL, encoding: .utf8)) ?? "" }
        // Whether the follower has reached the tail yet cannot be seen: write until one shows up.
        var sent = 0
        try Self.waitFor(follower) {
            if !output().isEmpty { return true }
            sent += 1
            let dead = TestJournal.dead("streak_broken", user: u, sink: "hook:x", attempts: sent, error: "timed out")
            #expect(Journal.send(dead))
            usleep(200_000)
            return false
        }
        follower.process.terminate()
        let r = follower.wait()
        #expect(r.code == 0 && r.err.isEmpty, "\(r)")
        #expect(follower.process.terminationReason == .exit)
        #expect(!r.out.contains("freeze_refilled"), "-n 0 shows no earlier entry: \(r.out)")
        let lines = r.out.split(separator: "\n")
        #expect(!lines.isEmpty && lines.count <= sent)
        func tail(_ n: Int) -> String {
            " DEAD hook:x streak_broken \(u)/daily 2026-11-21 after \(n) attempt\(n == 1 ? "" : "s"): timed out"
        }
        let numbers = lines.map { line in (1...max(1, sent)).first { line.hasSuffix(tail($0)) } }
        let first = try #require(numbers.first ?? nil, "\(r.out)")
        #expect(numbers == Array(first..<(first + lines.count)), "consecutive new entries: \(r.out)")
    }

    @Test(.enabled(if: getuid() == 0, "needs root to drop to nobody"))
    func aJournalThatCannotBeReadIsUnavailable() throws {
        try Journal.ensureRunning()
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/setpriv")
        process.arguments = ["--reuid=65534", "--regid=65534", "--clear-groups", streakdBinary, "log"]
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

    /// Polls `condition` every 50 ms until it holds or `timeout` passes (then fails the test).
    static func waitFor(_ spawned: Spawned, timeout: Duration = .seconds(20), _ condition: () throws -> Bool) throws {
        let deadline = ContinuousClock.now + timeout
        while try !condition() {
            if ContinuousClock.now >= deadline {
                kill(spawned.process.processIdentifier, SIGKILL)
                Issue.record("timed out; so far: \(spawned.wait())")
                throw CancellationError()
            }
            usleep(50_000)
        }
    }
}
