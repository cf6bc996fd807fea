import Foundation
import GRDB
import StreakCore
import StreakDelivery
import StreakStore
import StreakTestKit
import Synchronization
import Testing

@testable import StreakJobs
@testable import StreakSQLite

/// Issue 17: what a run tells and keeps when a sink fails or the store is busy.
@Suite(.fastTier) struct DeliveryFaultTests {
    func due(_ context: Context, users: Int) throws {
        for u in 0..<users {
            try context.addUser(id: "u\(u)", tz: "UTC", remindAt: nil, remind: true)
            for d in 14...20 {
                try at(context, "2026-11-21T10:00:00Z").checkin(
                    user: "u\(u)", streak: "daily", at: "2026-11-\(d)T10:00:00Z", tz: nil, eventID: nil, meta: [])
            }
        }
    }

    @Test func aMissingJournalIsToldWithItsReason() throws {
        let (c, out) = try makeContext(now: "2026-11-21T10:00:00Z", format: .short)
        try due(c, users: 3)
        let journal = JournalSink(socketPath: "/nonexistent/journal/socket")
        let report = try at(c, "2026-11-21T20:00:00Z").tick(delivery: Delivery(sinks: [journal]))
        #expect(report.deliveries.failed == 3 && report.pending == 3)
        // Each failure says why, with the key and when the next try comes.
        let failures = out.err.filter { $0.hasPrefix("failed journal") }
        #expect(failures.count == 3)
        #expect(
            failures.allSatisfy {
                $0.hasPrefix(
                    "failed journal (no journal socket at /nonexistent/journal/socket): No such file or directory [at_risk/u"
                )
            }, "\(failures)")
    }

    /// A sink whose delivery takes another connection's write lock and keeps it for `hold`: the
    /// outcome's write then finds the store busy past its (short) wait.
    final class LockingSink: Sink {
        let name = "locking"
        let path: String
        let hold: Double
        init(path: String, hold: Double) {
            self.path = path
            self.hold = hold
        }

        func deliver(_ notification: StreakCore.Notification) -> DeliveryOutcome {
            let locked = DispatchSemaphore(value: 0)
            let path = self.path
            let hold = self.hold
            Thread.detachNewThread {
                var config = Configuration()
                config.allowsUnsafeTransactions = true
                guard let queue = try? DatabaseQueue(path: path, configuration: config) else { return }
                try? queue.writeWithoutTransaction { db in try db.execute(sql: "BEGIN IMMEDIATE") }
                locked.signal()
                Thread.sleep(forTimeInterval: hold)
                try? queue.writeWithoutTransaction { db in try db.execute(sql: "ROLLBACK") }
            }
            if locked.wait(timeout: .now() + 30) == .timedOut {
                Issue.record("the locking sink's thread did not take the write lock of \(path) within 30 s")
            }
            return .delivered
        }
    }

    @Test func anOutcomeThatMeetsABusyStoreIsWrittenLaterNotLost() throws {
        let path = TestFiles.path("jobs") + "/s.sqlite"
        let (c, _) = try makeContext(now: "2026-11-21T10:00:00Z", store: try SQLiteStore(path: path, busyTimeout: 0.3))
        try due(c, users: 1)
        let sink = LockingSink(path: path, hold: 1.5)
        let report = try at(c, "2026-11-21T20:00:00Z").tick(delivery: Delivery(sinks: [sink]))
        #expect(report.deliveries.delivered == 1 && report.pending == 0)
        let states = try c.store.read { try $0.deliveryStates(key: "at_risk/u0/daily/2026-11-21") }
        #expect(states == ["locking": .delivered], "a lost outcome is a delivery repeated by the next run")
    }

    /// A sink whose first delivery takes the ledger's deliveries table away through another
    /// connection, so the outcome's write fails (as a nearly full disk would make it).
    final class TableTakingSink: Sink {
        let name = "taking"
        let path: String
        private let calls = Mutex(0)
        init(path: String) { self.path = path }

        var called: Int { calls.withLock { $0 } }

        func deliver(_ notification: StreakCore.Notification) -> DeliveryOutcome {
            let first = calls.withLock {
                $0 += 1
                return $0 == 1
            }
            if first {
                var config = Configuration()
                config.busyMode = .timeout(10)
                let queue = try? DatabaseQueue(path: path, configuration: config)
                try? queue?.write { db in try db.execute(sql: "ALTER TABLE deliveries RENAME TO deliveries_away") }
            }
            return .delivered
        }
    }

    /// Issue 31 (1): a lane stops at the first outcome it could not store, and says what it had
    /// delivered (the next run repeats that); it delivers nothing more to be repeated.
    @Test func anOutcomeNotStoredStopsTheLaneAndSaysWhatWasDelivered() throws {
        let path = TestFiles.path("jobs") + "/s.sqlite"
        let (c, out) = try makeContext(now: "2026-11-21T10:00:00Z", store: try SQLiteStore(path: path))
        try due(c, users: 3)
        let sink = TableTakingSink(path: path)
        #expect(throws: (any Error).self) {
            try at(c, "2026-11-21T20:00:00Z").tick(delivery: Delivery(sinks: [sink]))
        }
        #expect(sink.called == 1, "nothing delivered after the outcome that could not be stored")
        #expect(
            out.err.last
                == "tick at 2026-11-21T20:00:00Z, ended by the error below: 3 sent, 6 expired; 1 delivered (1 of "
                + "them not recorded: the next run makes it again), 0 failed, 0 dead, 0 retried; what is left waits "
                + "for the next run", "\(out.err)")
        let told = out.err.filter { $0.contains("could not be recorded") }
        #expect(
            told == [
                "streakd: warning: taking: 1 delivery was made but could not be recorded, so the next run "
                    + "makes it again: at_risk/u0/daily/2026-11-21; the sink's other deliveries wait for that run"
            ], "\(out.err)")
    }

    /// What a failing hook wrote last (a webhook's response body often lands there), with a screen
    /// clear, a window title and a C1 CSI in it.
    static let hostile = "exit 22: \u{1b}[2J\u{1b}]0;owned\u{07}503 Service Unavailable\u{9b}31m\r"

    /// Whether a line holds anything a terminal would act on: C0 controls, DEL, C1 controls.
    static func controls(_ lines: [String]) -> [String] {
        lines.filter { $0.unicodeScalars.contains { $0.value < 0x20 || (0x7f...0x9f).contains($0.value) } }
    }

    /// Issue 31 (9): a hook's stderr reached the terminal raw through `tick` and the `status`
    /// overview. Every line streakd prints of it is one line with no control character left.
    @Test func aHooksStderrReachesNoTerminalRaw() throws {
        let (c, out) = try makeContext(now: "2026-11-21T10:00:00Z", format: .short)
        try due(c, users: 2)
        let hook = MemorySink(name: "hook:x", outcomes: Array(repeating: .failed(Self.hostile), count: 4))
        let desktop = MemorySink(name: "desktop", outcomes: [.unavailable("no notification server: \u{1b}[5m")])
        // Failed (a line each), then dead on the retry (a warning each), as the hook said.
        let delivery = Delivery(sinks: [hook, desktop], retry: RetryPolicy(maxAttempts: 2))
        try at(c, "2026-11-21T20:00:00Z").tick(delivery: delivery)
        try at(c, "2026-11-21T20:01:00Z").tick(delivery: delivery)
        try at(c, "2026-11-21T20:05:00Z").overview(store: "s.sqlite")
        #expect(out.err.contains { $0.hasPrefix("failed hook:x (exit 22)") }, "\(out.err)")
        #expect(out.err.contains { $0.contains("gave up") && $0.contains("503 Service Unavailable") }, "\(out.err)")
        #expect(out.out.contains { $0.contains("503 Service Unavailable") }, "\(out.out)")
        #expect(Self.controls(out.err).isEmpty, "\(Self.controls(out.err))")
        #expect(Self.controls(out.out.flatMap { $0.split(separator: "\n").map(String.init) }).isEmpty)
    }

    /// Issue 31 (12): a notification server that does not answer costs its time-out once a run,
    /// not once per notification (20 desktop users: 100 s). One warning; the other desktop
    /// deliveries are recorded expired unsent, as for no server at all; the run does not fail.
    @Test func aNotificationServerThatDoesNotAnswerIsWaitedForOnceARun() throws {
        let (c, out) = try makeContext(now: "2026-11-21T10:00:00Z")
        try due(c, users: 20)
        let unanswered = DeliveryOutcome.unavailable("no notification server on the session bus: no reply within 5s")
        let desktop = MemorySink(name: "desktop", outcomes: Array(repeating: unanswered, count: 20))
        let journal = MemorySink(name: "journal")
        let report = try at(c, "2026-11-21T20:00:00Z").tick(delivery: Delivery(sinks: [journal, desktop]))
        #expect(desktop.received.count == 1, "the server was waited for \(desktop.received.count) times")
        #expect(journal.received.count == 20 && report.pending == 0 && report.deliveries.unavailable == 20)
        #expect(out.err.filter { $0.contains("warning: desktop") }.count == 1, "\(out.err)")
        let states = try c.store.read { r in
            try (0..<20).map { try r.deliveryStates(key: "at_risk/u\($0)/daily/2026-11-21")["desktop"] }
        }
        #expect(states.allSatisfy { $0 == .expired })
    }
}
