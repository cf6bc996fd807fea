import Foundation
import StreakTestKit
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// `streakd metrics` and `[metrics] textfile` (SPEC §13): the text promtool and Python's
/// prometheus_client read, and the file node_exporter's textfile collector reads.
@Suite("metrics", .fastTier)
struct MetricsCLITests {
    /// prometheus_client from PyPI, in the virtual environment scripts/install-deps makes.
    static let python = packageRoot + "/.build/python/bin/python3"
    static let prometheusClient = Prerequisite(
        missing: run([python, "-c", "import prometheus_client"]).code == 0
            ? nil : "Python's prometheus_client in \(python) (scripts/install-deps installs it)")
    static let promtool = Prerequisite.program("/usr/bin/promtool", package: "prometheus")

    /// A store after a tick that sent an at_risk to the journal and a refill, at 19:00.
    func setUp(_ s: Sandbox, config: String = "badges = []\n") throws -> String {
        try Journal.ensureRunning()
        try s.file("config/streakd/streakd.toml", config)
        let id = "m" + UUID().uuidString.prefix(8).lowercased()
        s.addUser(id)
        try s.importLines((14...20).map { checkinLine("2026-11-\($0)T18:00:00+01:00", user: id) })
        s.now = "2026-11-21T19:00:00Z"
        #expect(s.run(["tick"]).code == 0)
        #expect(s.run(["refill"]).code == 0)
        return id
    }

    func metrics(_ s: Sandbox, _ extra: [String] = []) -> String {
        let r = s.run(["metrics"] + extra)
        #expect(r.code == 0 && r.err.isEmpty, "\(r)")
        return r.out
    }

    @Test func theStoresCountsAndLastRuns() throws {
        let s = try Sandbox()
        let id = try setUp(s)
        let text = metrics(s)
        for line in [
            "# TYPE streakd_notifications_total counter",
            #"streakd_notifications_total{kind="at_risk",outcome="sent"} 1"#,
            #"streakd_notifications_total{kind="streak_broken",outcome="expired"} 0"#,
            "# TYPE streakd_deliveries gauge",
            #"streakd_deliveries{sink="journal",state="delivered"} 1"#,
            #"streakd_deliveries{sink="journal",state="dead"} 0"#,
            "streakd_users 1", "streakd_streaks 1",
            "streakd_last_tick_success_timestamp_seconds 1795287600",
            "streakd_last_refill_success_timestamp_seconds 1795287600",
        ] {
            #expect(text.contains("\n" + line + "\n"), "no \(line) in:\n\(text)")
        }
        #expect(text.contains("\n# TYPE streakd_tick_duration_seconds gauge\nstreakd_tick_duration_seconds "))
        // A counter never goes down (Prometheus would read a reset): a user removed takes their
        // notifications from the ledger, not from the count; twice, the counts add up.
        let other = try setUp(s)
        #expect(metrics(s).contains(#"streakd_notifications_total{kind="at_risk",outcome="sent"} 2"#))
        #expect(s.run(["user", "remove", other]).code == 0)
        #expect(s.run(["user", "remove", id]).code == 0)
        let after = metrics(s)
        #expect(
            after.contains("\n" + #"streakd_notifications_total{kind="at_risk",outcome="sent"} 2"# + "\n"), "\(after)")
        #expect(after.contains("\nstreakd_users 0\n"), "\(after)")
        // Before any run: the timestamps are 0 (an alert on their age fires).
        let fresh = try Sandbox()
        fresh.addUser("u1")
        #expect(metrics(fresh).contains("\nstreakd_last_tick_success_timestamp_seconds 0\n"))
        // Every configured sink has its series from the start, a webhook as a hook.
        let sinks = try fresh.file(
            "sinks.toml",
            "[[webhooks]]\nname = \"phone\"\nformat = \"ntfy\"\nurl = \"http://127.0.0.1:9/t\"\n"
                + "[[hooks]]\nname = \"chat\"\ncommand = [\"/bin/true\"]\n")
        let configured = metrics(fresh, ["--config", sinks])
        for sink in ["webhook:phone", "hook:chat"] {
            #expect(
                configured.contains("\nstreakd_deliveries{sink=\"\(sink)\",state=\"pending\"} 0\n"), "\(configured)")
        }
        // A read-only command: a missing store is 66, and none is made.
        let missing = fresh.dir.appendingPathComponent("none/s.sqlite").path
        #expect(fresh.runBare(["metrics", "--store", missing]).code == 66)
        #expect(!FileManager.default.fileExists(atPath: missing))
    }

    /// `promtool check metrics` finds nothing to say (names, types, suffixes, units).
    @Test(.requires(promtool)) func promtoolFindsNothingToSay() throws {
        let s = try Sandbox()
        _ = try setUp(s, config: "badges = []\n\n[[hooks]]\nname = \"chat\"\ncommand = [\"/bin/true\"]\n")
        let text = metrics(s)
        let checked = run(["/usr/bin/promtool", "check", "metrics"], stdin: text)
        #expect(checked.code == 0 && checked.out.isEmpty && checked.err.isEmpty, "promtool: \(checked)\n\(text)")
    }

