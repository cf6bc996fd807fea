import Dispatch
import Foundation
import StreakCore
import StreakPostgres
import StreakSQLite
import StreakStore
import StreakTestKit
import Synchronization
import Testing

@testable import StreakJobs

/// `preview` streams: it reads the schedule a batch at a time in the order of the planned runs
/// and prints what is due before the last run read, so its first lines come out before it has
/// read the last streak, and it holds only the notices still waiting for their turn. On both
/// engines, through a twin of the store that counts what it hands out.
@Suite(.fastTier) struct PreviewStreamTests {
    static let users = 12_000

    enum Engine: String, CaseIterable, CustomStringConvertible {
        case sqlite
        case postgres
        var description: String { rawValue }

        func open(url: String? = nil) throws -> any Store {
            switch self {
            case .sqlite: try SQLiteStore(path: TestFiles.path("preview") + "/s.sqlite")
            case .postgres: try PostgresStore(url: try url ?? TestPostgres.freshDatabase())
            }
        }
    }

    /// 12,000 users over twelve zones, each with a streak of 7 to 9 days ending yesterday or today,
    /// and a first tick (unless `ticked` is false): every streak has a planned run.
    func seeded(_ engine: Engine, url: String? = nil, ticked: Bool = true) throws -> Context {
        let zones = [
            "Pacific/Kiritimati", "Asia/Tokyo", "Asia/Kolkata", "Asia/Kathmandu", "Europe/Berlin", "UTC",
            "America/Sao_Paulo", "America/St_Johns", "America/New_York", "America/Denver", "Pacific/Honolulu",
            "Pacific/Pago_Pago",
        ]
        let (c, _) = try makeContext(now: "2026-11-21T09:00:00Z", store: try engine.open(url: url))
        let dir = TestFiles.path("preview-seed")
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        var users: [String] = []
        var checkins: [String] = []
        for u in 0..<Self.users {
            let zone = zones[u % zones.count]
            users.append(#"{"user":"p\#(u)","tz":"\#(zone)","remind_at":"\#(18 + u % 4):\#(u % 2 == 0 ? "00" : "30")"}"#)
            let z = try c.zones.stored(zone)
            let today = z.date(of: c.now)
            let last = u % 3 == 0 ? today : today - 1
            for k in 0..<(7 + u % 3) {
                let at = z.instant(of: last - k, secondsIntoDay: 8 * 3600)
                guard at < c.now else { continue }
                checkins.append(#"{"user":"p\#(u)","at":"\#(at)","tz":"\#(zone)"}"#)
            }
        }
        try users.joined(separator: "\n").write(toFile: dir + "/users.jsonl", atomically: true, encoding: .utf8)
        try checkins.joined(separator: "\n").write(toFile: dir + "/checkins.jsonl", atomically: true, encoding: .utf8)
        try c.importUsers(path: dir + "/users.jsonl")
        try c.importCheckins(path: dir + "/checkins.jsonl", format: nil, skipInvalid: false)
        if ticked { _ = try c.tick(delivery: Delivery(sinks: [])) }
        return c
    }

    /// An import plans the runs of the streaks it changed: right after it, before any tick, preview
    /// reads no history from the tables, streams, and prints what it prints once a tick has run.
    @Test(arguments: Engine.allCases) func anImportLeavesItsStreaksPlanned(engine: Engine) throws {
        if engine == .postgres { try Prerequisite.postgres.require() }
        let imported = try seeded(engine, ticked: false)
        func streamed() throws -> (keys: [String], histories: Int, held: Bool, unplanned: Int) {
            let twin = CountingStore(imported.store)
            twin.holdAfter = 4
            let c = imported.on(twin, at: "2026-11-21T10:00:00Z")
            var keys: [String] = []
            try c.eachUpcoming(through: c.now + 2 * Instant.day, readLedgerAfter: 1000) { batch in
                twin.release()
                keys += batch.entries.map { "\($0.notice.due) \($0.notice.kind.rawValue)/\($0.user)/\($0.notice.date)" }
            }
            let unplanned = try imported.store.read { r in
                var n = 0
                try r.eachUnplannedStreak(every: false) { n += $0.count }
                return n
            }
            return (keys, twin.histories, twin.heldTooLong, unplanned)
        }
        let before = try streamed()
        #expect(before.unplanned == 0, "the import planned every streak it changed")
        #expect(before.histories == 0, "no history read from the tables")
        #expect(!before.held && before.keys.count > Self.users)
        #expect(try imported.store.read { try $0.dueStreaks(through: imported.now).count } == Self.users)
        _ = try imported.tick(delivery: Delivery(sinks: []))
        let after = try streamed()
        #expect(after.keys == before.keys, "what a tick plans, the import planned")
    }

    @Test(arguments: Engine.allCases) func theFirstLinesComeBeforeTheLastStreakIsRead(engine: Engine) throws {
        if engine == .postgres { try Prerequisite.postgres.require() }
        let seeded = try seeded(engine)
        let twin = CountingStore(seeded.store)
        let c = seeded.on(twin, at: "2026-11-21T10:00:00Z")
        let end = c.now + 2 * Instant.day
        var batches: [(handedOut: Int, ended: Bool, count: Int)] = []
        var streamed: [StreakCore.Notification] = []
        // The store hands out no run past the first four batches until something is printed:
        // were preview to read every streak first, the first line would wait for the hold's end.
        twin.holdAfter = 4
        // The ledger's keys of the window read at once past a thousand notices (4,096 for a user).
        let peak = try c.eachUpcoming(through: end, readLedgerAfter: 1000) { batch in
            batches.append((twin.handedOut, twin.ended, batch.entries.count))
            twin.release()
            streamed += batch.entries.map {
                c.notification(
                    $0.notice, user: $0.user, language: $0.language, streak: $0.streak, zone: batch.zone(of: $0))
            }
        }
        let planned = twin.handedOut
        #expect(planned == Self.users, "every streak has its run within two days")
        #expect(twin.histories == 0, "the runs carried their histories: none looked up")
        #expect(streamed.count > Self.users)
        // Printed in several batches, the first before the last streak was read (the batches grow
        // from 256 runs: 256, 512, 1,024, 2,048, 4,096, 4,064).
        #expect(batches.count >= 4)
        #expect(!twin.heldTooLong, "the first lines came while the store held the rest back")
        #expect(!batches[0].ended && batches[0].handedOut < planned)
        // In due order, and what the same notices come to collected and sorted.
        let order = { (a: StreakCore.Notification, b: StreakCore.Notification) -> Bool in
            if a.due != b.due { return a.due < b.due }
            if (a.kind == .atRisk) != (b.kind == .atRisk) { return b.kind == .atRisk }
            return (a.user, a.streak) < (b.user, b.streak)
        }
        #expect(zip(streamed, streamed.dropFirst()).allSatisfy { !order($1, $0) })
        #expect(Set(streamed.map(\.key)).count == streamed.count)
        // The queue held notices only, never more than there were.
        #expect(peak <= streamed.count)
        #expect(twin.ledgerKeyReads == 1, "the ledger's keys of the window read once")
        // Nothing the ledger holds: a tick at 10:00 records what is due by then; preview after it
        // leaves those out and shows the rest unchanged.
        _ = try at(seeded, "2026-11-21T12:00:00Z").tick(delivery: Delivery(sinks: []))
        let later = try at(c, "2026-11-21T10:00:00Z").upcoming(through: end)
        let sent = Set(try seeded.store.read { r in try r.ledgerStates(keys: streamed.map(\.key)) }.keys)
        #expect(!sent.isEmpty)
        #expect(later.map(\.key) == streamed.map(\.key).filter { !sent.contains($0) })
        // The same with the ledger's keys read at once: those it holds are asked about, and left out.
        var hashed: [String] = []
        try at(c, "2026-11-21T10:00:00Z").eachUpcoming(through: end, readLedgerAfter: 1000) { batch in
            hashed += batch.entries.map { "\($0.notice.kind.rawValue)/\($0.user)/\($0.streak)/\($0.notice.date)" }
        }
        #expect(hashed == later.map(\.key))
    }
}

extension PreviewStreamTests {
    /// A run whose carried bytes are not a history (a damaged copy) is read again from the tables
    /// on the planning thread and walked again: the same notices in the same order, none printed
    /// before the ones read again are known.
    @Test func aRunWhoseCarriedBytesAreNotAHistoryIsReadFromTheTables() throws {
        let seeded = try seeded(.sqlite)
        func streamed(garbling every: Int) throws -> (keys: [String], histories: Int) {
            let twin = CountingStore(seeded.store)
            twin.garbleEvery = every
            let c = seeded.on(twin, at: "2026-11-21T10:00:00Z")
            var keys: [String] = []
            try c.eachUpcoming(through: c.now + 2 * Instant.day, readLedgerAfter: 1000) { batch in
                keys += batch.entries.map { "\($0.notice.due) \($0.notice.kind.rawValue)/\($0.user)/\($0.streak)/\($0.notice.date)" }
            }
            return (keys, twin.histories)
        }
        let whole = try streamed(garbling: 0)
        let damaged = try streamed(garbling: 97)
        #expect(whole.histories == 0)
        #expect(damaged.histories == (Self.users + 96) / 97)
        #expect(damaged.keys == whole.keys)
    }
}

extension PreviewStreamTests {
    /// On PostgreSQL the planned runs stream on a second connection; the read's own transaction,
    /// meanwhile idle while the caller works on each batch, is kept from being ended as idle by
    /// the store between batches. Shown with an idle timeout of 1.2 s and a stream of 2.4 s
    /// (0.4 s a batch: a margin of 0.8 s for a loaded machine between the store's touches); a
    /// read that stays idle longer than the timeout in one go loses its transaction, so the
    /// time-out is real.
    @Test func aLongStreamKeepsTheReadsOwnTransactionAlive() throws {
        try Prerequisite.postgres.require()
        let url = try TestPostgres.freshDatabase()
        let seeded = try seeded(.postgres, url: url)
        var settings = PGSettings()
        settings.idleInTransactionTimeout = .milliseconds(1200)
        let store = try PostgresStore(url: url, access: .read, settings: settings)
        let end = seeded.now + 2 * Instant.day
        let (batches, runs, streaks) = try store.read { r in
            var (batches, runs) = (0, 0)
            try r.eachPlannedRun(through: end) { batch in
                batches += 1
                runs += batch.count
                if batches <= 6 { Thread.sleep(forTimeInterval: 0.4) }
            }
            return (batches, runs, try r.streakCount())
        }
        #expect(batches >= 6 && runs == Self.users && streaks == Self.users)
        #expect(throws: StoreError.self) {
            try store.read { r in
                Thread.sleep(forTimeInterval: 2.0)
                return try r.streakCount()
            }
        }
    }
}

extension PreviewStreamTests {
    /// Streaks changed since the last tick by a write that plans nothing (a freeze granted) have no
    /// planned run: they are planned first, from their histories, and the rest read in the
    /// queue's order; what comes out is what the same preview prints once a tick has planned them
    /// again.
    @Test func changedStreaksArePlannedFirst() throws {
        let seeded = try seeded(.sqlite)
        _ = try at(seeded, "2026-11-21T12:00:00Z").tick(delivery: Delivery(sinks: []))
        try seeded.store.write { w in
            for u in 0..<300 {
                try w.addFreezeEvent(
                    FreezeEvent(at: RFC3339.parse("2026-11-21T12:05:00Z")!, kind: .grant), user: "p\(u * 37)",
                    streak: "daily")
            }
        }
        func streamed() throws -> (lines: [String], first: Int, read: Int, histories: Int, peak: Int, held: Bool) {
            let twin = CountingStore(seeded.store)
            let c = seeded.on(twin, at: "2026-11-21T12:10:00Z")
            var lines: [String] = []
            var first: Int?
            twin.holdAfter = 4
            let peak = try c.eachUpcoming(through: c.now + 2 * Instant.day, readLedgerAfter: 1000) { batch in
                if first == nil { first = twin.handedOut }
                twin.release()
                var text = PreviewLines()
                for e in batch.entries { text.append(e, zone: batch.zone(of: e), message: "", json: true) }
                lines += String(decoding: text.bytes, as: UTF8.self).split(separator: "\n").map(String.init)
            }
            return (lines, first ?? -1, twin.handedOut, twin.histories, peak, twin.heldTooLong)
        }
        let changed = try streamed()
        #expect(changed.histories >= 300, "the changed streaks' histories are read from the store")
        #expect(changed.lines.count > Self.users)
        #expect(changed.lines.contains { $0.contains(#""user":"p37","#) })
        #expect(changed.first >= 0 && changed.first < changed.read)
        #expect(!changed.held)
        #expect(changed.peak <= changed.lines.count)
        _ = try at(seeded, "2026-11-21T12:10:00Z").tick(delivery: Delivery(sinks: []))
        let planned = try streamed()
        #expect(planned.histories == 0)
        #expect(planned.lines == changed.lines)
    }
}

extension Context {
    /// This context's settings on another store (a twin of its own), at `now`.
    func on(_ store: any Store, at now: String) -> Context {
        Context(store: store, config: config, now: RFC3339.parse(now)!, zones: zones, printer: printer)
    }
}

/// A store that hands out what the real one answers and counts it.
final class CountingStore: Store, Sendable {
    let store: any Store
    private let counts = Mutex<(handedOut: Int, histories: Int, ledgerKeyReads: Int, ended: Bool, garble: Int)>(
        (0, 0, 0, false, 0))
    /// How many batches of runs it hands out before it waits for `release` (nil: none); whether
    /// it waited in vain (ten seconds), and the semaphore it waits on.
    private let hold = Mutex<(after: Int?, batches: Int, tooLong: Bool)>((nil, 0, false))
    private let released = DispatchSemaphore(value: 0)

