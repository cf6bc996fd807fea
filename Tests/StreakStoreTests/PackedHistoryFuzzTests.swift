import Foundation
import GRDB
import StreakCore
import StreakJobs
import StreakStore
import StreakTestKit
import Synchronization
import Testing

@testable import StreakSQLite

/// Issue 31, item 8: a packed history is untrusted bytes (a store's copy may be damaged where
/// `store check` did not look). Random mutations of real packed histories must decode quickly to
/// a history with plausible instants, or to nothing; never a trap; and what decodes must evaluate
/// and plan (the engine, a week of reminders) within a deadline: before, a delta mutated into
/// 2^60 seconds sent the engine walking billions of days (`preview` and `status` at 100 % CPU
/// until killed). In a store, a copy that is not the tables' history is damage: `store check`
/// names it and exits 74, and readers take the tables'. Seeded (the seed is in every failure's
/// message); `STREAKD_FUZZ_SEED` replays a run.
@Suite(.fastTier) struct PackedHistoryFuzzTests {
    static let seed = ProcessInfo.processInfo.environment["STREAKD_FUZZ_SEED"].flatMap { UInt64($0) } ?? 31
    static let mutations = 4000
    /// 1900-01-01 to 2199-12-31 (`Instant.plausible`), spelled out.
    static let plausible: ClosedRange<Int64> = -2_208_988_800...7_258_118_399
    static let now = at("2026-11-21T11:00:00Z")

    /// Real histories as a run packs them: a month of daily check-ins with ids, a move, freezes.
    static let samples: [[UInt8]] = {
        var checkins: [StoredCheckin] = []
        for d in 0..<30 {
            let t = at("2026-10-20T18:00:00Z") + Int64(d) * Instant.day
            checkins.append(StoredCheckin(instant: t, zone: "Europe/Berlin", eventID: "e\(d)", storedAt: t + 5))
        }
        let plain = StoredStreak(
            userID: "u1", zones: [StoredZoneChange(since: Instant(seconds: 0), zone: "Europe/Berlin")],
            streak: "daily", checkins: checkins)
        var travelled = plain
        travelled.zones.append(StoredZoneChange(since: at("2026-11-01T00:00:00Z"), zone: "Asia/Tokyo"))
        travelled.checkins = checkins.enumerated().map { i, c in
            var c = c
            if i > 12 { c.zone = "Asia/Tokyo" }
            if i % 3 == 0 { c.eventID = nil }
            return c
        }
        travelled.freezeEvents = [
            FreezeEvent(at: at("2026-10-25T00:00:00Z"), kind: .grant),
            FreezeEvent(at: at("2026-11-10T00:00:00Z"), kind: .use(day("2026-11-12"))),
            FreezeEvent(at: at("2026-11-15T00:00:00Z"), kind: .refill),
        ]
        return [plain, travelled].map(PackedHistory.pack)
    }()

    /// One random change: a byte set, flipped, put in or taken out, a cut, or a varint grown long.
    static func mutate(_ bytes: [UInt8], _ random: inout SplitMix64) -> [UInt8] {
        var b = bytes
        for _ in 0..<Int.random(in: 1...3, using: &random) where !b.isEmpty {
            let i = Int.random(in: 0..<b.count, using: &random)
            switch Int.random(in: 0..<6, using: &random) {
            case 0: b[i] = UInt8.random(in: 0...255, using: &random)
            case 1: b[i] ^= 1 << UInt8.random(in: 0...7, using: &random)
            case 2: b.insert(UInt8.random(in: 0...255, using: &random), at: i)
            case 3: b.remove(at: i)
            case 4: b = Array(b.prefix(i))
            default:
                // A varint of 60 to 63 bits: counts in the billions, instants of eons.
                b.replaceSubrange(
                    i..<min(i + 1, b.count), with: [0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f])
            }
        }
        return b
    }

