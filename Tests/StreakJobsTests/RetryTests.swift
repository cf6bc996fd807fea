import Foundation
import StreakCore
import StreakDelivery
import StreakPostgres
import StreakSQLite
import StreakStore
import StreakTestKit
import Testing

@testable import StreakJobs

/// Issue 31 (3, 11): what a run does with deliveries it did not record itself. Every retry asks
/// SPEC §4 again before a sink sees it; a run on this host whose lease ran out (stopped with
/// SIGSTOP) is taken over as one on another host is; the summary counts what other runs hold.
@Suite(.fastTier) struct RetryTests {
    static let key = "at_risk/alice/daily/2026-11-21"

    /// The same rules on both stores.
    enum Engine: String, CaseIterable, CustomStringConvertible {
        case sqlite
        case postgres
        var description: String { rawValue }

        /// A fresh store and a context over it at 10:00 on 2026-11-21.
        func context(config: Config = Config()) throws -> (Context, Captured) {
            if self == .postgres { try Prerequisite.postgres.require() }
            let store: any Store =
                switch self {
                case .sqlite: try SQLiteStore(path: TestFiles.path("retry") + "/s.sqlite")
                case .postgres: try PostgresStore(url: try TestPostgres.freshDatabase())
                }
            return try makeContext(now: "2026-11-21T10:00:00Z", config: config, store: store)
        }
    }

    /// alice (Berlin) checked in on the 7 days before 2026-11-21: at risk at 20:00 local (19:00Z).
    func sevenDays(_ context: Context) throws {
        try context.addUser(id: "alice", tz: "Europe/Berlin", remindAt: nil, remind: true)
        for d in 14...20 {
            try at(context, "2026-11-21T10:00:00Z").checkin(
                user: "alice", streak: "daily", at: "2026-11-\(d)T10:00:00Z", tz: nil, eventID: nil, meta: [])
        }
    }

    func checkIn(_ c: Context, at instant: String) throws {
        try at(c, instant).checkin(user: "alice", streak: "daily", at: nil, tz: nil, eventID: nil, meta: [])
    }

    func states(_ c: Context, _ key: String = key) throws -> [String: DeliveryState] {
        try c.store.read { try $0.deliveryStates(key: key) }
    }

    /// The ledger's error of one delivery.
    func error(_ c: Context, _ key: String = key, sink: String = "hook:x") throws -> String? {
        try c.store.read { r in
            try r.deliveries(.expired, limit: 100).first { $0.notification.key == key && $0.sink == sink }?.lastError
        }
    }

    /// alice's at_risk for 2026-11-21 as a run records it.
    static let atRisk = Notification(
        kind: .atRisk, user: "alice", streak: "daily", localDate: LocalDate(year: 2026, month: 11, day: 21)!,
        due: RFC3339.parse("2026-11-21T19:00:00Z")!, timezone: "Europe/Berlin",
        localDue: "2026-11-21T20:00:00+01:00", streakLength: 7,
        message: "Your 7-day streak is at risk! Check in today to keep it going. 1 freeze left.",
        title: "Streak at risk")

    /// Records alice's at_risk as owned by `owner`, registered with `lease` seconds (nil: not
    /// registered at all).
    func recordOwned(_ c: Context, by owner: String, lease: Int64?, sinks: [String] = ["hook:x"]) throws {
        try c.store.write { w in
            _ = try w.record(NewRecord(Self.atRisk, state: .sent, sinks: sinks), owner: owner, at: Self.atRisk.due)
            if let lease { try w.register(run: owner, host: RunOwner.hostName, lease: lease) }
        }
    }

    // MARK: - Asking §4 again (item 3)

