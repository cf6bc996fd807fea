import Foundation
import StreakTestKit
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// Issue 17: kill -9 at random moments of `user import`, `import`, `tick` (a real hook and the
/// journal) and `refill`, on one real store, with seeded randomness; then runs until nothing is
/// pending. Nothing may be lost; a delivery may be repeated only when it was in flight at a kill
/// (its first run's parent is a killed process). The hook's oracle: one `STREAKD_KEY pid ppid`
/// line per run, appended to one O_APPEND file. The counts are printed for the record.
@Suite(
    "fault campaign", .systemTier("kill -9 at random moments, a full tmpfs, a hung hook: minutes of runs"),
    .timeLimit(TestTier.systemLimit), .enabled(if: !TestStore.postgres, "the faults of a SQLite file"))
struct FaultCampaignTests {
    static let seed: UInt64 = 17
    static let killsPerCommand = 6
    static let users = 12_000
    static let due = 300
    /// Check-ins per due user and day (7 days): 21,000 in all, to give `import` some length.
    static let perDay = 10

    /// A killed (or finished) run: its pid, and whether the kill came before it ended.
    struct Kill {
        var pid: Int32
        var midRun: Bool
    }

    final class Campaign {
        let s: Sandbox
        var random = SplitMix64(state: FaultCampaignTests.seed)
        var kills: [String: [Kill]] = [:]
        var checksOK = 0
        var checks = 0
        /// Kills that came before any run had made the store (on a loaded machine a run may take
        /// longer than its delay to get there): nothing there to damage.
        var beforeTheStore = 0
        var storeSeen = false

        init() throws { s = try Sandbox() }

        /// Starts `args`, kills it -9 after a random delay up to `within` seconds, waits for it, and
        /// checks the store's integrity.
        func killAtRandom(_ name: String, _ args: [String], within: Double) throws {
            let delay = Double.random(in: 0.02...within, using: &random)
            let child = try s.spawn(args)
            usleep(UInt32(delay * 1_000_000))
            kill(child.process.processIdentifier, SIGKILL)
            _ = child.wait()
            let midRun = child.process.terminationReason == .uncaughtSignal
            kills[name, default: []].append(Kill(pid: child.process.processIdentifier, midRun: midRun))
            let check = s.run(["store", "check"])
            checks += 1
            let exists = FileManager.default.fileExists(atPath: s.store)
            if check.code == 0 {
                checksOK += 1
            } else if check.code == 66 && !exists && !storeSeen {
                beforeTheStore += 1
            } else {
                Issue.record("integrity after a kill of \(name): \(check)")
            }
            storeSeen = storeSeen || exists
        }

        func count(_ sql: String) -> Int {
            Int(run(["/usr/bin/sqlite3", s.store, sql]).out.trimmingCharacters(in: .whitespacesAndNewlines)) ?? -1
        }

        func summary(_ name: String) -> String {
            let k = kills[name] ?? []
            return "\(name) \(k.count) (\(k.count { $0.midRun }) mid-run)"
        }

        var killedPIDs: Set<String> { Set(kills.values.flatMap { $0.map { String($0.pid) } }) }
    }

    /// Runs `args` until it exits 0, at most `times`.
    func untilDone(_ c: Campaign, _ args: [String], times: Int = 8) -> Outcome {
        var r = c.s.run(args)
        for _ in 1..<times where r.code != 0 { r = c.s.run(args) }
        return r
    }

    /// Hook runs per key from the oracle, and how many of the repeats the kills explain.
    func oracle(_ c: Campaign, prefix: String) -> (runs: [String: Int], explained: Int, unexplained: [String]) {
        let text = (try? String(contentsOfFile: c.s.dir.path + "/oracle", encoding: .utf8)) ?? ""
        var lines: [String: [[Substring]]] = [:]
        for line in text.split(separator: "\n") {
            let f = line.split(separator: " ")
            guard f.count == 3, f[0].hasPrefix(prefix) else { continue }
            lines[String(f[0]), default: []].append(f)
        }
        var explained = 0
        var unexplained: [String] = []
        for (key, runs) in lines where runs.count > 1 {
            // Every run but one must have been started by a killed process. Not always the earlier
            // ones: a hook a killed run had just started outlives it (a group of its own) and may
            // write its line after the next run's delivery, on a loaded machine.
            let killed = min(runs.filter { c.killedPIDs.contains(String($0[2])) }.count, runs.count - 1)
            explained += killed
            if killed < runs.count - 1 {
                unexplained.append(
                    key + " (hook, streakd run: " + runs.map { "\($0[1]) \($0[2])" }.joined(separator: ", ") + ")")
            }
        }
        return (lines.mapValues(\.count), explained, unexplained)
    }

