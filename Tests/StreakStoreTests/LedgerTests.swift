import Foundation
import GRDB
import StreakCore
import StreakStore
import StreakTestKit
import Testing

@testable import StreakSQLite

/// The ledger in date order (migration 5): keys by their parts, deliveries by ledger id, and a
/// store written before it carried over.
@Suite(.fastTier) struct LedgerTests {
    static func entry(_ kind: NotificationKind, _ user: String, _ date: LocalDate) -> StreakCore.Notification {
        StreakCore.Notification(
            kind: kind, user: user, streak: "daily", localDate: date, due: t0, timezone: "UTC",
            localDue: "2026-11-18T20:00:00Z", streakLength: 3, message: "m")
    }

    @Test func keysAreReadByTheirParts() {
        let k = LedgerKey("at_risk/u.1@x/daily_2/2026-11-21")
        #expect(k?.kind == "at_risk" && k?.user == "u.1@x" && k?.streak == "daily_2")
        #expect(k?.localDate == LocalDate("2026-11-21"))
        for bad in ["", "at_risk/u1/daily", "at_risk/u1/daily/2026-11-21/x", "at_risk/u1/daily/21.11.2026"] {
            #expect(LedgerKey(bad) == nil, "\(bad)")
        }
    }

    @Test func recordAnswersAnIDOnceAndDeliveriesGoByIt() throws {
        let store = try SQLiteStore(path: scratch() + "/s.sqlite")
        let e = Self.entry(.atRisk, "u1", LocalDate("2026-11-21")!)
        let id = try store.write { w -> Int64? in
            _ = try w.addUser(User(id: "u1", zone: "UTC"), at: t0)
            return try w.record(e, state: .sent, sinks: ["journal", "hook:a"], owner: "run1", at: t0)
        }
        let recorded = try #require(id)
        #expect(try store.write { w in try w.record(e, state: .sent, sinks: ["journal"], owner: nil, at: t0) } == nil)
        #expect(
            try store.read { r in try r.ledgerStates(keys: [e.key, "at_risk/u1/daily/2026-11-22"]) } == [e.key: .sent])
        try store.write { w in
            try w.finish(id: recorded, sink: "journal", state: .delivered, attempts: 1, at: t0, error: nil)
            #expect(try !w.takeOver(id: recorded, sink: "hook:a", from: nil, fromGone: true, to: "run2"), "run1 has it")
            #expect(try w.takeOver(id: recorded, sink: "hook:a", from: "run1", fromGone: true, to: "run2"))
        }
        #expect(
            try store.read { r in try r.deliveryStates(key: e.key) } == ["journal": .delivered, "hook:a": .pending])
        let pending = try store.read { r in try r.pendingDeliveries() }
        #expect(
            pending.map(\.id) == [recorded] && pending.map(\.notification) == [e] && pending.map(\.owner) == ["run2"])
        _ = try store.write { w in try w.removeUser("u1") }
        #expect(try store.read { r in try r.ledgerStates(keys: [e.key]) }.isEmpty)
        #expect(try store.read { r in try r.deliveryStates(key: e.key) }.isEmpty)
    }

    @Test func aStoreFromBeforeKeepsItsLedger() throws {
        let (path, queue) = try storeFromBefore("4-packed-histories")
        let old = [
            Self.entry(.streakBroken, "u1", LocalDate("2026-11-19")!),
            Self.entry(.atRisk, "u1", LocalDate("2026-11-21")!),
            Self.entry(.atRisk, "u2", LocalDate("2026-11-21")!),
        ]
        try queue.write { db in
            for u in ["u1", "u2"] {
                try db.execute(
                    sql: "INSERT INTO users (id, zone, remind_at, remind, created_at) VALUES (?, 'UTC', 72000, 1, 0)",
                    arguments: [u])
            }
            for (i, e) in old.enumerated() {
                try db.execute(
                    sql: """
                        INSERT INTO notifications VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                        """,
                    arguments: [
                        e.key, e.user, e.streak, e.kind.rawValue, e.localDate.day, e.due.seconds, e.timezone,
                        e.localDue,
                        e.streakLength, e.message, i == 0 ? "expired" : "sent", 0,
                    ])
                try db.execute(
                    sql: "INSERT INTO deliveries (key, sink, state, attempts, owner) VALUES (?, 'journal', ?, ?, ?)",
                    arguments: [e.key, i == 2 ? "pending" : i == 0 ? "expired" : "delivered", i, i == 2 ? "run9" : nil])
            }
        }
        try queue.close()
        let store = try SQLiteStore(path: path)
        #expect(
            try store.read { r in try r.ledgerStates(keys: old.map(\.key)) }
                == [old[0].key: .expired, old[1].key: .sent, old[2].key: .sent])
        #expect(try store.read { r in try r.deliveryStates(key: old[1].key) } == ["journal": .delivered])
        let pending = try store.read { r in try r.pendingDeliveries() }
        #expect(
            pending.map(\.notification) == [old[2]] && pending.map(\.attempts) == [2]
                && pending.map(\.owner) == ["run9"])
        #expect(try store.write { w in try w.record(old[1], state: .sent, sinks: [], owner: nil, at: t0) } == nil)
    }
}