    /// The report's case: the hook failed at 19:00, the user checked in at 19:30; the retry at
    /// 19:31 is not sent (it was, before).
    @Test(arguments: Engine.allCases) func aRetryAfterACheckInIsExpiredNotSent(engine: Engine) throws {
        let (c, out) = try engine.context()
        try sevenDays(c)
        let hook = MemorySink(name: "hook:x", outcomes: [.failed("exit 1")])
        let delivery = Delivery(sinks: [hook])
        var r = try at(c, "2026-11-21T19:00:00Z").tick(delivery: delivery)
        #expect(r.deliveries.failed == 1 && r.pending == 1)
        try checkIn(c, at: "2026-11-21T19:30:00Z")
        r = try at(c, "2026-11-21T19:31:00Z").tick(delivery: delivery)
        #expect(hook.received.count == 1, "the retry reached the hook after the check-in")
        #expect(r.deliveries.retried == 1 && r.deliveries.stale == 1 && r.deliveries.delivered == 0)
        #expect(r.pending == 0)
        #expect(try states(c) == ["hook:x": .expired])
        #expect(try error(c) == "checked in since: 2026-11-21 qualifies")
        #expect(
            out.err.contains(
                "expired hook:x \(Self.key) without another try: checked in since: 2026-11-21 qualifies"), "\(out.err)")
        #expect(out.err.last?.contains("1 retried") == true, "\(out.err)")
    }

    /// A hook that kept failing got the at_risk hours after its date ended; now the retry after
    /// the date's end is expired. The day end's own notification goes out as usual.
    @Test(arguments: Engine.allCases) func aRetryAfterItsDateEndedIsExpiredNotSent(engine: Engine) throws {
        let (c, _) = try engine.context()
        try sevenDays(c)
        let hook = MemorySink(name: "hook:x", outcomes: [.failed("exit 1"), .failed("exit 1")])
        let delivery = Delivery(sinks: [hook])
        try at(c, "2026-11-21T19:00:00Z").tick(delivery: delivery)
        try at(c, "2026-11-21T19:01:00Z").tick(delivery: delivery)
        // 2026-11-21 ended at 23:00Z (midnight in Berlin); the next try is due from 19:06.
        let r = try at(c, "2026-11-22T02:00:00Z").tick(delivery: delivery)
        #expect(hook.received.filter { $0.kind == .atRisk }.count == 2, "sent after its date ended")
        #expect(hook.received.filter { $0.kind == .freezeUsed }.count == 1)
        #expect(r.deliveries.stale == 1)
        #expect(try states(c) == ["hook:x": .expired])
        #expect(try error(c) == "no longer fresh: 2026-11-21 has ended")
    }

    /// With `reminders.max_late`, a retry is fresh only that long after the reminder's due instant.
    @Test(arguments: Engine.allCases) func aRetryPastMaxLateIsExpired(engine: Engine) throws {
        var config = Config()
        config.maxLate = 3600
        let (c, _) = try engine.context(config: config)
        try sevenDays(c)
        let hook = MemorySink(name: "hook:x", outcomes: [.failed("exit 1")])
        try at(c, "2026-11-21T19:00:00Z").tick(delivery: Delivery(sinks: [hook]))
        let r = try at(c, "2026-11-21T20:01:00Z").tick(delivery: Delivery(sinks: [hook]))
        #expect(hook.received.count == 1 && r.deliveries.stale == 1)
        #expect(
            try error(c)
                == "no longer fresh: more than reminders.max_late (1h) after its due instant (2026-11-21T19:00:00Z)")
    }

    /// A freeze_used is fresh for 24 hours after the missed date ended, retries too.
    @Test(arguments: Engine.allCases) func aSettlementRetriedAfterADayIsExpired(engine: Engine) throws {
        let (c, _) = try engine.context()
        try sevenDays(c)
        try at(c, "2026-11-21T19:00:00Z").tick(delivery: Delivery(sinks: []))
        let hook = MemorySink(name: "hook:x", outcomes: [.failed("exit 1")])
        try at(c, "2026-11-21T23:00:00Z").tick(delivery: Delivery(sinks: [hook]))
        let key = "freeze_used/alice/daily/2026-11-21"
        #expect(hook.received.map(\.key) == [key])
        let r = try at(c, "2026-11-22T23:00:01Z").tick(delivery: Delivery(sinks: [hook]))
        #expect(hook.received.filter { $0.key == key }.count == 1, "sent more than 24 h after the date ended")
        #expect(r.deliveries.stale == 1)
        #expect(try error(c, key) == "no longer fresh: more than 24 h after 2026-11-21 ended (2026-11-21T23:00:00Z)")
    }

    /// A delivery taken over from a run that is gone is a retry too: asked again before it goes.
    @Test(arguments: Engine.allCases) func aDeliveryTakenOverFromADeadRunIsAskedAgain(engine: Engine) throws {
        let (c, _) = try engine.context()
        try sevenDays(c)
        // A run on this host whose process has ended (no such pid), killed before it delivered.
        let dead = "\(RunOwner.hostName):4194000:1:1795287600"
        #expect(RunOwner.isGone(dead))
        try recordOwned(c, by: dead, lease: 3600)
        try checkIn(c, at: "2026-11-21T19:02:00Z")
        let hook = MemorySink(name: "hook:x")
        let r = try at(c, "2026-11-21T19:03:00Z").tick(delivery: Delivery(sinks: [hook]))
        #expect(r.deliveries.retried == 1 && r.deliveries.stale == 1)
        #expect(hook.received.isEmpty, "taken over and sent after the check-in")
        #expect(try states(c) == ["hook:x": .expired])
    }

    /// Still fresh and not done: the retry goes out as before.
    @Test(arguments: Engine.allCases) func aRetryStillDueIsDelivered(engine: Engine) throws {
        let (c, _) = try engine.context()
        try sevenDays(c)
        let hook = MemorySink(name: "hook:x", outcomes: [.failed("exit 1")])
        try at(c, "2026-11-21T19:00:00Z").tick(delivery: Delivery(sinks: [hook]))
        let r = try at(c, "2026-11-21T22:59:00Z").tick(delivery: Delivery(sinks: [hook]))
        #expect(hook.received.map(\.key) == [Self.key, Self.key])
        #expect(r.deliveries.delivered == 1 && r.deliveries.stale == 0)
        #expect(try states(c) == ["hook:x": .delivered])
    }

    // MARK: - Leases on this host (item 11)

    /// A run on this host that is alive but stopped (SIGSTOP) past its lease: its deliveries are
    /// taken over by the lease, as a run's on another host are. Before, a live process here was
    /// never taken over, whatever its lease.
    @Test(arguments: Engine.allCases) func aLiveRunHereWhoseLeaseRanOutIsTakenOver(engine: Engine) throws {
        let (c, _) = try engine.context()
        try sevenDays(c)
        // This very process's token: alive here, as a stopped streakd's is.
        let stopped = RunOwner.token(now: Self.atRisk.due)
        #expect(!RunOwner.isGone(stopped))
        try recordOwned(c, by: stopped, lease: 0)
        let hook = MemorySink(name: "hook:x")
        let r = try at(c, "2026-11-21T19:10:00Z").tick(delivery: Delivery(sinks: [hook]))
        #expect(hook.received.map(\.key) == [Self.key])
        #expect(r.deliveries.retried == 1 && r.pending == 0 && r.held == 0)
    }

    /// While its lease holds, it is that run's; the summary says it is pending, held by another
    /// run (it said "0 pending"), and the run does not end 75 for it.
    @Test(arguments: Engine.allCases) func aDeliveryAnotherRunHoldsIsCountedAsHeld(engine: Engine) throws {
        let (c, out) = try engine.context()
        try sevenDays(c)
        try recordOwned(c, by: RunOwner.token(now: Self.atRisk.due), lease: 3600)
        let hook = MemorySink(name: "hook:x")
        let r = try at(c, "2026-11-21T19:10:00Z").tick(delivery: Delivery(sinks: [hook]))
        #expect(hook.received.isEmpty)
        #expect(r.deliveries.retried == 0 && r.pending == 1 && r.held == 1)
        let summary = try #require(out.err.last)
        #expect(
            summary.contains(
                "; 1 pending, all of them held by another run (taken over once it has ended or its lease has run out)"),
            "\(summary)")
    }
}