    init(_ store: any Store) { self.store = store }

    var holdAfter: Int? {
        get { hold.withLock { $0.after } }
        set { hold.withLock { $0.after = newValue } }
    }
    var heldTooLong: Bool { hold.withLock { $0.tooLong } }

    /// Lets a held reader go on (the caller printed something).
    func release() {
        guard hold.withLock({ s in defer { s.after = nil }; return s.after != nil }) else { return }
        released.signal()
    }

    /// Called before each batch of runs is handed out: past `holdAfter` batches, waits for `release`.
    fileprivate func beforeBatch() {
        let wait = hold.withLock { s -> Bool in
            s.batches += 1
            return s.after.map { s.batches > $0 } ?? false
        }
        guard wait else { return }
        if released.wait(timeout: .now() + 10) == .timedOut { hold.withLock { $0.tooLong = true } }
        released.signal()
    }

    /// Every this many runs handed out (0: none), the bytes the run carries are made not a history.
    var garbleEvery: Int {
        get { counts.withLock { $0.garble } }
        set { counts.withLock { $0.garble = newValue } }
    }

    var handedOut: Int { counts.withLock { $0.handedOut } }
    var histories: Int { counts.withLock { $0.histories } }
    var ledgerKeyReads: Int { counts.withLock { $0.ledgerKeyReads } }
    /// Whether the reader came to the end of the queue.
    var ended: Bool { counts.withLock { $0.ended } }

