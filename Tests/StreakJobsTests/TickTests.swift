import Foundation
import GRDB
import StreakCore
import StreakDelivery
import StreakStore
import StreakTestKit
import Testing

@testable import StreakJobs
@testable import StreakSQLite
@testable import StreakStore

/// `tick` with in-memory sinks over a real SQLite file.
@Suite(.fastTier) struct TickTests {
    /// alice (Berlin) checked in on the 7 days before 2026-11-21: 7 is in reminders.days.
    func sevenDays(_ context: Context, user: String = "alice", tz: String = "Europe/Berlin") throws {
        try context.addUser(id: user, tz: tz, remindAt: nil, remind: true)
        for d in 14...20 {
            try at(context, "2026-11-21T10:00:00Z").checkin(
                user: user, streak: "daily", at: "2026-11-\(d)T10:00:00Z", tz: nil, eventID: nil, meta: [])
        }
    }

    func keys(_ sink: MemorySink) -> [String] { sink.received.map(\.key) }

    @Test func anAtRiskIsSentOnceAtItsDueInstant() throws {
        let (c, out) = try makeContext(now: "2026-11-21T10:00:00Z")
        try sevenDays(c)
        let sink = MemorySink()
        let delivery = Delivery(sinks: [sink])
        try at(c, "2026-11-21T18:45:00Z").tick(delivery: delivery)
        #expect(sink.received.isEmpty)
        let r = try at(c, "2026-11-21T19:00:00Z").tick(delivery: delivery)
        #expect(r.sent == 1 && r.deliveries.delivered == 1 && r.pending == 0)
        #expect(keys(sink) == ["at_risk/alice/daily/2026-11-21"])
        let n = try #require(sink.received.first)
        #expect(n.due.description == "2026-11-21T19:00:00Z" && n.localDue == "2026-11-21T20:00:00+01:00")
        #expect(n.streakLength == 7)
        #expect(n.message == "Your 7-day streak is at risk! Check in today to keep it going. 1 freeze left.")
        #expect(out.out.last?.hasPrefix(#"{"kind":"at_risk","user":"alice""#) == true)
        #expect(out.out.last?.hasSuffix(#","state":"sent"}"#) == true)
        try at(c, "2026-11-21T19:15:00Z").tick(delivery: delivery)
        try at(c, "2026-11-21T19:00:00Z").tick(delivery: delivery)
        #expect(sink.received.count == 1)
        let states = try c.store.read { try $0.deliveryStates(key: "at_risk/alice/daily/2026-11-21") }
        #expect(states == ["memory": .delivered])
    }

    @Test func aUserWhoCheckedInGetsNothing() throws {
        let (c, _) = try makeContext(now: "2026-11-21T10:00:00Z")
        try sevenDays(c)
        let sink = MemorySink()
        try at(c, "2026-11-21T12:00:00Z").tick(delivery: Delivery(sinks: [sink]))
        try at(c, "2026-11-21T18:00:00Z").checkin(
            user: "alice", streak: "daily", at: nil, tz: nil, eventID: nil, meta: [])
        for t in ["19:00", "21:00", "23:00", "23:15"] {
            try at(c, "2026-11-21T\(t):00Z").tick(delivery: Delivery(sinks: [sink]))
        }
        #expect(sink.received.isEmpty)
    }

    /// SPEC §4 late runs: fresh until the date ends (or max_late), then recorded expired.
    @Test(
        arguments: [
            ("2026-11-21T22:50:00Z", nil, "sent"),  // 23:50 local: T has not ended
            ("2026-11-21T22:50:00Z", Int64(3600), "expired"),  // past max_late = 1h
            ("2026-11-21T19:59:00Z", Int64(3600), "sent"),
        ] as [(String, Int64?, String)])
    func lateAtRisk(now: String, maxLate: Int64?, state: String) throws {
        var config = Config()
        config.maxLate = maxLate
        let (c, out) = try makeContext(now: "2026-11-21T10:00:00Z", config: config)
        try sevenDays(c)
        try at(c, "2026-11-21T12:00:00Z").tick(delivery: Delivery(sinks: []))
        let sink = MemorySink()
        let r = try at(c, now).tick(delivery: Delivery(sinks: [sink]))
        #expect(out.out.last?.hasSuffix(#""key":"at_risk/alice/daily/2026-11-21","state":"\#(state)"}"#) == true)
        #expect(sink.received.count == (state == "sent" ? 1 : 0))
        #expect(r.sent + r.expired == 1)
    }