    /// Decodes `bytes` both ways and, when they decode, evaluates and plans the history; answers
    /// what went wrong, if anything.
    static func exercise(_ bytes: [UInt8]) -> String? {
        let decoded = bytes.withUnsafeBufferPointer { PackedHistory.unpack($0, user: "u1", streak: "daily") }
        var simple: [Int64] = []
        var pauses: [DateSpan] = []
        let one = bytes.withUnsafeBufferPointer { b in
            PackedHistory.oneZone(b, { at, _ in simple.append(at.seconds) }, pause: { pauses.append($0) })
        }
        if one != nil, simple.contains(where: { !plausible.contains($0) }) {
            return "oneZone answered an instant outside 1900-2199"
        }
        if one != nil, pauses.contains(where: { !LocalDate.plausible.contains($0.from) || !LocalDate.plausible.contains($0.until) }) {
            return "oneZone answered a pause outside 1900-2199"
        }
        guard let stored = decoded else { return nil }
        if one != nil, pauses != stored.freezeEvents.compactMap(\.pausedDates) {
            return "oneZone's pauses \(pauses) are not the history's"
        }
        let instants =
            stored.zones.map(\.since.seconds) + stored.checkins.flatMap { [$0.instant.seconds, $0.storedAt.seconds] }
            + stored.freezeEvents.map(\.at.seconds)
        if let bad = instants.first(where: { !plausible.contains($0) }) {
            return "unpack answered the instant \(bad), outside 1900-2199"
        }
        // Zones that are not zones are the store's damage (74), found before the engine runs.
        let names = Set(stored.zones.map(\.zone) + stored.checkins.map(\.zone))
        var zones: [String: Zone] = [:]
        for name in names {
            guard let rules = FoundationZoneRules(identifier: name) else { return nil }
            zones[name] = Zone(identifier: name, rules: rules)
        }
        let history = StreakHistory(
            checkins: stored.checkins.map {
                CheckIn(instant: $0.instant, zone: zones[$0.zone]!, id: $0.eventID, storedAt: $0.storedAt)
            },
            zones: stored.zones.map { ZoneChange(since: $0.since, zone: zones[$0.zone]!) },
            freezeEvents: stored.freezeEvents)
        let state = StreakCore.Engine.evaluate(history, at: now)
        _ = Notices.due(history, policy: NoticePolicy(remindAt: 20 * 60), since: nil, now: now, state: state)
        _ = Notices.upcoming(
            history, policy: NoticePolicy(remindAt: 20 * 60), from: now, through: now + 7 * Instant.day)
        return nil
    }

    @Test func mutatedPackedHistoriesDecodeAndPlanInTimeOrNotAtAll() throws {
        var random = SplitMix64(state: Self.seed)
        var decoded = 0
        for n in 0..<Self.mutations {
            let original = Self.samples[n % Self.samples.count]
            let bytes = Self.mutate(original, &random)
            // On a thread of its own, with a deadline: a hang is a failure, not a hung test.
            let done = DispatchSemaphore(value: 0)
            let answer = Answer()
            Thread.detachNewThread {
                answer.set(Self.exercise(bytes))
                done.signal()
            }
            guard done.wait(timeout: .now() + 10) == .success else {
                Issue.record("mutation \(n) (seed \(Self.seed)) still running after 10 s: \(bytes)")
                return
            }
            if let problem = answer.get() { Issue.record("mutation \(n) (seed \(Self.seed)): \(problem): \(bytes)") }
            if bytes.withUnsafeBufferPointer({ PackedHistory.unpack($0, user: "u1", streak: "daily") }) != nil {
                decoded += 1
            }
        }
        // Both kinds met: most mutations are no history; some (an id changed, a check-in moved) decode.
        #expect(
            decoded > 0 && decoded < Self.mutations,
            "seed \(Self.seed): \(decoded) of \(Self.mutations) mutations decoded")
    }

    /// A cut anywhere, and every count made huge, is no history: counts are checked against the
    /// bytes left, so nothing reserves room for billions.
    @Test func hugeCountsAreNoHistory() {
        for sample in Self.samples {
            for i in 1..<sample.count {
                var b = sample
                b.replaceSubrange(i..<i + 1, with: [0xff, 0xff, 0xff, 0xff, 0x07])
                let history = b.withUnsafeBufferPointer { PackedHistory.unpack($0, user: "u1", streak: "daily") }
                if let history {
                    #expect(history.checkins.count <= b.count && history.zones.count <= b.count)
                }
            }
        }
    }
}

extension PackedHistoryFuzzTests {
    static let storeMutations = 1000

