import Foundation
import StreakCore
import StreakDelivery
import StreakPostgres
import StreakSQLite
import StreakStore
import StreakTestKit
import Testing

@testable import StreakJobs

/// Issue 31 (11): what a run does with deliveries it did not record itself: a run on this host
/// whose lease ran out (stopped with SIGSTOP) is taken over as one on another host is; the
/// summary counts what other runs hold.
@Suite struct RetryTests {
    static let key = "at_risk/alice/daily/2026-11-21"

    /// The same rules on both stores.
    enum Engine: String, CaseIterable, CustomStringConvertible {
        case sqlite
        case postgres
        var description: String { rawValue }

        /// A fresh store and a context over it at 10:00 on 2026-11-21.
        func context(config: Config = Config()) throws -> (Context, Captured) {
            let store: any Store =
                switch self {
                case .sqlite: try SQLiteStore(path: NSTemporaryDirectory() + "retry-\(UUID().uuidString)/s.sqlite")
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

    /// alice's at_risk for 2026-11-21 as a run records it.
    static let atRisk = Notification(
        kind: .atRisk, user: "alice", streak: "daily", localDate: LocalDate(year: 2026, month: 11, day: 21)!,
        due: RFC3339.parse("2026-11-21T19:00:00Z")!, timezone: "Europe/Berlin",
        localDue: "2026-11-21T20:00:00+01:00", streakLength: 7,
        message: "Your 7-day streak is at risk! Check in today to keep it going. 1 freeze left.", title: "Streak at risk")

    /// Records alice's at_risk as owned by `owner`, registered with `lease` seconds (nil: not
    /// registered at all).
    func recordOwned(_ c: Context, by owner: String, lease: Int64?, sinks: [String] = ["hook:x"]) throws {
        try c.store.write { w in
            _ = try w.record(NewRecord(Self.atRisk, state: .sent, sinks: sinks), owner: owner, at: Self.atRisk.due)
            if let lease { try w.register(run: owner, host: RunOwner.hostName, lease: lease) }
        }
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
