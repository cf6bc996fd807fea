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
@Suite struct PreviewStreamTests {
    static let users = 12_000

    enum Engine: String, CaseIterable, CustomStringConvertible {
        case sqlite
        case postgres
        var description: String { rawValue }

        func open(url: String? = nil) throws -> any Store {
            switch self {
            case .sqlite: try SQLiteStore(path: NSTemporaryDirectory() + "preview-\(UUID().uuidString)/s.sqlite")
            case .postgres: try PostgresStore(url: try url ?? TestPostgres.freshDatabase())
            }
        }
    }

    /// 12,000 users over twelve zones, each with a streak of 7 to 9 days ending yesterday or today,
    /// and a first tick: every streak has a planned run.
    func seeded(_ engine: Engine, url: String? = nil) throws -> Context {
        let zones = [
            "Pacific/Kiritimati", "Asia/Tokyo", "Asia/Kolkata", "Asia/Kathmandu", "Europe/Berlin", "UTC",
            "America/Sao_Paulo", "America/St_Johns", "America/New_York", "America/Denver", "Pacific/Honolulu",
            "Pacific/Pago_Pago",
        ]
        let (c, _) = try makeContext(now: "2026-11-21T09:00:00Z", store: try engine.open(url: url))
        let dir = NSTemporaryDirectory() + "preview-seed-\(UUID().uuidString)"
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
        _ = try c.tick(delivery: Delivery(sinks: []))
        return c
    }

    @Test(arguments: Engine.allCases) func theFirstLinesComeBeforeTheLastStreakIsRead(engine: Engine) throws {
        if engine == .postgres && !TestPostgres.isAvailable { return }
        let seeded = try seeded(engine)
        let twin = CountingStore(seeded.store)
        let c = seeded.on(twin, at: "2026-11-21T10:00:00Z")
        let end = c.now + 2 * Instant.day
        var batches: [(handedOut: Int, ended: Bool, count: Int)] = []
        var streamed: [StreakCore.Notification] = []
        // The ledger's keys of the window read at once past a thousand notices (4,096 for a user).
        let peak = try c.eachUpcoming(through: end, readLedgerAfter: 1000) { batch in
            batches.append((twin.handedOut, twin.ended, batch.entries.count))
            streamed += batch.entries.map {
                c.notification(
                    $0.notice, user: $0.user, language: $0.language, streak: $0.streak, zone: batch.zone(of: $0))
            }
        }
        let planned = twin.handedOut
        #expect(planned == Self.users, "every streak has its run within two days")
        #expect(twin.histories == 0, "the runs carried their histories: none looked up")
        #expect(streamed.count > Self.users)
        // Printed in several batches, the first before the last streak was read: the pages grow
        // from 256 streaks (256, 512, 1,024, 2,048, 4,096, 4,064), and the planning thread reads
        // at most three pages ahead of the printing one.
        #expect(batches.count >= 4)
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
        print("preview streamed \(streamed.count) notices in \(batches.count) batches, at most \(peak) waiting")
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
    /// meanwhile only asked about the ledger, is kept from being ended as idle by `keepUp`, which
    /// preview calls every 256 streaks. Shown with an idle timeout of 0.6 s and a stream of 2.4 s:
    /// without `keepUp` the same read loses its transaction.
    @Test func aLongStreamKeepsTheReadsOwnTransactionAlive() throws {
        guard TestPostgres.isAvailable else { return }
        let url = try TestPostgres.freshDatabase()
        let seeded = try seeded(.postgres, url: url)
        var settings = PGSettings()
        settings.idleInTransactionTimeout = .milliseconds(600)
        let store = try PostgresStore(url: url, access: .read, settings: settings)
        let end = seeded.now + 2 * Instant.day
        func stream(keepingUp: Bool) throws -> (pages: Int, streaks: Int) {
            try store.read { r in
                var pages = 0
                try r.eachPlannedStreak(through: end, first: 2000, most: 2000) { _ in
                    pages += 1
                    for _ in 0..<4 {
                        Thread.sleep(forTimeInterval: 0.1)
                        if keepingUp { r.keepUp() }
                    }
                }
                return (pages, try r.streakCount())
            }
        }
        let kept = try stream(keepingUp: true)
        #expect(kept.pages == Self.users / 2000 && kept.streaks == Self.users)
        #expect(throws: StoreError.self) { try stream(keepingUp: false) }
    }
}

/// A store that hands out what the real one answers and counts it.
extension PreviewStreamTests {
    /// Several planning threads, each reading the runs of the instants it takes on a connection
    /// of its own, all at one snapshot: the same notices in the same order as one thread, streaks
    /// changed since the last tick among them; the first printed before the last run is read; the
    /// ledger's keys read once for all.
    @Test func severalPlanningThreadsPrintWhatOnePrints() throws {
        let seeded = try seeded(.sqlite)
        _ = try at(seeded, "2026-11-21T12:00:00Z").tick(delivery: Delivery(sinks: []))
        // Check-ins since that tick: those streaks are marked changed, and planned first.
        let dir = NSTemporaryDirectory() + "preview-changed-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        let lines = (0..<300).map { u in #"{"user":"p\#(u * 37)","at":"2026-11-21T12:05:00Z"}"# }
        try lines.joined(separator: "\n").write(toFile: dir + "/c.jsonl", atomically: true, encoding: .utf8)
        try at(seeded, "2026-11-21T12:10:00Z").importCheckins(path: dir + "/c.jsonl", format: nil, skipInvalid: false)
        func streamed(_ workers: Int) throws -> (lines: [String], first: Int, read: Int, ledger: Int, on: Int, peak: Int) {
            let twin = CountingStore(seeded.store)
            twin.together = true
            let c = seeded.on(twin, at: "2026-11-21T12:10:00Z")
            var lines: [String] = []
            var first: Int?
            let peak = try c.eachUpcoming(through: c.now + 2 * Instant.day, readLedgerAfter: 1000, workers: workers) {
                batch in
                if first == nil { first = twin.handedOut }
                var text = PreviewLines()
                for e in batch.entries { text.append(e, zone: batch.zone(of: e), message: "", json: true) }
                lines += String(decoding: text.bytes, as: UTF8.self).split(separator: "\n").map(String.init)
            }
            return (lines, first ?? -1, twin.handedOut, twin.ledgerKeyReads, twin.connections, peak)
        }
        let one = try streamed(1)
        #expect(one.on == 1)
        #expect(one.lines.count > Self.users)
        #expect(one.lines.contains { $0.contains(#""user":"p37","#) })
        for workers in [2, 3] {
            let several = try streamed(workers)
            #expect(several.on == workers, "the connections lined up (a quiet store)")
            #expect(several.lines == one.lines)
            #expect(several.first >= 0 && several.first < several.read)
            #expect(several.ledger == 1)
            #expect(several.peak <= several.lines.count)
        }
    }
}

extension Context {
    /// This context's settings on another store (a twin of its own), at `now`.
    func on(_ store: any Store, at now: String) -> Context {
        Context(store: store, config: config, now: RFC3339.parse(now)!, zones: zones, printer: printer)
    }
}

final class CountingStore: Store, @unchecked Sendable {
    let store: any Store
    private let counts = Mutex<
        (handedOut: Int, histories: Int, ledgerKeyReads: Int, ended: Bool, garble: Int, together: Bool, connections: Int)
    >((0, 0, 0, false, 0, false, 0))