    func read<T>(_ body: (any StoreReader) throws -> T) throws -> T {
        try store.read { try body(CountingReader(reader: $0, store: self)) }
    }
    func readBeside<T>(_ body: (any StoreReader) throws -> T) throws -> T {
        try store.readBeside { try body(CountingReader(reader: $0, store: self)) }
    }
    func write<T>(_ mode: WriteMode, _ body: (any StoreWriter) throws -> T) throws -> T {
        try store.write(mode, body)
    }
    func clock() throws -> Instant? { try store.clock() }
    var concurrentClaims: Bool { store.concurrentClaims }
    var location: String { store.location }
    func check() throws -> StoreCheck { try store.check() }
    func backup(to path: String) throws { try store.backup(to: path) }
    func openConnections(_ count: Int) -> (open: Int, short: String?)? { store.openConnections(count) }
    func holdUpkeep(_ hold: Bool) throws { try store.holdUpkeep(hold) }
    func upkeep() throws { try store.upkeep() }

    fileprivate func count(handedOut: Int = 0, histories: Int = 0, ledgerKeyReads: Int = 0, ended: Bool = false) {
        counts.withLock {
            $0.ended = $0.ended || ended
            $0.handedOut += handedOut
            $0.histories += histories
            $0.ledgerKeyReads += ledgerKeyReads
        }
    }
}

private struct CountingReader: StoreReader {
    let reader: any StoreReader
    let store: CountingStore