    @Test func killNineAtRandomMomentsLosesNothing() throws {
        try Journal.ensureRunning()
        let c = try Campaign()
        let s = c.s
        let streak = "camp_" + String(UUID().uuidString.prefix(8)).lowercased()
        // Each line: the key, the hook's PID and its run's (from the marker streakd gives each hook: a killed
        // run's hook, orphaned, no longer has it as $PPID).
        let hook = try s.file(
            "hook.sh", "#!/bin/sh\necho \"$STREAKD_KEY $$ ${STREAKD_HOOK_RUN%%.*}\" >> '\(s.dir.path)/oracle'\n")
        chmod(hook, 0o755)
        let config = try s.file(
            "streakd.toml",
            "[[hooks]]\nname = \"oracle\"\ncommand = [\"\(hook)\"]\nkinds = [\"at_risk\", \"freeze_refilled\"]\n")

        // user import: chunks of users, each killed once at random, then all imported.
        let chunks = Self.killsPerCommand
        let perChunk = Self.users / chunks
        var userFiles: [String] = []
        for k in 0..<chunks {
            var text = ""
            for i in (k * perChunk)..<((k + 1) * perChunk) { text += #"{"user":"u\#(i)","tz":"UTC"}"# + "\n" }
            userFiles.append(try s.file("users\(k).jsonl", text))
        }
        for file in userFiles { try c.killAtRandom("user import", ["user", "import", file], within: 0.25) }
        for file in userFiles { #expect(untilDone(c, ["user", "import", file]).code == 0) }
        let users = c.count("SELECT count(*) FROM users")

        // import: the due users' week (perDay check-ins a day, each with an id), in chunks.
        var rows: [String] = []
        for u in 0..<Self.due {
            for d in 14...20 {
                for n in 0..<Self.perDay {
                    rows.append(
                        #"{"user":"u\#(u)","streak":"\#(streak)","at":"2026-11-\#(d)T10:\#(10 + n):00Z","id":"e\#(u)-\#(d)-\#(n)"}"#
                    )
                }
            }
        }
        rows.shuffle(using: &c.random)
        let size = (rows.count + chunks - 1) / chunks
        var checkinFiles: [String] = []
        for k in 0..<chunks {
            checkinFiles.append(
                try s.file(
                    "checkins\(k).jsonl",
                    rows[(k * size)..<min(rows.count, (k + 1) * size)].joined(separator: "\n") + "\n"))
        }
        for file in checkinFiles { try c.killAtRandom("import", ["import", file], within: 0.4) }
        for file in checkinFiles { #expect(untilDone(c, ["import", file]).code == 0) }
        let checkins = c.count("SELECT count(*) FROM checkins")
        let distinct = c.count("SELECT count(DISTINCT event_id) FROM checkins")

        // tick at 20:00 UTC: every due user's at_risk, to the journal and the hook.
        s.now = "2026-11-21T20:00:00Z"
        for _ in 0..<chunks { try c.killAtRandom("tick", ["tick", "--config", config], within: 1.2) }
        let tick = untilDone(c, ["tick", "--config", config])
        #expect(tick.code == 0 && tick.err.contains("; 0 pending"), "\(tick)")

        // refill 31 days on: every streak gets its freeze back, once.
        s.now = "2026-12-22T00:07:00Z"
        for _ in 0..<chunks { try c.killAtRandom("refill", ["refill", "--config", config], within: 1.2) }
        #expect(untilDone(c, ["refill", "--config", config]).code == 0)
        let after = untilDone(c, ["tick", "--config", config])
        #expect(after.code == 0 && after.err.contains("; 0 pending"), "\(after)")
        usleep(300_000)  // a hook a killed run left running finishes its line

        let atRisk = oracle(c, prefix: "at_risk/")
        let refilled = oracle(c, prefix: "freeze_refilled/")
        let expectedAtRisk = Set((0..<Self.due).map { "at_risk/u\($0)/\(streak)/2026-11-21" })
        let expectedRefill = Set((0..<Self.due).map { "freeze_refilled/u\($0)/\(streak)/2026-12-22" })
        let refills = c.count("SELECT count(*) FROM freeze_events WHERE kind = 'refill' AND streak = '\(streak)'")
        let refillPairs = c.count(
            "SELECT count(DISTINCT user_id) FROM freeze_events WHERE kind = 'refill' AND streak = '\(streak)'")
        let pending = c.count("SELECT count(*) FROM deliveries WHERE state IN ('pending', 'dead')")
        let journal = journalKeys(streak: streak, expected: expectedAtRisk.count + expectedRefill.count)
        let journalLost = expectedAtRisk.union(expectedRefill).subtracting(journal.keys).count
        let journalRepeats = journal.values.reduce(0) { $0 + $1 - 1 }

        print(
            "fault campaign (seed \(Self.seed)): \(c.kills.values.map(\.count).reduce(0, +)) kill -9: "
                + ["user import", "import", "tick", "refill"].map(c.summary).joined(separator: ", ")
                + "; integrity_check ok \(c.checksOK) of \(c.checks)"
                + " (\(c.beforeTheStore) killed before the store existed)")
        print(
            "fault campaign: users \(users) of \(Self.users); check-ins \(checkins) of \(rows.count) "
                + "(\(rows.count - distinct) lost, \(checkins - distinct) duplicated); refills \(refills) for "
                + "\(refillPairs) of \(Self.due) streaks; \(pending) deliveries pending or dead")
        print(
            "fault campaign: hook at_risk \(atRisk.runs.count) of \(expectedAtRisk.count) keys "
                + "(\(expectedAtRisk.subtracting(atRisk.runs.keys).count) lost, \(atRisk.explained) repeated in flight at a "
                + "kill, \(atRisk.unexplained.count) unexplained); hook freeze_refilled \(refilled.runs.count) of "
                + "\(expectedRefill.count) (\(expectedRefill.subtracting(refilled.runs.keys).count) lost, "
                + "\(refilled.explained) repeated in flight, \(refilled.unexplained.count) unexplained); journal "
                + "\(journal.count) keys (\(journalLost) lost, \(journalRepeats) entries repeated)")

        #expect(c.checksOK + c.beforeTheStore == c.checks)
        #expect(users == Self.users)
        #expect(checkins == rows.count && distinct == rows.count)
        #expect(refills == Self.due && refillPairs == Self.due, "one refill per streak")
        #expect(pending == 0)
        #expect(Set(atRisk.runs.keys) == expectedAtRisk && Set(refilled.runs.keys) == expectedRefill)
        #expect(
            atRisk.unexplained.isEmpty && refilled.unexplained.isEmpty, "\(atRisk.unexplained + refilled.unexplained)")
        #expect(journalLost == 0)
    }

    /// How many journal entries each STREAKD_KEY of the streak has.
    func journalKeys(streak: String, expected: Int) -> [String: Int] {
        var counts: [String: Int] = [:]
        _ = Journal.read(
            ["-o", "cat", "--output-fields=STREAKD_KEY", "STREAKD_STREAK=\(streak)", "SYSLOG_IDENTIFIER=streakd"],
            timeout: .seconds(30)
        ) { text in
            counts = [:]
            for key in text.split(separator: "\n") { counts[String(key), default: 0] += 1 }
            return counts.count >= expected
        }
        return counts
    }

    /// `n` users with the 7 days before 2026-11-21 (UTC) in `streak`: each at risk at 20:00 UTC.
    func dueUsers(_ s: Sandbox, _ n: Int, streak: String, store: String? = nil) throws {
        var users = ""
        var rows = ""
        for u in 0..<n {
            users += #"{"user":"u\#(u)","tz":"UTC"}"# + "\n"
            for d in 14...20 {
                rows += #"{"user":"u\#(u)","streak":"\#(streak)","at":"2026-11-\#(d)T10:00:00Z"}"# + "\n"
            }
        }
        let target = store.map { ["--store", $0] } ?? []
        #expect(
            s.runBare(
                ["user", "import", try s.file("users.jsonl", users)] + (store == nil ? ["--store", s.store] : target)
            ).code == 0)
        #expect(
            s.runBare(["import", try s.file("rows.jsonl", rows)] + (store == nil ? ["--store", s.store] : target)).code
                == 0)
    }