    init(_ store: any Store) { self.store = store }

    /// Every this many runs handed out (0: none), the bytes the run carries are made not a history.
    var garbleEvery: Int {
        get { counts.withLock { $0.garble } }
        set { counts.withLock { $0.garble = newValue } }
    }

    var handedOut: Int { counts.withLock { $0.handedOut } }
    var histories: Int { counts.withLock { $0.histories } }
    var ledgerKeyReads: Int { counts.withLock { $0.ledgerKeyReads } }
    /// Whether the reader came to the end of the queue (a page came back empty).
    var ended: Bool { counts.withLock { $0.ended } }

    func read<T>(_ body: (any StoreReader) throws -> T) throws -> T {
        try store.read { try body(CountingReader(reader: $0, store: self)) }
    }
    /// Whether `readTogether` goes to the store's own (else: one connection, as a store that
    /// cannot line several up reads), and how many connections its reads were on.
    var together: Bool {
        get { counts.withLock { $0.together } }
        set { counts.withLock { $0.together = newValue } }
    }
    var connections: Int { counts.withLock { $0.connections } }
    func readTogether(_ count: Int, _ body: @escaping @Sendable (Int, Int, any StoreReader) throws -> Void) throws {
        guard together else { return try read { try body(0, 1, $0) } }
        try store.readTogether(count) { i, n, r in
            self.counts.withLock { $0.connections = n }
            try body(i, n, CountingReader(reader: r, store: self))
        }
    }
    func write<T>(_ mode: WriteMode, _ body: (any StoreWriter) throws -> T) throws -> T {
        try store.write(mode, body)
    }
    var location: String { store.location }
    func check() throws -> StoreCheck { try store.check() }
    func backup(to path: String) throws { try store.backup(to: path) }

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
    func dueStreaks(through: Instant?) throws -> DueList { try reader.dueStreaks(through: through) }
    func dueHistories(of streaks: [DueStreak]) throws -> [DueHistory?] {
        store.count(histories: streaks.count)
        return try reader.dueHistories(of: streaks)
    }
    func plannedStreaks(through: Instant, after: RunPosition?, limit: Int) throws -> [PlannedStreak] {
        let page = try reader.plannedStreaks(through: through, after: after, limit: limit)
        defer { store.count(ended: page.isEmpty) }
        return handOut(page)
    }
    func eachPlannedStreak(through: Instant, first: Int, most: Int, _ body: ([PlannedStreak]) throws -> Void) throws {
        // The store's own way (PostgreSQL: one COPY), counted and garbled as pages are.
        try reader.eachPlannedStreak(through: through, first: first, most: most) { try body(handOut($0)) }
        store.count(ended: true)
    }
    /// A page as handed out: counted, and every `garbleEvery`th run's carried bytes made not a history.
    func handOut(_ batch: [PlannedStreak]) -> [PlannedStreak] {
        var page = batch
        let (before, every) = (store.handedOut, store.garbleEvery)
        store.count(handedOut: page.count)
        for i in page.indices where every > 0 && (before + i) % every == 0 {
            page[i].carried?.packed = [0xFF][...]
        }
        return page
    }
    func changedStreaks(every: Bool, after: Int64?, limit: Int) throws -> [DueStreak] {
        try reader.changedStreaks(every: every, after: after, limit: limit)
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
}
