import Foundation
import StreakCore
import StreakDelivery
import StreakStore
import StreakTestKit
import Synchronization
import Testing

@testable import StreakJobs

/// A run stopped in process through its context's `StopToken`, as SIGTERM stops `streakd tick`
/// (SPEC §5, "Stopping").
@Suite(.fastTier) struct TickStopTests {
    /// A sink that holds its first delivery until the test lets it go; it keeps every key.
    final class HoldingSink: Sink {
        let name = "holding"
        let holding = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        private let keys = Mutex<[String]>([])

        var received: [String] { keys.withLock { $0 } }

        func deliver(_ notification: StreakCore.Notification) -> DeliveryOutcome {
            let first = keys.withLock {
                $0.append(notification.key)
                return $0.count == 1
            }
            if first {
                holding.signal()
                _ = release.wait(timeout: .now() + 30)
            }
            return .delivered
        }
    }

    func due(_ context: Context, users: Int) throws {
        for u in 0..<users {
            try context.addUser(id: "u\(u)", tz: "UTC", remindAt: nil, remind: true)
            for d in 14...20 {
                try StreakTestKit.at(context, "2026-11-21T10:00:00Z").checkin(
                    user: "u\(u)", streak: "daily", at: "2026-11-\(d)T10:00:00Z", tz: nil, eventID: nil, meta: [])
            }
        }
    }

    /// `context` at `now`, with `stop` as its stop token.
    func at(_ context: Context, _ now: String, stop: StopToken) -> Context {
        Context(
            store: context.store, config: context.config, now: RFC3339.parse(now)!, zones: context.zones,
            printer: context.printer, stop: stop)
    }

    @Test func aStopStartsNothingNewRecordsWhatWasInFlightAndEnds75() throws {
        let (c, out) = try makeContext(now: "2026-11-21T10:00:00Z", format: .short)
        try due(c, users: 5)
        let sink = HoldingSink()
        let delivery = Delivery(sinks: [sink])
        let stop = StopToken()
        let run = at(c, "2026-11-21T20:00:00Z", stop: stop)
        let ended = Mutex<Result<TickReport, any Error>?>(nil)
        let done = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            let result = Result { try run.tick(delivery: delivery) }
            ended.withLock { $0 = result }
            done.signal()
        }
        try #require(sink.holding.wait(timeout: .now() + 30) == .success, "the first delivery started")
        stop.trigger()
        sink.release.signal()
        try #require(done.wait(timeout: .now() + 30) == .success, "the run ended")

        let result = try #require(ended.withLock { $0 })
        #expect(throws: StreakdError.self) { try result.get() }
        if case .failure(let error as StreakdError) = result {
            #expect(error.status == .tempFail && error.status.rawValue == 75)
            #expect(error.message == "stopped by a signal; the next run goes on")
        }
        // The delivery in flight finished and is recorded; nothing else started.
        #expect(sink.received == ["at_risk/u0/daily/2026-11-21"])
        let states = try (0..<5).map { u in
            try c.store.read { try $0.deliveryStates(key: "at_risk/u\(u)/daily/2026-11-21") }["holding"]
        }
        #expect(states == [.delivered, .pending, .pending, .pending, .pending])
        #expect(out.err.contains { $0.contains("1 delivered, 0 failed") }, "\(out.err)")
        // A stopped run is a run that ended (exit 75): recorded for status --check and the metrics.
        let recorded = try c.store.read { try $0.meta(MetaKey.lastTick) }
        #expect(recorded?.contains(#""at":"2026-11-21T20:00:00Z""#) == true, "\(recorded ?? "none")")

        // The next run (a token of its own) delivers the rest, each once.
        let next = try at(c, "2026-11-21T20:15:00Z", stop: StopToken()).tick(delivery: delivery)
        #expect(next.deliveries.retried == 4 && next.deliveries.delivered == 4 && next.pending == 0)
        #expect(sink.received.sorted() == (0..<5).map { "at_risk/u\($0)/daily/2026-11-21" })
    }

    @Test func aStoppedRunClaimsNothing() throws {
        let (c, _) = try makeContext(now: "2026-11-21T10:00:00Z")
        try due(c, users: 2)
        let stop = StopToken()
        stop.trigger()
        let sink = MemorySink()
        #expect(throws: StreakdError.self) {
            try at(c, "2026-11-21T20:00:00Z", stop: stop).tick(delivery: Delivery(sinks: [sink]))
        }
        #expect(sink.received.isEmpty)
        let r = try at(c, "2026-11-21T20:15:00Z", stop: StopToken()).tick(delivery: Delivery(sinks: [sink]))
        #expect(r.sent == 2 && r.deliveries.delivered == 2)
    }
}
