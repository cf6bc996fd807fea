import Foundation
import StreakTestKit
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// Issue 33's kill -9 campaign: `tick` with a webhook (to scripts/webhook-receiver) and a batch
/// hook, killed at random moments, then run to the end. Nothing may be lost; a key may reach a
/// sink twice only when its first delivery came from a run that was killed (in flight, or
/// delivered and not yet recorded), and a webhook's repeat carries the same `webhook-id`. The
/// counts are in the expectations' messages.
@Suite(
    "fault campaign: webhooks", .systemTier("kill -9 at random moments of ticks with a webhook and a batch hook"),
    .timeLimit(TestTier.systemLimit))
struct FaultCampaignWebhookTests {
    static let seed: UInt64 = 33
    static let kills = 6
    static let due = 200

    @Test func killNineWithAWebhookAndABatchHookLosesNothing() throws {
        try Journal.ensureRunning()
        let s = try Sandbox()
        let streak = "wh_" + String(UUID().uuidString.prefix(8)).lowercased()
        try FaultCampaignTests().dueUsers(s, Self.due, streak: streak)
        let receiver = try WebhookReceiver(in: s)
        try receiver.plan(#"{"status": 200, "delay": 0.02}"#)
        let oracle = s.dir.path + "/oracle"
        let hook = try s.file(
            "batch.sh",
            """
            #!/bin/sh
            while IFS= read -r line; do
                key=$(printf '%s' "$line" | sed 's/.*"key":"\\([^"]*\\)".*/\\1/')
                echo "$key ${STREAKD_HOOK_RUN%%.*}" >> '\(oracle)'
                echo "$key"
                sleep 0.01
            done
            """)
        chmod(hook, 0o755)
        let config = try s.file(
            "streakd.toml",
            """
            badges = []

            [[webhooks]]
            name = "phone"
            url = "\(receiver.url())"
            secret = "\(WebhookReceiver.secret)"
            concurrency = 4

            [[hooks]]
            name = "batch"
            command = ["\(hook)"]
            batch = 10
            concurrency = 2

            """)
        s.now = "2026-11-21T20:00:00Z"
        var random = SplitMix64(state: Self.seed)
        // Each killed run: its pid and when it ran (the receiver's clock: the epoch's seconds).
        var killed: [(pid: Int32, from: Double, to: Double)] = []
        for _ in 0..<Self.kills {
            let delay = Double.random(in: 0.1...1.5, using: &random)
            let from = Date().timeIntervalSince1970
            let child = try s.spawn(["tick", "--config", config])
            usleep(UInt32(delay * 1_000_000))
            kill(child.process.processIdentifier, SIGKILL)
            _ = child.wait()
            killed.append((child.process.processIdentifier, from, Date().timeIntervalSince1970))
        }
        // Then runs to the end (a killed run's deliveries are taken over at once on its host).
        var last = s.run(["tick", "--config", config])
        for _ in 0..<3 where last.code != 0 { last = s.run(["tick", "--config", config]) }
        #expect(last.code == 0, "\(last.err.suffix(800))")
        usleep(300_000)

        let keys = Set((0..<Self.due).map { "at_risk/u\($0)/\(streak)/2026-11-21" })
        // The webhook: every key with a valid signature; a repeat's first copy from a killed run.
        let requests = try receiver.requests()
        let invalid = requests.filter { $0["valid"] as? Bool != true }
        #expect(invalid.isEmpty, "\(invalid.count) without a valid signature: \(invalid.prefix(2))")
        let byKey = Dictionary(grouping: requests) { $0["id"] as? String ?? "" }
        let lostWebhook = keys.subtracting(byKey.keys)
        var webhookRepeats = 0
        var unexplained: [String] = []
        for (key, copies) in byKey where copies.count > 1 {
            webhookRepeats += copies.count - 1
            let times = copies.compactMap { $0["at"] as? Double }.sorted()
            let fromKilled = times.dropLast().filter { t in killed.contains { $0.from <= t && t <= $0.to } }
            if fromKilled.count < copies.count - 1 { unexplained.append(key) }
        }
        #expect(lostWebhook.isEmpty, "webhook lost \(lostWebhook.count): \(lostWebhook.sorted().prefix(5))")
        #expect(
            unexplained.isEmpty,
            "webhook: \(webhookRepeats) repeats after \(Self.kills) kills; not from a killed run: \(unexplained.prefix(5))"
        )
        // The batch hook: every key printed; a repeat's first run started by a killed streakd.
        let lines = ((try? String(contentsOfFile: oracle, encoding: .utf8)) ?? "").split(separator: "\n")
        var hookRuns: [String: [String]] = [:]
        for line in lines {
            let parts = line.split(separator: " ").map(String.init)
            if parts.count == 2 { hookRuns[parts[0], default: []].append(parts[1]) }
        }
        let killedPIDs = Set(killed.map { String($0.pid) })
        let lostHook = keys.subtracting(hookRuns.keys)
        var hookRepeats = 0
        var hookUnexplained: [String] = []
        for (key, parents) in hookRuns where parents.count > 1 {
            hookRepeats += parents.count - 1
            if min(parents.filter(killedPIDs.contains).count, parents.count - 1) < parents.count - 1 {
                hookUnexplained.append(key)
            }
        }
        #expect(lostHook.isEmpty, "batch hook lost \(lostHook.count): \(lostHook.sorted().prefix(5))")
        #expect(
            hookUnexplained.isEmpty,
            "batch hook: \(hookRepeats) repeats after \(Self.kills) kills; not from a killed run: \(hookUnexplained.prefix(5))"
        )
        print(
            "kill -9 campaign (issue 33): \(Self.kills) kills, \(Self.due) keys; webhook \(requests.count) requests, "
                + "\(webhookRepeats) repeats; batch hook \(lines.count) runs of a key, \(hookRepeats) repeats; 0 lost")
    }
}