    func user(_ id: String) throws -> User? { try reader.user(id) }
    func users() throws -> [User] { try reader.users() }
    func userZones(_ body: (UserZones) throws -> Void) throws { try reader.userZones(body) }
    func usualUsers() throws -> [String] { try reader.usualUsers() }
    func zoneHistory(of user: String) throws -> [StoredZoneChange] { try reader.zoneHistory(of: user) }
    func streaks(of user: String) throws -> [String] { try reader.streaks(of: user) }
    func checkins(of user: String, streak: String) throws -> [StoredCheckin] {
        try reader.checkins(of: user, streak: streak)
    }
    func freezeEvents(of user: String, streak: String) throws -> [FreezeEvent] {
        try reader.freezeEvents(of: user, streak: streak)
    }
    func settingsEpochs(of streak: String) throws -> [SettingsEpoch] { try reader.settingsEpochs(of: streak) }
    func achievementFacts(of users: [String]) throws -> [AchievementFacts] { try reader.achievementFacts(of: users) }
    func userCounts() throws -> UserCounts { try reader.userCounts() }
    func streakCount() throws -> Int { try reader.streakCount() }
    func deliveryCount(_ state: DeliveryState) throws -> Int { try reader.deliveryCount(state) }
    func deliveries(_ state: DeliveryState, limit: Int) throws -> [DeliveryRecord] {
        try reader.deliveries(state, limit: limit)
    }
    func pendingDeliveries(dueBefore t: Instant) throws -> Int { try reader.pendingDeliveries(dueBefore: t) }
    func notificationCounts() throws -> [PairCount] { try reader.notificationCounts() }
    func deliveryCounts() throws -> [PairCount] { try reader.deliveryCounts() }
    func dueStreaks(through: Instant?) throws -> DueList { try reader.dueStreaks(through: through) }
    func dueHistories(of streaks: [DueStreak]) throws -> [DueHistory?] {
        store.count(histories: streaks.count)
        return try reader.dueHistories(of: streaks)
    }
    func eachPlannedRun(through: Instant, _ body: (PlannedRuns) throws -> Void) throws {
        try reader.eachPlannedRun(through: through) {
            store.beforeBatch()
            try body(handOut($0))
        }
        store.count(ended: true)
    }
    /// A batch as handed out: counted, and every `garbleEvery`th run's carried bytes made not a history.
    func handOut(_ batch: PlannedRuns) -> PlannedRuns {
        let (before, every) = (store.handedOut, store.garbleEvery)
        store.count(handedOut: batch.count)
        guard every > 0 else { return batch }
        var out = PlannedRuns()
        for i in batch.runs.indices {
            let d = batch.dueStreak(i)
            let history = (before + i) % every == 0 ? batch.history(i).map { _ in [0xFF] } : batch.history(i)
            out.append(batch.runs[i], user: d.user, streak: d.streak, language: batch.language(i), history: history)
        }
        return out
    }
    func eachUnplannedStreak(every: Bool, _ body: ([DueStreak]) throws -> Void) throws {
        try reader.eachUnplannedStreak(every: every, body)
    }
    func ledgerStates(keys: [String]) throws -> [String: LedgerState] { try reader.ledgerStates(keys: keys) }
    func eachLedgerKey(
        dates: ClosedRange<LocalDate>, _ body: (String, String, String, LocalDate) throws -> Void
    ) throws {
        store.count(ledgerKeyReads: 1)
        try reader.eachLedgerKey(dates: dates, body)
    }
    func pendingDeliveries() throws -> [PendingDelivery] { try reader.pendingDeliveries() }
    func deliveryStates(key: String) throws -> [String: DeliveryState] { try reader.deliveryStates(key: key) }
    func waitingDeliveries() throws -> Int { try reader.waitingDeliveries() }
    func meta(_ key: String) throws -> String? { try reader.meta(key) }
    func tokens() throws -> [StoredToken] { try reader.tokens() }
}
