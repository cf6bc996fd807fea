import Foundation
import StreakTestKit
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// Issue 31, items 7 and 8, in the fault campaign: damaged pages, damaged values and damaged
/// packed histories, each on a copy of one real store, against every command that reads. Each
/// ends in 0 (it did not read the damage) or 74 naming the store, within a time limit: never 1
/// ("SQLite error 11"), 65, a trap or a spin; `store backup` never copies a damaged store quietly,
/// and `store check` finds every packed copy that is not the tables' history. Seeded; the counts
/// (exits by command) are in the expectations' messages.
extension FaultCampaignTests {
    /// A store of 300 users (three zones, two streaks) with eleven days each and a tick's planned
    /// runs (which carry packed histories), checkpointed into its one file.
    static func stockedStore(_ s: Sandbox) throws -> String {
        try Prerequisite.sqlite3.require()
        var users = ""
        var rows = ""
        for u in 0..<300 {
            users += #"{"user":"u\#(u)","tz":"\#(["Europe/Berlin", "Asia/Tokyo", "America/New_York"][u % 3])"}"# + "\n"
            for d in 10...20 {
                rows +=
                    #"{"user":"u\#(u)","streak":"\#(u % 2 == 0 ? "daily" : "run")","at":"2026-11-\#(d)T10:00:00Z","id":"e\#(u)-\#(d)"}"#
                    + "\n"
            }
        }
        let base = s.dir.appendingPathComponent("base.sqlite").path
        for args in [
            ["user", "import", try s.file("users.jsonl", users)], ["import", try s.file("rows.jsonl", rows)], ["tick"],
        ] {
            let r = s.runBare(args + ["--store", base])
            try #require(r.code == 0, "\(args): \(r)")
        }
        _ = run(["/usr/bin/sqlite3", base, "PRAGMA wal_checkpoint(TRUNCATE)"])
        for side in ["-wal", "-shm"] { try? FileManager.default.removeItem(atPath: base + side) }
        return base
    }

    /// `base` copied to a fresh name in the sandbox.
    static func copy(_ base: String, _ s: Sandbox, _ name: String) throws -> String {
        let path = s.dir.appendingPathComponent(name).path
        try? FileManager.default.removeItem(atPath: path)
        try FileManager.default.copyItem(atPath: base, toPath: path)
        return path
    }

    /// The reading commands and `store backup`, each within 30 s; answers exit codes by command.
    static func readEverything(_ s: Sandbox, _ store: String, tally: inout [String: [Int32: Int]], note: String)
        throws -> (check: Int32, backup: Int32, backupFile: Bool)
    {
        let backupFile = store + ".backup"
        var codes: [String: Int32] = [:]
        for args in [
            ["preview"], ["status"], ["status", "u5"], ["calendar", "u6"], ["tick", "--dry-run"], ["user", "list"],
            ["store", "check"], ["store", "backup", backupFile],
        ] {
            let child = try s.spawnBare(args + ["--store", store])
            let r = child.wait(within: .seconds(30))
            let name = args.prefix(2).joined(separator: " ").replacingOccurrences(of: " u5", with: " ID")
                .replacingOccurrences(of: " u6", with: "").replacingOccurrences(of: " " + backupFile, with: "")
            tally[name, default: [:]][r.code, default: 0] += 1
            codes[name] = r.code
            #expect(!r.timedOut, "\(note): \(args) still running after 30 s")
            #expect([0, 74].contains(r.code), "\(note): \(args): \(r)")
            if r.code == 74 { #expect(r.err.contains(store), "\(note): \(args) does not name the store: \(r.err)") }
        }
        return (
            codes["store check"] ?? -1, codes["store backup"] ?? -1, FileManager.default.fileExists(atPath: backupFile)
        )
    }

    /// The exits by command, e.g. `preview 12×0 28×74; status 40×74`.
    static func summary(_ tally: [String: [Int32: Int]]) -> String {
        tally.sorted { $0.key < $1.key }.map { name, codes in
            "\(name) " + codes.sorted { $0.key < $1.key }.map { "\($0.value)×\($0.key)" }.joined(separator: " ")
        }.joined(separator: "; ")
    }

    @Test func damagedPagesAre74EverywhereAndNeverBackedUpQuietly() throws {
        let s = try Sandbox()
        let base = try Self.stockedStore(s)
        let size = try #require(try FileManager.default.attributesOfItem(atPath: base)[.size] as? Int)
        var random = SplitMix64(state: Self.seed)
        var tally: [String: [Int32: Int]] = [:]
        var (found, refused) = (0, 0)
        for n in 0..<40 {
            let store = try Self.copy(base, s, "damaged.sqlite")
            // A whole page but the first (the schema's) overwritten with random bytes.
            let page = Int.random(in: 1..<(size / 4096), using: &random)
            let handle = try #require(FileHandle(forUpdatingAtPath: store))
            try handle.seek(toOffset: UInt64(page * 4096))
            try handle.write(contentsOf: Data((0..<4096).map { _ in UInt8.random(in: 0...255, using: &random) }))
            try handle.close()
            let r = try Self.readEverything(s, store, tally: &tally, note: "damage \(n) (page \(page))")
            #expect(r.check == 74, "damage \(n) (page \(page)): store check did not find it")
            #expect(r.backup == 74 && !r.backupFile, "damage \(n) (page \(page)): a damaged store was backed up")
            if r.check == 74 { found += 1 }
            if r.backup == 74 && !r.backupFile { refused += 1 }
            try? FileManager.default.removeItem(atPath: store + ".backup")
        }
        let record =
            "40 damaged pages (seed \(Self.seed)): store check found \(found), store backup refused \(refused); "
            + "exits: \(Self.summary(tally))"
        #expect(
            found == 40 && refused == 40 && tally.values.allSatisfy { Set($0.keys).isSubset(of: [0, 74]) }, "\(record)")
    }

