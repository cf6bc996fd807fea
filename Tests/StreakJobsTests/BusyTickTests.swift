import Foundation
import StreakCore
import StreakDelivery
import StreakSQLite
import StreakStore
import StreakTestKit
import Testing

@testable import StreakJobs

/// A quarter hour with more due streaks than one transaction plans: with every sink always at
/// once, each transaction's notifications go out on a second thread while the next is recorded.
@Suite(.fastTier) struct BusyTickTests {
    static let users = TickRun.overlapBatch * 2 + 500

    /// `users` users in UTC, each with a week of daily check-ins up to 2026-11-20.
    static func seed(_ c: Context) throws {
        let t0 = RFC3339.parse("2026-11-21T10:00:00Z")!
        try c.store.write { w in
            for u in 0..<Self.users { _ = try w.addUser(User(id: "u\(u)", zone: "UTC"), at: t0) }
            let days = (14...20).map { RFC3339.parse("2026-11-\($0)T10:00:00Z")! }
            _ = try w.insertCheckins(
                (0..<Self.users).flatMap { u in
                    days.map { NewCheckin(user: "u\(u)", streak: "daily", instant: $0, zone: "UTC") }
                }, storedAt: t0)
        }
    }

    @Test func eachReminderIsSentOnceAndMarkedDelivered() throws {
        let (c, out) = try makeContext(now: "2026-11-21T10:00:00Z")
        try Self.seed(c)
        let sink = MemorySink()
        try at(c, "2026-11-21T12:00:00Z").tick(delivery: Delivery(sinks: [sink]))
        #expect(sink.received.isEmpty)
        #expect(sink.alwaysAtOnce && Dispatcher.besideRecording(Delivery(sinks: [sink])))
        // (The first run recorded the week's badges, expired: a transaction's lines, one entry.)
        let before = out.out.count
        let r = try at(c, "2026-11-21T20:00:00Z").tick(delivery: Delivery(sinks: [sink]))
        #expect(r.streaks == Self.users && r.sent == Self.users && r.deliveries.delivered == Self.users)
        #expect(r.pending == 0)
        #expect(Set(sink.received.map(\.key)).count == Self.users && sink.received.count == Self.users)
        #expect(try c.store.read { try $0.pendingDeliveries() }.isEmpty)
        // A transaction's lines are written at once: one entry each (1,024 streaks, 4,096, 3,572).
        let lines = out.out.dropFirst(before).flatMap { $0.split(separator: "\n") }
        #expect(out.out.count - before == 3 && lines.filter { $0.hasSuffix(#","state":"sent"}"#) }.count == Self.users)
        let last = "at_risk/u\(Self.users - 1)/daily/2026-11-21"
        #expect(try c.store.read { try $0.deliveryStates(key: last) } == ["memory": .delivered])
    }

    /// Planned ahead on what was committed, recorded later: a check-in in between, from another
    /// process (a new version), means no reminder and no planned run; the streak stays due.
    @Test func aStreakThatChangedAfterItWasPlannedGetsNoReminder() throws {
        let (c, _) = try makeContext(now: "2026-11-21T10:00:00Z")
        try c.addUser(id: "alice", tz: "UTC", remindAt: nil, remind: true)
        for d in 14...20 {
            try c.checkin(user: "alice", streak: "daily", at: "2026-11-\(d)T10:00:00Z", tz: nil, eventID: nil, meta: [])
        }
        try at(c, "2026-11-21T12:00:00Z").tick(delivery: Delivery(sinks: []))
        let run = at(c, "2026-11-21T20:00:00Z")
        let due = try c.store.read { try $0.dueStreaks(through: run.now) }
        let planned = try c.store.readBeside { try run.plan(due, $0, checkLedger: false) }
        #expect(planned.notices.map(\.0.key) == ["at_risk/alice/daily/2026-11-21"])
        let (other, _) = try makeContext(
            now: "2026-11-21T19:59:00Z", store: try SQLiteStore(path: (c.store as! SQLiteStore).path))
        try other.checkin(user: "alice", streak: "daily", at: nil, tz: nil, eventID: nil, meta: [])
        let tick = TickRun(context: run, delivery: Delivery(sinks: [MemorySink()]), due: due)
        #expect(
            try c.store.write { w in
                try tick.record(
                    planned, claimed: try w.claim(planned.runs.map(\.streak), listed: due.mark, now: run.now), w)
            }.isEmpty)
        #expect(try c.store.read { try $0.ledgerStates(keys: ["at_risk/alice/daily/2026-11-21"]) }.isEmpty)
        #expect(try c.store.read { try $0.dueStreaks(through: run.now) }.map(\.user) == ["alice"])
    }

    @Test func aPacedJournalIsDeliveredOnTheRunsOwnThread() {
        let paced = JournalSink(pacer: JournalPacer(burst: 9_500, interval: .seconds(30)))
        let unpaced = JournalSink(pacer: JournalPacer(burst: 0, interval: .seconds(30)))
        #expect(!paced.alwaysAtOnce && unpaced.alwaysAtOnce)
        #expect(!HookSink(command: HookCommand(name: "x", argv: ["/bin/true"])).alwaysAtOnce)
        #expect(!Dispatcher.besideRecording(Delivery(sinks: [unpaced, paced])))
    }

    /// A sink with deliveries in flight (a webhook's `concurrency`, a batch hook) beside an
    /// instant one: delivered beside the recording, its outcomes committed by its own lane.
    @Test func aWideSinkIsDeliveredBesideRecording() throws {
        let (c, _) = try makeContext(now: "2026-11-21T10:00:00Z")
        try Self.seed(c)
        let (instant, wide) = (MemorySink(), WideSink())
        try at(c, "2026-11-21T12:00:00Z").tick(delivery: Delivery(sinks: [instant, wide]))
        #expect(Dispatcher.besideRecording(Delivery(sinks: [instant, wide])))
        let r = try at(c, "2026-11-21T20:00:00Z").tick(delivery: Delivery(sinks: [instant, wide]))
        #expect(r.sent == Self.users && r.deliveries.delivered == 2 * Self.users && r.pending == 0)
        #expect(Set(wide.inner.received.map(\.key)).count == Self.users && wide.inner.received.count == Self.users)
        #expect(try c.store.read { try $0.pendingDeliveries() }.isEmpty)
        let last = "at_risk/u\(Self.users - 1)/daily/2026-11-21"
        #expect(try c.store.read { try $0.deliveryStates(key: last) } == ["memory": .delivered, "wide": .delivered])
    }
}

/// A sink with four deliveries of eight notifications in flight, each on a thread of its own.
final class WideSink: Sink, Sendable {
    let inner = MemorySink(name: "wide")
    var name: String { inner.name }
    var width: Int { 4 }
    var batch: Int { 8 }
    func deliver(_ notification: StreakCore.Notification) -> DeliveryOutcome { inner.deliver(notification) }
}