    /// Python's prometheus_client parses both formats into the families and samples streakd meant.
    @Test(.requires(prometheusClient), arguments: [false, true])
    func prometheusClientParsesIt(openMetrics: Bool) throws {
        let s = try Sandbox()
        _ = try setUp(s)
        let text = metrics(s, openMetrics ? ["--openmetrics"] : [])
        #expect(text.hasSuffix("# EOF\n") == openMetrics)
        let script = """
            import json, sys
            from prometheus_client.parser import text_string_to_metric_families as prometheus
            from prometheus_client.openmetrics.parser import text_string_to_metric_families as openmetrics
            parse = openmetrics if sys.argv[1] == "1" else prometheus
            print(json.dumps({f.name: [f.type, {s.name + json.dumps(s.labels, sort_keys=True): s.value
                for s in f.samples}] for f in parse(sys.stdin.read())}))
            """
        let parsed = run([Self.python, "-c", script, openMetrics ? "1" : "0"], stdin: text)
        try #require(parsed.code == 0, "prometheus_client: \(parsed)\n\(text)")
        let families = try jsonObject(parsed.out)
        #expect(
            Set(families.keys) == [
                "streakd_notifications", "streakd_deliveries", "streakd_users", "streakd_streaks",
                "streakd_last_tick_success_timestamp_seconds", "streakd_last_refill_success_timestamp_seconds",
                "streakd_tick_duration_seconds", "streakd_refill_duration_seconds",
            ], "\(families.keys.sorted())")
        let notifications = try #require(families["streakd_notifications"] as? [Any])
        #expect(notifications[0] as? String == "counter")
        let samples = try #require(notifications[1] as? [String: Double])
        #expect(samples[#"streakd_notifications_total{"kind": "at_risk", "outcome": "sent"}"#] == 1)
        let users = try #require(families["streakd_users"] as? [Any])
        #expect(users[0] as? String == "gauge")
        #expect((users[1] as? [String: Double])?["streakd_users{}"] == 1)
    }

    /// Each tick and refill writes the textfile: what `metrics` prints, mode 0644 whatever the umask.
    @Test func eachRunWritesTheTextfile() throws {
        let s = try Sandbox()
        let file = s.dir.appendingPathComponent("node-exporter/streakd.prom").path
        try FileManager.default.createDirectory(
            atPath: s.dir.appendingPathComponent("node-exporter").path, withIntermediateDirectories: true)
        _ = try setUp(s, config: "badges = []\n\n[metrics]\ntextfile = \"\(file)\"\n")
        #expect(try String(contentsOfFile: file, encoding: .utf8) == metrics(s))
        let mode = try FileManager.default.attributesOfItem(atPath: file)[.posixPermissions] as? Int
        #expect(mode == 0o644)
        #expect(
            try FileManager.default.contentsOfDirectory(atPath: s.dir.appendingPathComponent("node-exporter").path)
                == ["streakd.prom"], "no temporary file is left")
        // A dry run writes nothing; a run whose file cannot be written warns and keeps its status.
        try FileManager.default.removeItem(atPath: file)
        #expect(s.run(["tick", "--dry-run"]).code == 0)
        #expect(!FileManager.default.fileExists(atPath: file))
        try s.file(
            "config/streakd/streakd.toml", "badges = []\n\n[metrics]\ntextfile = \"/nonexistent/streakd.prom\"\n")
        let r = s.run(["tick"])
        #expect(r.code == 0)
        #expect(
            r.err.contains(
                "streakd: warning: [metrics] textfile /nonexistent/streakd.prom: not written: cannot create /nonexistent/.streakd.prom."
            ), "\(r)")
    }

    @Test func theTextfileIsAnAbsolutePath() throws {
        let s = try Sandbox()
        let config = try s.file("streakd.toml", "[metrics]\ntextfile = \"streakd.prom\"\n")
        let r = s.runBare(["config", "check", "--config", config])
        #expect(r.code == 78, "\(r)")
        #expect(r.err.contains("textfile"), "\(r)")
        #expect(r.err.contains("is not an absolute file path"), "\(r)")
        // A folder, with its slash or without (one that exists), is told to name the file in it.
        for folder in ["/var/lib/prometheus/node-exporter/", s.dir.path] {
            let named = try s.file("folder.toml", "[metrics]\ntextfile = \"\(folder)\"\n")
            let f = s.runBare(["config", "check", "--config", named])
            let file = (folder.hasSuffix("/") ? String(folder.dropLast()) : folder) + "/streakd.prom"
            #expect(
                f.code == 78 && f.err.contains(#""\#(folder)" is a folder; name the file in it, such as "\#(file)""#),
                "\(f)")
        }
        let good = try s.file("good.toml", "[metrics]\ntextfile = \"/var/lib/prometheus/node-exporter/streakd.prom\"\n")
        let ok = s.runBare(["config", "check", "--config", good])
        #expect(
            ok.code == 0 && ok.out.contains("[metrics]\ntextfile = \"/var/lib/prometheus/node-exporter/streakd.prom\""),
            "\(ok)")
    }
}
