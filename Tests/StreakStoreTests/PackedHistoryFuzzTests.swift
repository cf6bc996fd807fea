import Foundation
import Synchronization
import StreakCore
import StreakJobs
import StreakStore
import StreakTestKit
import Testing

/// Issue 31, item 8: a packed history is untrusted bytes (a store's copy may be damaged where
/// `store check` did not look). Random mutations of real packed histories must decode quickly to
/// a history with plausible instants, or to nothing; never a trap; and what decodes must evaluate
/// and plan (the engine, a week of reminders) within a time limit: before, a delta mutated into
/// 2^60 seconds sent the engine walking billions of days (`preview` and `status` at 100 % CPU
/// until killed). Seeded; `STREAKD_FUZZ_SEED` replays a run.
@Suite struct PackedHistoryFuzzTests {
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
                b.replaceSubrange(i..<min(i + 1, b.count), with: [0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f])
            }
        }
        return b
    }

    /// Decodes `bytes` both ways and, when they decode, evaluates and plans the history; answers
    /// what went wrong, if anything.
    static func exercise(_ bytes: [UInt8]) -> String? {
        let decoded = bytes.withUnsafeBufferPointer { PackedHistory.unpack($0, user: "u1", streak: "daily") }
        var simple: [Int64] = []
        let one = bytes.withUnsafeBufferPointer { b in PackedHistory.oneZone(b) { at, _ in simple.append(at.seconds) } }
        if one != nil, simple.contains(where: { !plausible.contains($0) }) {
            return "oneZone answered an instant outside 1900-2199"
        }
        guard let stored = decoded else { return nil }
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
        _ = Notices.upcoming(history, policy: NoticePolicy(remindAt: 20 * 60), from: now, through: now + 7 * Instant.day)
        return nil
    }

    @Test func mutatedPackedHistoriesDecodeAndPlanInTimeOrNotAtAll() throws {
        var random = SplitMix64(state: Self.seed)
        var decoded = 0
        var slowest = Duration.zero
        for n in 0..<Self.mutations {
            let original = Self.samples[n % Self.samples.count]
            let bytes = Self.mutate(original, &random)
            // On a thread of its own, with a time limit: a hang is a failure, not a hung test.
            let done = DispatchSemaphore(value: 0)
            let answer = Answer()
            let started = ContinuousClock.now
            Thread.detachNewThread {
                answer.set(Self.exercise(bytes))
                done.signal()
            }
            guard done.wait(timeout: .now() + 10) == .success else {
                Issue.record("mutation \(n) (seed \(Self.seed)) still running after 10 s: \(bytes)")
                return
            }
            slowest = max(slowest, ContinuousClock.now - started)
            if let problem = answer.get() { Issue.record("mutation \(n) (seed \(Self.seed)): \(problem): \(bytes)") }
            if bytes.withUnsafeBufferPointer({ PackedHistory.unpack($0, user: "u1", streak: "daily") }) != nil {
                decoded += 1
            }
        }
        print("packed-history fuzz (seed \(Self.seed)): \(Self.mutations) mutations, \(decoded) decoded, slowest \(slowest)")
        #expect(slowest < .seconds(2))
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

/// The answer of a thread, read after it signalled.
final class Answer: Sendable {
    private let value = Mutex<String?>(nil)
    func set(_ s: String?) { value.withLock { $0 = s } }
    func get() -> String? { value.withLock { $0 } }
}
