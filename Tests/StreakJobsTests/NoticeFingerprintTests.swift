import StreakCore
import StreakDelivery
import StreakTestKit
import Testing

@testable import StreakJobs

/// Where notifications go and how fast is not what decides them: a webhook added, or the journal's
/// pacing turned off (the shipped units), does not make the next tick look at every streak again
/// (at a million users that took a busy tick from seconds to three minutes).
@Suite(.fastTier) struct NoticeFingerprintTests {
    func fingerprint(_ config: Config) throws -> String {
        try makeContext(now: "2026-11-21T10:00:00Z", config: config).0.noticeFingerprint
    }

    @Test func sinksAndPacingLeaveItAsItWas() throws {
        var config = Config()
        let before = try fingerprint(config)
        config.webhooks = [WebhookTarget(name: "w", url: "http://127.0.0.1:9/", secret: Array("0123456789abcdef".utf8))]
        config.hooks = [HookCommand(name: "h", argv: ["/bin/true"], concurrency: 2, batch: 100)]
        config.journalBurst = 0
        #expect(try fingerprint(config) == before)
        config.reminderDays = [3]
        #expect(try fingerprint(config) != before)
    }

    @Test func aTickAfterAWebhookIsAddedLooksAtTheDueStreaksOnly() throws {
        let (c, _) = try makeContext(now: "2026-11-21T10:00:00Z")
        for user in ["alice", "bob"] {
            try c.addUser(id: user, tz: "Europe/Berlin", remindAt: nil, remind: true)
            try at(c, "2026-11-21T10:00:00Z").checkin(
                user: user, streak: "daily", at: "2026-11-20T10:00:00Z", tz: nil, eventID: nil, meta: [])
        }
        try at(c, "2026-11-21T12:00:00Z").tick(delivery: Delivery(sinks: [MemorySink()]))
        var config = c.config
        config.webhooks = [WebhookTarget(name: "w", url: "http://127.0.0.1:9/", secret: Array("0123456789abcdef".utf8))]
        let changed = Context(store: c.store, config: config, now: c.now, zones: c.zones, printer: c.printer)
        let r = try at(changed, "2026-11-21T12:15:00Z").tick(delivery: Delivery(sinks: [MemorySink()]))
        #expect(r.streaks == 0)
    }
}
