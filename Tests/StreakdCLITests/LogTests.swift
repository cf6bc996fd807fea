import Foundation
import StreakTestKit
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// `streakd log` against a real journald. Entries of earlier runs (and of other tests) stay in the
/// journal, so every test writes for users of its own and filters on them, under the identity of
/// its own store.
@Suite(.fastTier) struct LogTests {
    static func user(_ name: String) -> String { "log-\(name)-\(UUID().uuidString.lowercased().prefix(8))" }

    /// A sandbox whose store exists (a user added), and the store's identity.
    static func storeSandbox() throws -> (Sandbox, String) {
        let s = try Sandbox()
        s.addUser("owner")
        return (s, try storeID(s))
    }

    /// The identity `status` without an ID shows.
    static func storeID(_ s: Sandbox) throws -> String {
        let r = s.run(["status", "-o", "json"])
        return try #require(try jsonObject(r.out)["store_id"] as? String, "\(r)")
    }

    /// The wall clock, to the second (journald stamps entries with it).
    static var wallClock: Date { Date(timeIntervalSince1970: Date().timeIntervalSince1970.rounded(.down)) }

    /// RFC 3339: `…Z`, or with the offset (seconds east of UTC).
    static func text(_ date: Date, offset: Int = 0) -> String {
        let f = ISO8601DateFormatter()
        f.formatOptions = [.withInternetDateTime]
        f.timeZone = TimeZone(secondsFromGMT: offset)!
        return f.string(from: date)
    }

    /// `date` in a zone, as `format` (DateFormatter's patterns).
    static func local(_ date: Date, _ zone: String, _ format: String) -> String {
        let f = DateFormatter()
        f.locale = Locale(identifier: "en_US_POSIX")
        f.timeZone = TimeZone(identifier: zone)!
        f.dateFormat = format
        return f.string(from: date)
    }

    /// Sleeps into the next second of the wall clock; answers it.
    static func nextSecond() -> Date {
        let next = wallClock.addingTimeInterval(1)
        while wallClock < next { usleep(20_000) }
        return next
    }

    /// This machine's name, as journald stamps it on entries (`_HOSTNAME`).
    static var hostname: String {
        var name = [CChar](repeating: 0, count: 256)
        gethostname(&name, name.count)
        return String(cString: name)
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

    /// The `logged` values of JSON lines.
    static func logged(_ out: String) throws -> [Date] {
        try jsonLines(out).map { line in
            let text = try #require(line["logged"] as? String)
            return try #require(ISO8601DateFormatter().date(from: text))
        }
    }

    @Test func jsonLinesCarryThePreviewKeysThenLoggedHostAndStore() throws {
        try Journal.ensureRunning()
        let (s, store) = try Self.storeSandbox()
        let u = Self.user("json")
        let before = Self.wallClock
        try Self.write([TestJournal.notification("at_risk", user: u, store: store)], user: u, total: 1, in: s)
        let r = s.run(["log", "--user", u, "-o", "json"])
        #expect(r.code == 0 && r.err.isEmpty, "\(r)")
        let logged = try Self.logged(r.out)
        try #require(logged.count == 1)
        #expect(logged[0] >= before && logged[0] <= Self.wallClock)
        #expect(
            r.out
                == #"{"kind":"at_risk","user":"\#(u)","streak":"daily","due":"2026-11-21T19:00:00Z","local_due":"2026-11-21T20:00:00+01:00","timezone":"Europe/Berlin","local_date":"2026-11-21","streak_length":7,"message":"Your 7-day streak is at risk! Check in today to keep it going.","key":"at_risk/\#(u)/daily/2026-11-21","logged":"\#(Self.text(logged[0]))","host":"\#(Self.hostname)","store":"\#(store)"}"#
                + "\n")
    }