    @Test(.requires(.root))
    func aFullDiskFailsClearlyAndTheStoreGoesOnAfterwards() throws {
        try Journal.ensureRunning()
        let s = try Sandbox()
        let mount = try s.tmpfs("small", size: "16m")
        defer { _ = run(["/bin/umount", "-l", mount]) }
        let store = mount + "/s.sqlite"
        let streak = "full_" + String(UUID().uuidString.prefix(8)).lowercased()
        try dueUsers(s, 50, streak: streak, store: store)
        let filler = mount + "/filler"
        /// Fills the file system but for `leaving` KiB.
        func fill(leaving: Int) {
            _ = run(["/bin/sh", "-c", "cat /dev/zero >> '\(filler)'; truncate -s -\(leaving)K '\(filler)'"])
        }
        func count(_ table: String) -> String { run(["/usr/bin/sqlite3", store, "SELECT count(*) FROM \(table)"]).out }
        let before = count("checkins")

        // An import of 20,000 check-ins (some 3 MB) that fills the disk on its way.
        var rows = ""
        for i in 0..<20_000 {
            rows +=
                #"{"user":"u\#(i % 50)","streak":"\#(streak)","at":"2026-11-20T\#(10 + i % 9):00:00Z","id":"f\#(i)"}"#
                + "\n"
        }
        let file = try s.file("big.jsonl", rows)
        // A tick with room for SQLite's shared memory and little more: its recording cannot commit.
        fill(leaving: 40)
        let tick = s.runBare(["tick", "--store", store], env: ["STREAKD_NOW": "2026-11-21T20:00:00Z"])
        #expect(tick.code == 69 && tick.err.contains("full"), "\(tick)")
        try FileManager.default.removeItem(atPath: filler)
        // An import of 20,000 check-ins (some 3 MB) that fills the disk on its way.
        fill(leaving: 400)
        let failed = s.runBare(["import", file, "--store", store])
        #expect(failed.code == 69 && failed.err.contains("full"), "\(failed)")

        try FileManager.default.removeItem(atPath: filler)
        #expect(s.runBare(["store", "check", "--store", store]).code == 0)
        #expect(count("checkins") == before, "the failed import changed the store")
        #expect(s.runBare(["import", file, "--store", store]).code == 0)
        #expect(
            count("checkins") == String(Int(before.trimmingCharacters(in: .whitespacesAndNewlines))! + 20_000) + "\n")
        let again = s.runBare(["tick", "--store", store], env: ["STREAKD_NOW": "2026-11-21T20:00:00Z"])
        #expect(again.code == 0 && again.err.contains("50 sent"), "\(again.err.suffix(800))")
        #expect(s.runBare(["store", "check", "--store", store]).code == 0)
    }

    @Test func aHungHookHoldsUpNoJournalEntry() throws {
        try Journal.ensureRunning()
        let s = try Sandbox()
        let streak = "hung_" + String(UUID().uuidString.prefix(8)).lowercased()
        try dueUsers(s, 1000, streak: streak)
        let config = try s.file(
            "streakd.toml", "[[hooks]]\nname = \"hung\"\ncommand = [\"/bin/sleep\", \"600\"]\ntimeout_seconds = 1\n")
        s.now = "2026-11-21T20:00:00Z"
        let began = Date()
        let r = s.run(["tick", "--config", config])
        let took = Date().timeIntervalSince(began)
        #expect(r.code == 75 && r.err.contains("1000 sent"), "\(r.err.suffix(600))")
        // The at_risk entries (failed deliveries have entries of their own).
        let entries = try Journal.entries(
            ["STREAKD_STREAK=\(streak)", "STREAKD_KIND=at_risk", "MESSAGE_ID=cf4039696c9c459e89e0e7f18de192c5"],
            count: 1000, timeout: .seconds(30))
        let times = entries.compactMap { ($0["__REALTIME_TIMESTAMP"] as? String).flatMap(Double.init) }.map { $0 / 1e6 }
        let last = (times.max() ?? .infinity) - began.timeIntervalSince1970
        #expect(entries.count == 1000)
        #expect(last < 5, "a journal entry waited for the hung hook")
        #expect(took > 4, "the hook lane spent its time-outs")
    }
}
