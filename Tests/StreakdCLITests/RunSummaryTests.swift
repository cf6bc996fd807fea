import Foundation
import StreakTestKit
import Testing

/// The end of each `tick` and `refill` (SPEC §13): one journal entry with a MESSAGE_ID per job,
/// its counts and duration as fields; and `tick`'s progress on a terminal, none through a pipe.
@Suite("run summaries", .fastTier)
struct RunSummaryTests {
    static let tickID = "7c9d1c40f25f4d8b84265be8f775e415"
    static let refillID = "f0726304c77843a7a4489d8fdc317772"

    /// A user whose 7-day streak is at risk at 19:00Z; `config`: streakd.toml's text.
    func setUp(_ s: Sandbox, users: Int = 1, config: String = "badges = []\n") throws -> String {
        try Journal.ensureRunning()
        try s.file("config/streakd/streakd.toml", config)
        let tag = "r" + UUID().uuidString.prefix(8).lowercased()
        var lines: [String] = []
        for i in 0..<users {
            s.addUser("\(tag)-\(i)")
            lines += (14...20).map { checkinLine("2026-11-\($0)T18:00:00+01:00", user: "\(tag)-\(i)") }
        }
        try s.importLines(lines)
        // The store's identity: every entry carries it.
        return try #require(try jsonObject(s.run(["status", "-o", "json"]).out)["store_id"] as? String)
    }

    @Test func eachRunEndsWithItsSummaryEntry() throws {
        let s = try Sandbox()
        let store = try setUp(s)
        s.now = "2026-11-21T19:00:00Z"
        #expect(s.run(["tick"]).code == 0)
        #expect(s.run(["refill"]).code == 0)
        let tick = try #require(
            try Journal.entries(["MESSAGE_ID=\(Self.tickID)", "STREAKD_STORE=\(store)"], count: 1).first)
        let message = try #require(tick["MESSAGE"] as? String)
        #expect(message.hasPrefix("tick: 1 sent, 0 expired, 1 delivered, 0 failed, 0 dead, 0 pending, 0 held in "))
        #expect(message.hasSuffix(" s"))
        for (field, value) in [
            ("STREAKD_JOB", "tick"), ("STREAKD_SENT", "1"), ("STREAKD_EXPIRED", "0"), ("STREAKD_DELIVERED", "1"),
            ("STREAKD_FAILED", "0"), ("STREAKD_DEAD", "0"), ("STREAKD_PENDING", "0"), ("PRIORITY", "6"),
            ("SYSLOG_IDENTIFIER", "streakd"),
        ] {
            #expect(tick[field] as? String == value, "\(field): \(tick)")
        }
        #expect(Int(tick["STREAKD_DURATION_MS"] as? String ?? "") != nil, "\(tick)")
        let refill = try #require(
            try Journal.entries(["MESSAGE_ID=\(Self.refillID)", "STREAKD_STORE=\(store)"], count: 1).first)
        #expect(
            (refill["MESSAGE"] as? String)?.hasPrefix(
                "refill: 0 sent, 0 expired, 0 delivered, 0 failed, 0 dead, 0 pending, 0 refilled, 0 at_maximum, "
                    + "1 not_due, 0 held in ") == true, "\(refill)")
        #expect(refill["STREAKD_NOT_DUE"] as? String == "1")
        // A run left with deliveries pending says so at warning priority.
        let config = try s.file("down.toml", "badges = []\n\n[[hooks]]\nname = \"down\"\ncommand = [\"/bin/false\"]\n")
        s.now = "2026-11-22T19:00:00Z"
        #expect(s.run(["tick", "--config", config]).code == 75)
        let entries = try Journal.entries(["MESSAGE_ID=\(Self.tickID)", "STREAKD_STORE=\(store)"], count: 2)
        let last = try #require(entries.last)
        #expect(last["PRIORITY"] as? String == "4", "\(last)")
        #expect(last["STREAKD_PENDING"] as? String != "0" && last["STREAKD_FAILED"] as? String != "0", "\(last)")
    }

    /// On a terminal (`script` gives the run one), `tick` redraws a progress line while a slow
    /// hook delivers; through a pipe there is none.
    @Test(.requires(.program("/usr/bin/script", package: "bsdutils")))
    func tickShowsProgressOnATerminalOnly() throws {
        let s = try Sandbox()
        let hook = "badges = []\n\n[[hooks]]\nname = \"slow\"\ncommand = [\"/bin/sleep\", \"0.3\"]\n"
        _ = try setUp(s, users: 3, config: hook)
        s.now = "2026-11-21T19:00:00Z"
        let env = s.environment.merging(["PATH": "/usr/bin:/bin", "LANG": "C.UTF-8", "TERM": "xterm"]) { $1 }
        let quoted = ([streakdBinary, "tick", "--store", s.store]).map { "'" + $0 + "'" }.joined(separator: " ")
        let terminal = run(["/usr/bin/script", "-q", "-e", "-c", quoted + " >/dev/null", "/dev/null"], env: env)
        #expect(terminal.code == 0, "\(terminal)")
        // Three notifications, each to the journal and the hook.
        #expect(terminal.out.contains("\r\u{1B}[Ktick: delivering, "), "\(terminal)")
        #expect(terminal.out.contains(" of 6 done: "), "\(terminal)")
        // Cleared before the summary line.
        #expect(terminal.out.contains("\r\u{1B}[Ktick at 2026-11-21T19:00:00Z: 3 sent"), "\(terminal)")
        s.now = "2026-11-22T19:00:00Z"
        let piped = s.run(["tick"])
        #expect(piped.code == 0 && !piped.err.contains("\r") && !piped.err.contains("delivering"), "\(piped)")
    }
}