    /// Every line form, word for word: local times by default (here Berlin's, by `TZ`), UTC with
    /// `--utc`; the host; a failed and a dead delivery; -o cat; -o verbose's streakd fields.
    @Test func shortCatAndVerboseLinesWordForWord() throws {
        try Journal.ensureRunning()
        let (s, store) = try Self.storeSandbox()
        let u = Self.user("short")
        try Self.write(
            [
                TestJournal.notification(
                    "freeze_used", user: u, streak: "reading", date: "2026-11-20",
                    message: "A freeze covered it.\nNo more left.", store: store),
                TestJournal.failed(
                    "at_risk", user: u, sink: "hook:notify", attempts: 2, error: "exit 3: 503 Service Unavailable",
                    retry: "2026-11-21T19:05:00Z", store: store),
                TestJournal.dead(
                    "at_risk", user: u, sink: "hook:notify", attempts: 5, error: "exit 3: 503 Service Unavailable",
                    store: store),
            ], user: u, total: 3, in: s)
        let logged = try Self.logged(s.run(["log", "--user", u, "-o", "json"]).out)
        let berlin = ["TZ": "Europe/Berlin"]
        let t = logged.map { Self.local($0, "Europe/Berlin", "yyyy-MM-dd'T'HH:mm:ssxxx") }
        let h = Self.hostname
        let short = s.run(["log", "--user", u], env: berlin)
        #expect(short.code == 0 && short.err.isEmpty, "\(short)")
        #expect(
            short.out == """
                \(t[0]) \(h) freeze_used \(u)/reading 2026-11-20: A freeze covered it. No more left.
                \(t[1]) \(h) FAILED hook:notify at_risk \(u)/daily 2026-11-21 (attempt 2, next try from 2026-11-21T20:05:00+01:00): exit 3: 503 Service Unavailable
                \(t[2]) \(h) DEAD hook:notify at_risk \(u)/daily 2026-11-21 after 5 attempts: exit 3: 503 Service Unavailable

                """)
        let utc = s.run(["log", "--user", u, "--utc", "-n", "1"], env: berlin)
        #expect(
            utc.out
                == "\(Self.text(logged[2])) \(h) DEAD hook:notify at_risk \(u)/daily 2026-11-21 after 5 attempts: exit 3: "
                + "503 Service Unavailable\n")
        let cat = s.run(["log", "--user", u, "-o", "cat"])
        #expect(
            cat.out == """
                A freeze covered it. No more left.
                hook:notify failed on at_risk/\(u)/daily/2026-11-21 (attempt 2), trying again from 2026-11-21T19:05:00Z: exit 3: 503 Service Unavailable
                hook:notify gave up on at_risk/\(u)/daily/2026-11-21 after 5 attempts: exit 3: 503 Service Unavailable

                """)
        let verbose = s.run(["log", "--user", u, "-o", "verbose", "-n", "1"], env: berlin)
        let lines = verbose.out.split(separator: "\n").map(String.init)
        let head = try #require(lines.first)
        let micro = Self.local(logged[2], "Europe/Berlin", "yyyy-MM-dd'T'HH:mm:ss")
        #expect(head.hasPrefix(micro + "."), "\(head)")
        #expect(head.contains("+01:00 [s="), "\(head)")
        #expect(
            lines.filter { $0.hasPrefix("    STREAKD_") || $0.hasPrefix("    MESSAGE") }.sorted() == [
                "    MESSAGE=hook:notify gave up on at_risk/\(u)/daily/2026-11-21 after 5 attempts: exit 3: 503 Service Unavailable",
                "    MESSAGE_ID=\(TestJournal.deadMessageID)", "    STREAKD_ATTEMPTS=5",
                "    STREAKD_DUE=2026-11-21T19:00:00Z", "    STREAKD_ERROR=exit 3: 503 Service Unavailable",
                "    STREAKD_KEY=at_risk/\(u)/daily/2026-11-21", "    STREAKD_KIND=at_risk",
                "    STREAKD_LOCAL_DATE=2026-11-21", "    STREAKD_LOCAL_DUE=2026-11-21T20:00:00+01:00",
                "    STREAKD_SINK=hook:notify", "    STREAKD_STORE=\(store)", "    STREAKD_STREAK=daily",
                "    STREAKD_STREAK_LENGTH=7", "    STREAKD_TIMEZONE=Europe/Berlin", "    STREAKD_USER=\(u)",
            ])
        #expect(lines.contains("    _HOSTNAME=\(h)"))
        // Nothing matched: journalctl's line, unless quiet; never in JSON.
        let nobody = Self.user("nobody")
        #expect(s.run(["log", "--user", nobody]).out == "-- No entries --\n")
        #expect(s.run(["log", "--user", nobody, "-q"]).out == "")
        #expect(s.run(["log", "--user", nobody, "-o", "json"]).out == "")
    }

    /// Two stores, one user id in both: each store's `log` shows its own entries; --all-stores,
    /// --store-id and STREAKD_STORE choose others.
    @Test func eachStoreSeesItsOwnEntries() throws {
        try Journal.ensureRunning()
        let (a, storeA) = try Self.storeSandbox()
        let (b, storeB) = try Self.storeSandbox()
        #expect(storeA != storeB && storeA.count == 32)
        let u = Self.user("stores")
        try Self.write(
            [
                TestJournal.notification("at_risk", user: u, streak: "in_a", store: storeA),
                TestJournal.notification("at_risk", user: u, streak: "in_b", store: storeB),
                TestJournal.notification("at_risk", user: u, streak: "older", store: nil),
            ], user: u, total: 1, in: a)
        func streaks(_ s: Sandbox, _ args: [String], env: [String: String] = [:], bare: Bool = false) throws
            -> [String]
        {
            let arguments = ["log", "--user", u, "-o", "json"] + args
            let r = bare ? s.runBare(arguments, env: env) : s.run(arguments, env: env)
            #expect(r.code == 0 && r.err.isEmpty, "\(args): \(r)")
            return try jsonLines(r.out).map { try #require($0["streak"] as? String) }
        }
        _ = try Journal.entries(["STREAKD_USER=\(u)"], count: 3)
        #expect(try streaks(a, []) == ["in_a"])
        #expect(try streaks(b, []) == ["in_b"])
        #expect(try streaks(a, ["--all-stores"]) == ["in_a", "in_b", "older"])
        #expect(try streaks(a, ["--store-id", storeB.uppercased()]) == ["in_b"])
        #expect(try streaks(a, [], env: ["STREAKD_STORE": b.store], bare: true) == ["in_b"])
        // --store wins over STREAKD_STORE.
        #expect(try streaks(a, ["--store", a.store], env: ["STREAKD_STORE": b.store], bare: true) == ["in_a"])

        // A store an older streakd made has no identity: its entries carry none either.
        let old = try Sandbox()
        old.addUser("owner")
        if TestStore.postgres {
            _ = try TestPostgres.psql(old.store, "DELETE FROM meta WHERE key = 'store_id'")
        } else {
            #expect(run(["/usr/bin/sqlite3", old.store, "DELETE FROM meta WHERE key = 'store_id'"]).code == 0)
        }
        #expect(try streaks(old, []) == ["older"])

        // log never creates a store: a missing one is 66, naming it and the ways out.
        let none = try Sandbox()
        let r = none.run(["log", "--user", u])
        #expect(r.code == 66)
        let hint =
            "log shows one store's entries: name the store with --store, give its identity with --store-id "
            + "(journalctl -F STREAKD_STORE lists those in the journal), or read every store's with --all-stores"
        if TestStore.postgres {
            // A database without streakd's tables: the same, with what was found there.
            #expect(r.err.hasPrefix("streakd: error: no store at \(none.store) yet") && r.err.hasSuffix(hint + "\n"))
        } else {
            #expect(r.err == error("no store at \(none.store); " + hint))
            #expect(!FileManager.default.fileExists(atPath: none.store))
        }
    }

    @Test func nTakesTheLastOrFirstEntriesAndRReverses() throws {
        try Journal.ensureRunning()
        let (s, store) = try Self.storeSandbox()
        let u = Self.user("n")
        let kinds = ["at_risk", "freeze_used", "streak_broken", "freeze_refilled", "at_risk"]
        try Self.write(
            kinds.enumerated().map {
                TestJournal.notification($0.element, user: u, streak: "s\($0.offset)", store: store)
            }, user: u, total: 5, in: s)
        func streaks(_ args: [String]) throws -> [String] {
            let r = s.run(["log", "--user", u, "-o", "json"] + args)
            #expect(r.code == 0 && r.err.isEmpty, "\(args): \(r)")
            return try jsonLines(r.out).map { try #require($0["streak"] as? String) }
        }
        #expect(try streaks([]) == ["s0", "s1", "s2", "s3", "s4"])
        #expect(try streaks(["-n", "2"]) == ["s3", "s4"])
        #expect(try streaks(["-n2"]) == ["s3", "s4"])
        #expect(try streaks(["--lines=1"]) == ["s4"])
        #expect(try streaks(["-n", "+2"]) == ["s0", "s1"])
        #expect(try streaks(["-n", "0"]) == [])
        #expect(try streaks(["-n", "all"]) == ["s0", "s1", "s2", "s3", "s4"])
        #expect(try streaks(["-n", "99"]) == ["s0", "s1", "s2", "s3", "s4"])
        #expect(try streaks(["-n"]) == ["s0", "s1", "s2", "s3", "s4"])  // -n alone is 10
        #expect(try streaks(["-r"]) == ["s4", "s3", "s2", "s1", "s0"])
        #expect(try streaks(["-r", "-n", "2"]) == ["s4", "s3"])
        #expect(try streaks(["--reverse", "-n", "+2"]) == ["s1", "s0"])
        #expect(try streaks(["--kind", "at_risk"]) == ["s0", "s4"])
        #expect(try streaks(["--kind", "at_risk", "-n1"]) == ["s4"])
        #expect(try streaks(["--kind", "streak_broken"]) == ["s2"])
        #expect(try streaks(["--failed"]) == [])
    }

    @Test func failedAndDeadListOnlyTheDeliveriesThatDidNotGoThrough() throws {
        try Journal.ensureRunning()
        let (s, store) = try Self.storeSandbox()
        let u = Self.user("failed")
        try Self.write(
            [
                TestJournal.notification("at_risk", user: u, store: store),
                TestJournal.failed(
                    "at_risk", user: u, sink: "hook:a", attempts: 1, error: "timed out after 10s",
                    retry: "2026-11-21T19:01:00Z", store: store),
                TestJournal.dead("streak_broken", user: u, sink: "hook:a", attempts: 5, error: "exit 1", store: store),
            ], user: u, total: 3, in: s)
        func lines(_ args: [String]) throws -> [String] {
            let r = s.run(["log", "--user", u, "-o", "json"] + args)
            #expect(r.code == 0 && r.err.isEmpty, "\(args): \(r)")
            return try jsonLines(r.out).map { "\($0["kind"] ?? "") \($0["delivery"] ?? "sent")" }
        }
        #expect(try lines([]) == ["at_risk sent", "at_risk failed", "streak_broken dead"])
        #expect(try lines(["--failed"]) == ["at_risk failed", "streak_broken dead"])
        #expect(try lines(["--dead"]) == ["streak_broken dead"])
        #expect(try lines(["--failed", "--kind", "at_risk"]) == ["at_risk failed"])
    }

    /// journalctl's time forms, read in the local zone (`TZ`), or in UTC with --utc.
    @Test func sinceAndUntilTakeJournalctlsForms() throws {
        try Journal.ensureRunning()
        let (s, store) = try Self.storeSandbox()
        let u = Self.user("window")
        try Self.write(
            ["a1", "a2"].map { TestJournal.notification("at_risk", user: u, streak: $0, store: store) }, user: u,
            total: 2, in: s)
        let split = Self.nextSecond()
        try Self.write(
            ["b1", "b2"].map { TestJournal.notification("at_risk", user: u, streak: $0, store: store) }, user: u,
            total: 4, in: s)
        func streaks(_ args: [String], now: Date? = nil, zone: String = "Asia/Kolkata") throws -> [String] {
            var env = ["TZ": zone]
            if let now { env["STREAKD_NOW"] = Self.text(now) }
            let r = s.run(["log", "--user", u, "-o", "json"] + args, env: env)
            #expect(r.code == 0 && r.err.isEmpty, "\(args): \(r)")
            return try jsonLines(r.out).map { try #require($0["streak"] as? String) }
        }
        let justBefore = split.addingTimeInterval(-1)
        let kolkata = { (d: Date, f: String) in Self.local(d, "Asia/Kolkata", f) }
        #expect(try streaks(["--since", kolkata(split, "yyyy-MM-dd HH:mm:ss")]) == ["b1", "b2"])
        #expect(try streaks(["-S", kolkata(split, "yyyy-MM-dd'T'HH:mm:ss")]) == ["b1", "b2"])
        #expect(try streaks(["--until", kolkata(justBefore, "yyyy-MM-dd HH:mm:ss")]) == ["a1", "a2"])
        #expect(try streaks(["-U", kolkata(justBefore, "EEE yyyy-MM-dd HH:mm:ss")]) == ["a1", "a2"])
        #expect(try streaks(["--until", kolkata(justBefore, "HH:mm:ss")], now: split) == ["a1", "a2"])
        #expect(try streaks(["--since", Self.local(split, "UTC", "yyyy-MM-dd HH:mm:ss") + " UTC"]) == ["b1", "b2"])
        #expect(try streaks(["--since", Self.local(split, "UTC", "yyyy-MM-dd HH:mm:ss"), "--utc"]) == ["b1", "b2"])
        #expect(try streaks(["--since", "@\(Int(split.timeIntervalSince1970))"]) == ["b1", "b2"])
        #expect(try streaks(["--since", Self.text(split, offset: 3600)]) == ["b1", "b2"])
        #expect(try streaks(["--until", Self.text(justBefore, offset: -18000), "-n", "1"]) == ["a2"])
        // Relative to --now / STREAKD_NOW.
        #expect(try streaks(["--since", "-2h"], now: split.addingTimeInterval(7200)) == ["b1", "b2"])
        #expect(try streaks(["--since", "2 hours ago"], now: split.addingTimeInterval(7200)) == ["b1", "b2"])
        #expect(try streaks(["--since", "1h 60min ago"], now: split.addingTimeInterval(7200)) == ["b1", "b2"])
        #expect(try streaks(["--until", "-1d"], now: justBefore.addingTimeInterval(86400)) == ["a1", "a2"])
        #expect(try streaks(["--until", "1 week ago"], now: justBefore.addingTimeInterval(604_800)) == ["a1", "a2"])
        #expect(try streaks(["--since", "yesterday", "--until", "tomorrow"], now: Date()) == ["a1", "a2", "b1", "b2"])
        #expect(try streaks(["--since", "tomorrow"], now: Date()) == [])
        #expect(try streaks(["--since", "tomorrow", "--utc"], now: Date()) == [])
        #expect(try streaks(["--since", "now"], now: split.addingTimeInterval(3600)) == [])
    }

    @Test func followPrintsNewEntriesAndStopsOnSIGINT() throws {
        try Journal.ensureRunning()
        let (s, store) = try Self.storeSandbox()
        let u = Self.user("follow")
        try Self.write(
            (0..<12).map { TestJournal.notification("at_risk", user: u, streak: "old\($0)", store: store) }, user: u,
            total: 12, in: s)
        let follower = try s.spawn(["log", "-f", "--user", u, "-o", "json"])
        let streaksSoFar = { () throws -> [String] in
            let text = (try? String(contentsOf: follower.outURL, encoding: .utf8)) ?? ""
            return try jsonLines(text).map { try #require($0["streak"] as? String) }
        }
        try Self.waitFor(follower) { try streaksSoFar().count >= 10 }
        #expect(try streaksSoFar() == (2..<12).map { "old\($0)" })  // the last 10, as journalctl -f
        #expect(Journal.send(TestJournal.notification("streak_broken", user: u, streak: "new1", store: store)))
        let another = (store.first == "0" ? "1" : "0") + store.dropFirst()
        #expect(Journal.send(TestJournal.notification("at_risk", user: u, streak: "other", store: another)))
        #expect(Journal.send(TestJournal.notification("at_risk", user: u, streak: "new2", store: store)))
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
        let (s, store) = try Self.storeSandbox()
        let u = Self.user("term")
        try Self.write([TestJournal.notification("freeze_refilled", user: u, store: store)], user: u, total: 1, in: s)
        let follower = try s.spawn(["log", "--follow", "-n", "0", "--user", u, "--utc"])
        let output = { (try? String(contentsOf: follower.outURL, encoding: .utf8)) ?? "" }
        // Whether the follower has reached the tail yet cannot be seen: write until one shows up.
        var sent = 0
        try Self.waitFor(follower) {
            if !output().isEmpty { return true }
            sent += 1
            let dead = TestJournal.dead(
                "streak_broken", user: u, sink: "hook:x", attempts: sent, error: "timed out", store: store)
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
