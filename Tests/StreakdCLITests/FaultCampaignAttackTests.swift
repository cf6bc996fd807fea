import Foundation
import StreakTestKit
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// Issue 31, items 2, 4, 5 and 6, in the fault campaign: what another local user can do to a
/// store's log and backups, what a PostgreSQL server refuses for good, and times past any
/// journal's. Each case counts what it tried and what held, in its expectations' messages.
extension FaultCampaignTests {
    /// Runs `argv` as the user nobody.
    static func asNobody(_ argv: [String], stdin: String? = nil) -> Outcome {
        run(
            ["/usr/bin/setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups"] + argv,
            env: ["PATH": "/usr/bin:/bin", "LANG": "C.UTF-8"], stdin: stdin)
    }

    /// Another user writes entries with streakd's identifier, MESSAGE_IDs, fields and the store's
    /// identity, three ways: `logger --journald`; the same with journald's own fields (`_UID=0`,
    /// `_SYSTEMD_UNIT=streakd-tick.service`, …) in the payload; and from a copy of logger named
    /// `streakd` (its `_COMM`). `log` shows none of them, counts them, and `--untrusted` shows each
    /// marked; the real entries are shown as before.
    @Test(.requires(.root))
    func forgedJournalEntriesAreNeverShownAsReal() throws {
        try Journal.ensureRunning()
        let (s, id) = try LogTests.storeSandbox()
        let user = LogTests.user("campaign")
        let kinds = ["at_risk", "freeze_used", "streak_broken", "freeze_refilled"]
        let real = kinds.prefix(2).map { TestJournal.notification($0, user: user, store: id) }
        for fields in real { #expect(Journal.send(fields)) }
        // A copy of logger named streakd, in a folder nobody may read.
        let bin = s.dir.appendingPathComponent("bin").path
        try FileManager.default.createDirectory(atPath: bin, withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: "/usr/bin/logger", toPath: bin + "/streakd")
        chmod(s.dir.path, 0o755)
        chmod(bin, 0o755)
        let ways: [(String, [String], [String])] = [
            ("logger --journald", ["/usr/bin/logger", "--journald"], []),
            (
                "journald's fields forged", ["/usr/bin/logger", "--journald"],
                ["_UID=0", "_GID=0", "_COMM=streakd", "_TRANSPORT=journal", "_SYSTEMD_UNIT=streakd-tick.service"]
            ),
            ("a logger named streakd", [bin + "/streakd", "--journald"], []),
        ]
        var forged = 0
        for (way, argv, extra) in ways {
            for kind in kinds {
                let fields = TestJournal.notification(kind, user: user, message: "FORGED \(way): pay here", store: id)
                let sent = Self.asNobody(argv, stdin: (fields + extra).joined(separator: "\n") + "\n")
                #expect(sent.code == 0, "\(way): \(sent)")
                if sent.code == 0 { forged += 1 }
            }
        }
        let total = real.count + forged
        let deadline = ContinuousClock.now + .seconds(30)
        while try jsonLines(s.run(["log", "--user", user, "--untrusted", "-n", "all", "-o", "json"]).out).count < total
        {
            try #require(ContinuousClock.now < deadline, "the \(total) entries never all became readable")
            usleep(100_000)
        }
        let plain = s.run(["log", "--user", user, "-n", "all", "-o", "json"])
        let shown = try jsonLines(plain.out)
        let fakesShown = shown.count { ($0["message"] as? String)?.hasPrefix("FORGED") ?? false }
        let all = try jsonLines(s.run(["log", "--user", user, "--untrusted", "-n", "all", "-o", "json"]).out)
        let marked = all.count { $0["trusted"] as? Bool == false }
        let markedForged = all.count { $0["trusted"] as? Bool == false && $0["uid"] as? Int == 65534 }
        let record =
            "\(forged) entries forged (\(ways.count) ways × \(kinds.count) kinds) beside \(real.count) real: log showed "
            + "\(shown.count) (\(fakesShown) forged), --untrusted \(all.count) (\(marked) marked, \(markedForged) of uid 65534)"
        #expect(plain.code == 0 && forged == ways.count * kinds.count, "\(record)")
        #expect(shown.count == real.count && fakesShown == 0, "\(record)")
        #expect(plain.err.contains("left out \(forged) entries that streakd did not write"), "\(record): \(plain.err)")
        #expect(all.count == total && marked == forged && markedForged == forged, "\(record)")
    }

    /// Another user, in a shared folder (sticky, world-writable), makes first every name a backup
    /// could go to: `FILE.partial-PID` for the next pids as files (0666), symlinks to a file of
    /// root's and FIFOs; and `FILE` itself as a symlink or a file of theirs. Every backup is root's,
    /// with the store's mode, or refused (64) where `FILE` was there; the target of the symlinks
    /// is never written, and no backup hangs.
    @Test(.requires(.root))
    func preCreatedBackupNamesGetNothing() throws {
        let s = try Sandbox()
        s.addUser("u1")
        try s.importLines(sevenDays)
        chmod(s.dir.path, 0o755)
        let shared = s.dir.appendingPathComponent("shared").path
        try FileManager.default.createDirectory(atPath: shared, withIntermediateDirectories: true)
        chmod(shared, 0o1777)
        let victim = try s.file("victim", "root's own\n")
        var (made, backups, refused, wrong) = (0, 0, 0, [String]())
        for (n, (storeMode, trapFile)) in [(0o600, "none"), (0o640, "none"), (0o600, "symlink"), (0o644, "file")]
            .enumerated()
        {
            chmod(s.store, mode_t(storeMode))
            let file = shared + "/backup\(n).sqlite"
            let last =
                Int(
                    (try String(contentsOfFile: "/proc/sys/kernel/ns_last_pid", encoding: .utf8))
                        .trimmingCharacters(in: .whitespacesAndNewlines)) ?? 0
            let trap = Self.asNobody([
                "/bin/sh", "-c",
                """
                umask 0; i=\(last + 1); while [ $i -le \(last + 300) ]; do
                  case $((i % 3)) in 0) : > "$0.partial-$i";; 1) ln -s "$1" "$0.partial-$i";; 2) mkfifo "$0.partial-$i";; esac
                  i=$((i + 1)); done
                case "$2" in symlink) ln -s "$1" "$0";; file) : > "$0"; chmod 666 "$0";; esac
                """, file, victim, trapFile,
            ])
            try #require(trap.code == 0, "\(trap)")
            made += 300 + (trapFile == "none" ? 0 : 1)
            let child = try s.spawnBare(["store", "backup", file, "--store", s.store])
            let r = child.wait(within: .seconds(60))
            #expect(!r.timedOut, "backup \(n) still running after 60 s")
            if trapFile != "none" {
                if r.code == 64 && r.err.contains("exists already") { refused += 1 } else { wrong.append("\(n): \(r)") }
                continue
            }
            var info = stat()
            guard r.code == 0, lstat(file, &info) == 0, info.st_mode & S_IFMT == S_IFREG, info.st_uid == 0,
                Int(info.st_mode & 0o777) == storeMode
            else {
                wrong.append("\(n): \(r); mode \(String(info.st_mode & 0o777, radix: 8)), uid \(info.st_uid)")
                continue
            }
            backups += 1
            #expect(s.runBare(["store", "check", "--store", file]).code == 0)
        }
        let victimNow = try String(contentsOfFile: victim, encoding: .utf8)
        let left = try FileManager.default.contentsOfDirectory(atPath: shared).filter {
            $0.hasPrefix(".streakd-backup")
        }
        let record =
            "\(made) names pre-created by nobody over 4 backups: \(backups) of 2 made root's with the store's mode, "
            + "\(refused) of 2 refused where FILE was there; the symlinks' target \(victimNow == "root's own\n" ? "untouched" : "WRITTEN")"
            + ", \(left.count) private folders left"
        #expect(backups == 2 && refused == 2 && wrong.isEmpty, "\(record): \(wrong)")
        #expect(victimNow == "root's own\n" && left.isEmpty, "\(record)")
    }

    /// Times past any journal's, random and at the edges, for `--since` and `--until`: usage errors
    /// (64) naming the range, or read (0); never a trap.
    @Test func logTimesOfAnySizeAreUsageErrorsNeverTraps() throws {
        let s = try Sandbox()
        s.addUser("u1")
        var random = SplitMix64(state: Self.seed &+ 6)
        var values = [
            "@9223372036854775807", "@-9223372036854775808", "@99999999999999999999", "+9223372036854775807s",
        ]
        for _ in 0..<40 {
            let digits = Int.random(in: 1...22, using: &random)
            let number = String((0..<digits).map { _ in "0123456789".randomElement(using: &random)! })
            values.append(
                ["@", "@-", "+", "-"].randomElement(using: &random)! + number
                    + ["", "s", "m", "h", "d", "w", "y"].randomElement(using: &random)!)
        }
        var codes: [Int32: Int] = [:]
        var wrong: [String] = []
        for (n, value) in values.enumerated() {
            let option = n % 2 == 0 ? "--since" : "--until"
            let r = s.run(["log", option, value, "-q"])
            codes[r.code, default: 0] += 1
            if r.code == 64 && !(r.err.contains(option) && r.err.contains("\"\(value)\"")) || ![0, 64].contains(r.code)
            {
                wrong.append("\(option) \(value): \(r)")
            }
        }
        let record =
            "\(values.count) times (seed \(Self.seed &+ 6)): "
            + codes.sorted { $0.key < $1.key }.map { "\($0.value)×\($0.key)" }.joined(separator: " ")
        #expect(wrong.isEmpty, "\(record): \(wrong.prefix(5))")
    }

    /// Refusals a PostgreSQL server makes for good, against every command that writes: a role
    /// without write rights (77), a read-only role (69), a `search_path` without streakd's tables
    /// (69 or 66). Never 75, which the units count as success, and never 0; each with the reason.
    @Test(.requires(.postgres))
    func permanentPostgreSQLRefusalsAreNeverTemporary() throws {
        let s = try Sandbox()
        let url = try TestPostgres.freshDatabase()
        try #require(s.runBare(["user", "add", "u1", "--tz", "UTC", "--store", url]).code == 0)
        let rows = try s.file("rows.jsonl", #"{"user":"u1","at":"2026-11-20T10:00:00Z"}"# + "\n")
        let users = try s.file("users.jsonl", #"{"user":"u2","tz":"UTC"}"# + "\n")
        func role(_ grants: String) throws -> String {
            let name = "campaign_" + String(UInt32.random(in: 0...UInt32.max), radix: 36)
            try TestPostgres.psql(
                url, "CREATE ROLE \(name) LOGIN; " + grants.replacingOccurrences(of: "{role}", with: name))
            return url.replacingOccurrences(of: "user=postgres", with: "user=\(name)")
        }
        let refusals: [(String, String, Set<Int32>, String)] = [
            (
                "no write rights", try role("GRANT SELECT ON ALL TABLES IN SCHEMA public TO {role}"), [77],
                "permission denied"
            ),
            (
                "a read-only role",
                try role(
                    "GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA public TO {role}; "
                        + "GRANT USAGE ON ALL SEQUENCES IN SCHEMA public TO {role}; "
                        + "ALTER ROLE {role} SET default_transaction_read_only = on"), [69], "read-only"
            ),
            ("a search_path without the tables", url + "&options=-csearch_path%3Dnowhere", [69, 66], "search_path"),
        ]
        let writers = [
            ["tick"], ["refill"], ["checkin", "u1"], ["user", "add", "u3", "--tz", "UTC"],
            ["user", "set", "u1", "--tz", "Asia/Tokyo"], ["user", "remove", "u1"], ["freeze", "add", "u1"],
            ["import", rows], ["user", "import", users],
        ]
        var codes: [Int32: Int] = [:]
        var wrong: [String] = []
        for (what, store, expected, reason) in refusals {
            for args in writers {
                let r = s.runBare(args + ["--store", store])
                codes[r.code, default: 0] += 1
                if !expected.contains(r.code) || !r.err.contains(reason) { wrong.append("\(what): \(args): \(r)") }
            }
        }
        let record =
            "\(refusals.count) refusals × \(writers.count) writing commands: "
            + codes.sorted { $0.key < $1.key }.map { "\($0.value)×\($0.key)" }.joined(separator: " ")
        #expect(codes[75] == nil && codes[0] == nil && wrong.isEmpty, "\(record): \(wrong.prefix(4))")
        // The owner's data is as it was.
        #expect(try TestPostgres.psql(url, "SELECT string_agg(id, ',' ORDER BY id) FROM users") == "u1")
    }
}
