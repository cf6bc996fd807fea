import Foundation
import StreakTestKit
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// Several hosts on one machine, sharing one PostgreSQL database (SPEC §7): each host is a
/// `streakd` process in a UTS namespace of its own (`unshare --uts`) with a host name of its own,
/// so runs tell each other apart as hosts do (a run on another host is judged by its lease, not
/// by /proc).
struct Hosts {
    let dir: URL
    let store: String
    /// The run's own streak id, so the journal's entries of this test are told from older ones.
    let streak: String

    /// A fresh database on the test kit's cluster, or on the server at `url`.
    init(url: String? = nil) throws {
        dir = URL(fileURLWithPath: TestFiles.path("hosts"))
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        if let url {
            let name = "t_" + String(UInt32.random(in: 0...UInt32.max), radix: 36)
            try TestPostgres.psql(url, "CREATE DATABASE \(name)")
            store = TestPostgres.url(url, database: name)
        } else {
            store = try TestPostgres.freshDatabase()
        }
        streak = "s" + String(UInt32.random(in: 0...UInt32.max), radix: 36)
    }

    func path(_ name: String) -> String { dir.appendingPathComponent(name).path }

    func file(_ name: String, _ text: String) throws -> String {
        try text.write(toFile: path(name), atomically: true, encoding: .utf8)
        return path(name)
    }

    /// `streakd ARGS --store …` as host `host`, started now; `env` adds to the environment
    /// (`STREAKD_NOW`, `FAKETIME`…). The host name is set inside the new namespace.
    func start(_ host: String, _ args: [String], env: [String: String] = [:]) throws -> Spawned {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/usr/bin/unshare")
        p.arguments =
            ["--uts", "/bin/sh", "-c", #"hostname "$0" && exec "$@""#, host, builtStreakd] + args + [
                "--store", store,
            ]
        p.environment = ["PATH": "/usr/bin:/bin", "LANG": "C.UTF-8", "HOME": dir.path].merging(env) { $1 }
        return try Spawned(p, stdin: nil)
    }

    func run(_ host: String, _ args: [String], env: [String: String] = [:]) throws -> Outcome {
        try start(host, args, env: env).wait()
    }

    /// A configuration with a hook that appends `STREAKD_KEY host pid started` to `hooks.log`
    /// (one O_APPEND write a line: the oracle of what was delivered; `started`: when the hook
    /// began, in nanoseconds of the realtime clock), after `pause` seconds.
    func hookConfig(pause: String = "0", timeout: Int = 10, lease: Int = 300, extra: String = "") throws -> String {
        let log = path("hooks.log")
        let script = #"t=$(date +%s%N); sleep \#(pause); echo "$STREAKD_KEY $(hostname) $PPID $t" >> '\#(log)'"#
        return try file(
            "hook.toml",
            // No badges: these tests count reminders (the badges' own are in StreakdCLITests).
            """
            badges = []

            [runs]
            lease_seconds = \(lease)
            \(extra)
            [[hooks]]
            name = "log"
            command = ["/bin/sh", "-c", \(jsonString(script))]
            timeout_seconds = \(timeout)
            """)
    }

    /// The hook log's lines: key, host, pid, and when the hook started (ns since 1970).
    func hookLines() throws -> [(key: String, host: String, pid: String, started: Int64)] {
        guard FileManager.default.fileExists(atPath: path("hooks.log")) else { return [] }
        return try String(contentsOfFile: path("hooks.log"), encoding: .utf8).split(separator: "\n").map { line in
            let f = line.split(separator: " ").map(String.init)
            return (f[0], f.count > 1 ? f[1] : "", f.count > 2 ? f[2] : "", f.count > 3 ? Int64(f[3]) ?? 0 : 0)
        }
    }

    /// Waits until the hook log holds `count` lines (60 s at most, else the run is killed and the
    /// test fails, saying what it waited for and what the run said).
    func waitForHooks(_ count: Int, of run: Spawned, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let deadline = ContinuousClock.now + .seconds(60)
        while try hookLines().count < count {
            let ended = !run.process.isRunning
            if ended, try hookLines().count >= count { return }
            guard !ended, ContinuousClock.now < deadline else {
                if !ended { kill(run.process.processIdentifier, SIGKILL) }
                let lines = try hookLines().count
                let outcome = run.wait()
                Issue.record(
                    "waited for \(count) lines in the hook log; \(lines) after 60 s or the run's end: \(outcome)",
                    sourceLocation: sourceLocation)
                throw HooksNeverRan()
            }
            usleep(10_000)
        }
    }

    /// The ledger's keys of notifications due after `after` (SQL through psql, apart from streakd).
    func ledgerKeys(dueAfter after: Int64 = 0) throws -> [String] {
        try TestPostgres.psql(store, "SELECT key FROM notifications WHERE due > \(after) ORDER BY key")
            .split(separator: "\n").map(String.init)
    }

    func sql(_ text: String) throws -> String { try TestPostgres.psql(store, text) }

    /// Users and a streak of `days` days for each, ending the day before `today`, with one
    /// check-in a day at local 10:00 (and today too when `checkedInToday`); `zones[i % zones.count]`
    /// is user i's zone. Imported as of `at`.
    func seed(
        users: Int, zones: [String], today: String, at: String, remindAt: String = "20:00", days: (Int) -> Int,
        checkedInToday: (Int) -> Bool = { _ in false }
    ) throws {
        var people = ""
        var rows = "user,at,tz,streak\n"
        let day = ISO8601DateFormatter()
        day.formatOptions = [.withFullDate]
        let start = day.date(from: today)!
        for i in 0..<users {
            let zone = zones[i % zones.count]
            people += #"{"user":"u\#(i)","tz":"\#(zone)","remind_at":"\#(remindAt)"}"# + "\n"
            let tz = TimeZone(identifier: zone)!
            var calendar = Calendar(identifier: .gregorian)
            calendar.timeZone = tz
            let local = calendar.dateComponents([.year, .month, .day], from: start)
            let streakDays = days(i)
            for back in (checkedInToday(i) ? 0 : 1)...streakDays {
                var c = local
                c.day! -= back
                c.hour = 10
                let at = calendar.date(from: c)!
                rows +=
                    "u\(i),\(ISO8601DateFormatter.string(from: at, timeZone: tz, formatOptions: [.withInternetDateTime])),\(zone),\(streak)\n"
            }
        }
        let u = try run("h0", ["user", "import", try file("users.jsonl", people)], env: ["STREAKD_NOW": at])
        #expect(u.code == 0, "\(u)")
        let c = try run("h0", ["import", try file("checkins.csv", rows)], env: ["STREAKD_NOW": at])
        #expect(c.code == 0, "\(c)")
    }
}

struct HooksNeverRan: Error {}

func jsonString(_ s: String) -> String {
    "\"" + s.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"") + "\""
}