    /// SPEC §2: one tick after ten quiet days settles those days as quarter-hourly ticks would;
    /// only which notifications are sent rather than expired differs.
    @Test func oneLateTickRecordsWhatQuarterHourlyTicksSent() throws {
        func ledger(_ c: Context) throws -> [String: String] {
            try (c.store as! SQLiteStore).queue.read { db in
                try Dictionary(
                    uniqueKeysWithValues: Row.fetchAll(
                        db, sql: "SELECT key, state FROM notifications WHERE user_id = 'alice' AND streak = 'daily'"
                    ).map { ($0[0] as String, $0[1] as String) })
            }
        }
        let (often, _) = try makeContext(now: "2026-11-21T10:00:00Z")
        let (once, _) = try makeContext(now: "2026-11-21T10:00:00Z")
        for c in [often, once] {
            try sevenDays(c)
            try at(c, "2026-11-21T12:00:00Z").tick(delivery: Delivery(sinks: []))
        }
        var t = RFC3339.parse("2026-11-21T12:15:00Z")!
        let end = RFC3339.parse("2026-12-01T12:00:00Z")!
        while t <= end {
            try at(often, t.description).tick(delivery: Delivery(sinks: []))
            t = t + 900
        }
        try at(once, end.description).tick(delivery: Delivery(sinks: []))
        let a = try ledger(often)
        let b = try ledger(once)
        #expect(a.keys.sorted() == b.keys.sorted())
        #expect(
            a.keys.sorted() == [
                "at_risk/alice/daily/2026-11-21", "at_risk/alice/daily/2026-11-22",
                "freeze_used/alice/daily/2026-11-21",
                "streak_broken/alice/daily/2026-11-22",
            ])
        #expect(Set(a.values) == ["sent"])
        #expect(Set(b.values) == ["expired"])
    }

    @Test func failedDeliveriesAreRetriedWithBackOffThenDead() throws {
        let (c, out) = try makeContext(now: "2026-11-21T10:00:00Z")
        try sevenDays(c)
        let sink = MemorySink(name: "hook:x", outcomes: Array(repeating: .failed("exit status 1"), count: 9))
        let dead = DeadLetters()
        let delivery = Delivery(sinks: [sink], recordDead: { n, s, a, e in dead.add("\(n.key) \(s) \(a) \(e)") })
        var r = try at(c, "2026-11-21T19:00:00Z").tick(delivery: delivery)
        #expect(r.deliveries.failed == 1 && r.pending == 1)
        r = try at(c, "2026-11-21T19:00:30Z").tick(delivery: delivery)  // back-off: 1 minute
        #expect(r.deliveries.waiting == 1 && r.deliveries.retried == 0 && r.pending == 1)
        var attempts = 1
        for t in ["19:01:00", "19:06:00", "19:36:00", "21:36:00"] {
            r = try at(c, "2026-11-21T\(t)Z").tick(delivery: delivery)
            attempts += 1
            #expect(r.deliveries.retried == 1, "\(t)")
        }
        #expect(attempts == 5 && sink.received.count == 5)
        #expect(r.deliveries.dead == 1 && r.pending == 0)
        #expect(dead.items == ["at_risk/alice/daily/2026-11-21 hook:x 5 exit status 1"])
        #expect(out.err.contains { $0.contains("hook:x gave up on at_risk/alice/daily/2026-11-21 after 5 attempts") })
        r = try at(c, "2026-11-22T12:00:00Z").tick(delivery: delivery)
        #expect(sink.received.filter { $0.kind == .atRisk }.count == 5)
    }

    @Test func anUnavailableSinkIsAWarningAndExpired() throws {
        let (c, out) = try makeContext(now: "2026-11-21T10:00:00Z")
        try sevenDays(c)
        let desktop = MemorySink(name: "desktop", outcomes: [.unavailable("no session bus")])
        let journal = MemorySink(name: "journal")
        let r = try at(c, "2026-11-21T19:00:00Z").tick(delivery: Delivery(sinks: [journal, desktop]))
        #expect(r.pending == 0 && r.deliveries.unavailable == 1 && journal.received.count == 1)
        #expect(
            out.err.contains(
                "streakd: warning: desktop: no session bus; its notifications in this run are recorded expired, unsent"))
        let states = try c.store.read { try $0.deliveryStates(key: "at_risk/alice/daily/2026-11-21") }
        #expect(states == ["journal": .delivered, "desktop": .expired])
    }

    @Test func refillAddsAFreezeEveryThirtyDaysAndNotifiesWhenTheCountRose() throws {
        let (c, out) = try makeContext(now: "2026-11-21T10:00:00Z")
        try sevenDays(c)
        let sink = MemorySink()
        // Stored at 10:00 on the 21st: not due before 30 days (720 h) later.
        var r = try at(c, "2026-12-21T09:59:00Z").refill(delivery: Delivery(sinks: [sink]))
        #expect(r.refill.notDue == 1)
        // By then the freeze was used on the 21st and the streak broke on the 22nd.
        r = try at(c, "2026-12-21T10:00:00Z").refill(dryRun: true, delivery: Delivery(sinks: [sink]))
        #expect(r.refill.refilled == 1 && sink.received.isEmpty)
        r = try at(c, "2026-12-21T10:00:00Z").refill(delivery: Delivery(sinks: [sink]))
        #expect(r.refill.refilled == 1)
        #expect(keys(sink) == ["freeze_refilled/alice/daily/2026-12-21"])
        #expect(sink.received.first?.message == "You have a new freeze for your streak: 1 freeze left.")
        #expect(
            out.out.last?.contains(#""freezes_before":0,"freezes":1,"max":1,"next_refill":"2027-01-20T10:00:00Z""#)
                == true)
        r = try at(c, "2026-12-22T10:00:00Z").refill(delivery: Delivery(sinks: [sink]))
        #expect(r.refill.notDue == 1)
        r = try at(c, "2027-01-20T10:00:00Z").refill(delivery: Delivery(sinks: [sink]))
        #expect(r.refill.atMaximum == 1 && sink.received.count == 1)
    }
}

final class DeadLetters: @unchecked Sendable {
    private let lock = NSLock()
    private var list: [String] = []
    var items: [String] { lock.withLock { list } }
    func add(_ s: String) { lock.withLock { list.append(s) } }
}