    @Test func damagedPackedHistoriesAreFoundAndNeverSpin() throws {
        let s = try Sandbox()
        let base = try Self.stockedStore(s)
        var random = SplitMix64(state: Self.seed &+ 8)
        var tally: [String: [Int32: Int]] = [:]
        var (mutated, found) = (0, 0)
        for n in 0..<25 {
            let store = try Self.copy(base, s, "mutated.sqlite")
            // One byte of one current copy (a schedule row's, or a planned run's) set at random.
            let table = Bool.random(using: &random) ? "schedule" : "runs"
            let rows = run([
                "/usr/bin/sqlite3", store,
                table == "schedule"
                    ? "SELECT rowid, 0, length(history) FROM schedule WHERE history IS NOT NULL AND history_version = version"
                    : "SELECT r.next_at, r.row, length(r.history) FROM runs r JOIN schedule s ON s.rowid = r.row AND s.version = r.version WHERE r.history IS NOT NULL",
            ]).out.split(separator: "\n").map { $0.split(separator: "|").compactMap { Int($0) } }
            let picked = try #require(rows.randomElement(using: &random))
            let at = Int.random(in: 1...picked[2], using: &random)
            // The runs table has no rowid: its key is (next_at, row).
            let row = table == "schedule" ? "rowid = \(picked[0])" : "next_at = \(picked[0]) AND row = \(picked[1])"
            let byte = String(format: "%02x", UInt8.random(in: 0...255, using: &random))
            let update = run([
                "/usr/bin/sqlite3", store,
                "UPDATE \(table) SET history = substr(history, 1, \(at - 1)) || x'\(byte)' || substr(history, \(at + 1)) "
                    + "WHERE \(row) AND substr(history, \(at), 1) != x'\(byte)'; SELECT changes()",
            ])
            guard update.out.hasPrefix("1") else { continue }
            mutated += 1
            let r = try Self.readEverything(s, store, tally: &tally, note: "mutation \(n) (\(table) \(row) byte \(at))")
            #expect(r.check == 74, "mutation \(n) (\(table) \(row) byte \(at) = \(byte)): store check called it ok")
            if r.check == 74 { found += 1 }
            try? FileManager.default.removeItem(atPath: store + ".backup")
        }
        let record =
            "25 tries (seed \(Self.seed)): \(mutated) packed copies damaged, store check found \(found); "
            + "exits: \(Self.summary(tally))"
        #expect(
            mutated > 20 && found == mutated && tally.values.allSatisfy { Set($0.keys).isSubset(of: [0, 74]) },
            "\(record)")
    }

    @Test func aStoredZoneThatIsNoZoneIsDamage() throws {
        let s = try Sandbox()
        let base = try Self.stockedStore(s)
        let store = try Self.copy(base, s, "zone.sqlite")
        // The user's zone and its history, where every reader finds it (a run's copy too).
        _ = run([
            "/usr/bin/sqlite3", store,
            "UPDATE users SET zone = 'Mars/Olympus' WHERE id = 'u5'; UPDATE user_zones SET zone = 'Mars/Olympus' "
                + "WHERE user_id = 'u5'; UPDATE schedule SET history = NULL WHERE user_id = 'u5'; "
                + "UPDATE runs SET zone = NULL, history = NULL WHERE user_id = 'u5'",
        ])
        for args in [["status", "u5"], ["calendar", "u5"], ["checkin", "u5"], ["badges", "u5"]] {
            let r = s.runBare(args + ["--store", store])
            #expect(r.code == 74, "\(args): \(r)")
            #expect(r.err.contains(store) && r.err.contains("Mars/Olympus"), "\(args): \(r.err)")
        }
    }
}

extension Sandbox {
    /// Starts `streakd ARGS` as given (no `--store` added), without waiting for it.
    func spawnBare(_ args: [String]) throws -> Spawned {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: streakdBinary)
        process.arguments = args
        process.environment = ["PATH": "/usr/bin:/bin", "LANG": "C.UTF-8"].merging(environment) { $1 }
        return try Spawned(process, stdin: nil)
    }
}

extension Spawned {
    /// Waits up to `limit`, then kills it: a run that spins is a failure, not a hung test.
    func wait(within limit: Duration) -> Outcome {
        let deadline = ContinuousClock.now + limit
        var killed = false
        while process.isRunning {
            if ContinuousClock.now >= deadline {
                kill(process.processIdentifier, SIGKILL)
                killed = true
                break
            }
            Thread.sleep(forTimeInterval: 0.01)
        }
        var r = wait()
        r.timedOut = killed
        return r
    }
}