    /// A store whose u1/daily has the travelled sample's history in its tables, packed as a run
    /// packs it into its schedule row; answers the store, the due streak and the packed bytes.
    static func packedStore() throws -> (store: SQLiteStore, due: DueStreak, bytes: [UInt8]) {
        let store = try SQLiteStore(path: scratch() + "/s.sqlite")
        let stored = try #require(
            samples[1].withUnsafeBufferPointer { PackedHistory.unpack($0, user: "u1", streak: "daily") })
        try store.write { w in
            _ = try w.addUser(User(id: "u1", zone: stored.zones[0].zone), at: stored.zones[0].since)
            try w.updateUser(User(id: "u1", zone: stored.zones[1].zone), at: stored.zones[1].since)
            for c in stored.checkins {
                _ = try w.insertCheckins(
                    [NewCheckin(user: "u1", streak: "daily", instant: c.instant, zone: c.zone, eventID: c.eventID)],
                    storedAt: c.storedAt)
            }
            for e in stored.freezeEvents { try w.addFreezeEvent(e, user: "u1", streak: "daily") }
        }
        func due() throws -> DueStreak {
            try #require(try store.read { try $0.dueStreaks(through: nil) }.first { $0.streak == "daily" })
        }
        let tables = try store.read { r in try r.storedStreak(of: try #require(try r.user("u1")), streak: "daily") }
        let listed = try due()
        _ = try store.write { w in try w.schedule(listed, nextAt: now + 99_999, handledThrough: now, read: tables) }
        let d = try due()
        let packed = try #require(try store.access { try $0.packedHistory(of: d) }, "the run packed no copy")
        try #require(packed == tables, "the copy is not the tables' history before any mutation")
        let bytes = try store.queue.read { db in
            try #require(try Data.fetchOne(db, sql: "SELECT history FROM schedule WHERE user_id = 'u1'"))
        }
        return (store, d, [UInt8](bytes))
    }

    /// Mutations of a store's packed copy: every one that is not the tables' history (all that do
    /// not decode among them) is damage that `store check` names, exiting 74; a reader never takes
    /// one that does not decode (it reads the tables instead). Never a trap.
    @Test func aMutatedCopyInAStoreIsDamageThatStoreCheckFinds() throws {
        let (store, d, original) = try Self.packedStore()
        let tables = try store.read { r in try r.storedStreak(of: try #require(try r.user("u1")), streak: "daily") }
        let (context, _) = try makeContext(now: "2026-11-21T11:00:00Z", store: store)
        var random = SplitMix64(state: Self.seed &+ 1)
        var (undecodable, other, same) = (0, 0, 0)
        for n in 0..<Self.storeMutations {
            let bytes = Self.mutate(original, &random)
            try store.queue.write { db in
                try db.execute(sql: "UPDATE schedule SET history = ? WHERE user_id = 'u1'", arguments: [Data(bytes)])
            }
            let decoded = bytes.withUnsafeBufferPointer { PackedHistory.unpack($0, user: "u1", streak: "daily") }
            let note = "store mutation \(n) (seed \(Self.seed))"
            #expect(try store.access { try $0.packedHistory(of: d) } == decoded, "\(note): the reader's copy")
            let check = try store.check()
            var status: StreakJobs.ExitStatus?
            do { try context.checkStore() } catch let e as StreakdError { status = e.status }
            switch decoded {
            case nil:
                undecodable += 1
                #expect(
                    check.problems.contains { $0.hasSuffix("(u1/daily): its packed history does not decode") },
                    "\(note): \(check)")
                #expect(status == .damaged, "\(note): store check exited \(status?.rawValue ?? 0), not 74")
            case tables?:
                same += 1
                #expect(check.ok && status == nil, "\(note): the tables' own history called damaged: \(check)")
            default:
                other += 1
                #expect(
                    check.problems.contains { $0.hasSuffix("is not the tables' at its version") }, "\(note): \(check)")
                #expect(status == .damaged, "\(note): store check exited \(status?.rawValue ?? 0), not 74")
            }
        }
        let record =
            "seed \(Self.seed): of \(Self.storeMutations) mutated copies \(undecodable) did not decode, "
            + "\(other) decoded to another history, \(same) to the tables'"
        #expect(undecodable > 0 && undecodable + other + same == Self.storeMutations, "\(record)")
    }
}

/// The answer of a thread, read after it signalled.
final class Answer: Sendable {
    private let value = Mutex<String?>(nil)
    func set(_ s: String?) { value.withLock { $0 = s } }
    func get() -> String? { value.withLock { $0 } }
}
