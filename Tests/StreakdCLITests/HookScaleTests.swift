import Foundation
import StreakTestKit
import Testing

/// Hooks with `concurrency` and `batch` (SPEC §12), as the built binary runs them.
@Suite("hooks at scale", .fastTier)
struct HookScaleTests {
    func setUp(_ s: Sandbox, users n: Int) throws -> [String] {
        try Journal.ensureRunning()
        let tag = String(UUID().uuidString.prefix(8)).lowercased()
        let ids = (0..<n).map { "h\(tag)-\($0)" }
        var lines: [String] = []
        for id in ids {
            s.addUser(id)
            lines += (14...20).map { checkinLine("2026-11-\($0)T18:00:00+01:00", user: id) }
        }
        try s.importLines(lines)
        return ids
    }

    func hook(_ s: Sandbox, _ script: String, _ settings: String) throws -> String {
        let quoted = script.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"")
        return try s.file(
            "streakd.toml",
            "badges = []\n\n[[hooks]]\nname = \"log\"\ncommand = [\"/bin/sh\", \"-c\", \"\(quoted)\"]\n\(settings)\n")
    }

    /// Eight 1-second hooks with `concurrency = 8` take about one second, not eight.
    @Test func eightSlowHooksAtOnce() throws {
        let s = try Sandbox()
        let ids = try setUp(s, users: 8)
        let runs = s.dir.appendingPathComponent("runs").path
        let config = try hook(s, "sleep 1; echo \"$STREAKD_KEY\" >> '\(runs)'", "concurrency = 8")
        s.now = "2026-11-21T19:00:00Z"
        let start = ContinuousClock.now
        let r = s.run(["tick", "--config", config])
        let took = ContinuousClock.now - start
        #expect(r.code == 0, "\(r)")
        #expect(took < .seconds(4), "eight 1-second hooks took \(took)")
        let keys = try String(contentsOfFile: runs, encoding: .utf8).split(separator: "\n").map(String.init)
        #expect(keys.sorted() == ids.map { "at_risk/\($0)/daily/2026-11-21" }.sorted())
    }

    /// A batch hook that leaves one key unprinted: that key is tried again, the others are
    /// delivered once.
    @Test func aKeyABatchHookDidNotPrintIsTriedAgain() throws {
        let s = try Sandbox()
        let ids = try setUp(s, users: 5)
        let seen = s.dir.appendingPathComponent("seen").path
        let skip = s.dir.appendingPathComponent("skip").path
        try s.file("skip", "")
        let script = """
            n=0; while IFS= read -r line; do n=$((n+1)); key=$(printf '%s' "$line" | sed 's/.*"key":"\\([^"]*\\)".*/\\1/'); \
            echo "$key" >> '\(seen)'; case "$key" in *-0/*) [ -e '\(skip)' ] || echo "$key" ;; *) echo "$key" ;; esac; \
            done; echo "batch of $n ($STREAKD_BATCH)" >&2
            """
        let config = try hook(s, script, "batch = 10")
        s.now = "2026-11-21T19:00:00Z"
        var r = s.run(["tick", "--config", config])
        #expect(r.code == 75, "\(r)")
        #expect(r.err.contains("9 delivered, 1 failed"), "\(r.err)")
        #expect(r.err.contains("without printing this key") && r.err.contains("batch of 5 (5)"), "\(r.err)")
        try FileManager.default.removeItem(atPath: skip)
        s.now = "2026-11-21T19:01:00Z"
        r = s.run(["tick", "--config", config])
        #expect(r.code == 0, "\(r)")
        #expect(r.err.contains("1 delivered, 0 failed"), "\(r.err)")
        let keys = try String(contentsOfFile: seen, encoding: .utf8).split(separator: "\n").map(String.init)
        let all = ids.map { "at_risk/\($0)/daily/2026-11-21" }
        #expect(keys.count == 6 && Set(keys) == Set(all))
        #expect(keys.filter { $0 == all[0] }.count == 2)
    }
}
