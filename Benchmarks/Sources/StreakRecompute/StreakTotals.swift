import StreakCore
import StreakJobs
@_spi(Benchmarks) import StreakSQLite
import StreakStore

/// Every streak's current and longest streak, summed: recomputation from full history.
public struct StreakTotals: Sendable {
    public var streaks = 0
    /// Streaks whose packed history was current (the rest were read from the tables).
    public var packed = 0
    public var checkins = 0
    public var current = 0
    public var longest = 0

    public init() {}

    public mutating func add(_ o: StreakTotals) {
        streaks += o.streaks
        packed += o.packed
        checkins += o.checkins
        current += o.current
        longest += o.longest
    }
}

extension Context {
    /// Every streak in part `part` of `parts` of the schedule, recomputed from its whole history
    /// as of `now` (`Engine.lengths`, exactly `Engine.evaluate`'s lengths); parts run in
    /// parallel over connections of their own. A current packed history of one zone, under a
    /// goal of 1 with no leeway and no freeze event yet, is walked straight from its bytes;
    /// any other is unpacked, and a stale one read from the tables.
    public func streakTotals(in store: SQLiteStore, part: Int, of parts: Int) throws -> StreakTotals {
        var totals = StreakTotals()
        var settings = SettingsCache(context: self)
        var zone = ZoneCache(book: zones)
        var instants = UnsafeMutableBufferPointer<Instant>.allocate(capacity: 64)
        defer { instants.deallocate() }
        var stale: [(user: String, streak: String)] = []
        try store.readScheduleRows { r, rows in
            try rows.each(part: part, of: parts) { user, streak, packed in
                guard let packed else {
                    stale.append((String(decoding: user, as: UTF8.self), String(decoding: streak, as: UTF8.self)))
                    return
                }
                let info = try settings.info(streak, in: r)
                totals.packed += 1
                totals.streaks += 1
                if info.simple, let lengths = try simple(packed, &instants, info.freeze, &zone, &totals) {
                    totals.current += lengths.current
                    totals.longest += lengths.longest
                    return
                }
                let (u, s) = (String(decoding: user, as: UTF8.self), String(decoding: streak, as: UTF8.self))
                guard let stored = PackedHistory.unpack(packed, user: u, streak: s) else {
                    totals.packed -= 1
                    totals.streaks -= 1
                    stale.append((u, s))
                    return
                }
                add(stored, epochs: info.epochs, to: &totals)
            }
            for (user, streak) in stale {
                guard let found = try r.user(user) else { continue }
                let stored = try r.storedStreak(of: found, streak: streak)
                totals.streaks += 1
                add(stored, epochs: try settings.info(named: streak, in: r).epochs, to: &totals)
            }
        }
        return totals
    }

    private func add(_ stored: StoredStreak, epochs: [SettingsEpoch], to totals: inout StreakTotals) {
        guard let history = try? history(of: stored, epochs: epochs) else { return }
        let lengths = Engine.lengths(history, at: now)
        totals.checkins += stored.checkins.count
        totals.current += lengths.current
        totals.longest += lengths.longest
    }

    /// The simple walk on a packed history's bytes; nil when it is not one zone, a freeze
    /// event happened by now, or a check-in was in another zone.
    private func simple(
        _ packed: UnsafeBufferPointer<UInt8>, _ instants: inout UnsafeMutableBufferPointer<Instant>,
        _ freeze: FreezeSettings, _ zones: inout ZoneCache, _ totals: inout StreakTotals
    ) throws -> (current: Int, longest: Int)? {
        let cap = Int64(config.backfillDays) * Instant.day
        var n = 0
        let buffer = instants
        var full = false
        var paused = false
        guard
            let one = PackedHistory.oneZone(
                packed,
                { at, storedAt in
                    guard at <= now + Engine.clockSkew && at >= storedAt - cap else { return }
                    guard n < buffer.count else {
                        full = true
                        return
                    }
                    buffer[n] = at
                    n += 1
                }, pause: { _ in paused = true })
        else { return nil }
        if full {
            // More check-ins than room: grow, and read them again.
            instants.deallocate()
            instants = .allocate(capacity: max(2 * instants.count, one.checkins))
            return try simple(packed, &instants, freeze, &zones, &totals)
        }
        // A pause bridges its dates whenever it was recorded: the engine's.
        if paused { return nil }
        if let first = one.firstOtherEvent, first <= now { return nil }
        guard
            let lengths = try zones.with(one.zone, {
                Engine.simpleLengths(
                    zone: $0, instants: UnsafeMutableBufferPointer(rebasing: instants[..<n]), freeze: freeze, now: now)
            })
        else { return nil }
        totals.checkins += one.checkins
        return lengths
    }
}

/// A streak id's settings and epochs, looked up once.
private struct SettingsCache {
    struct Info {
        var freeze: FreezeSettings
        var epochs: [SettingsEpoch]
        /// Goal 1 and no leeway, now and in every epoch up to now.
        var simple: Bool
    }

    let context: Context
    var last: (id: [UInt8], info: Info)?
    var known: [String: Info] = [:]

    init(context: Context) { self.context = context }

    mutating func info(_ id: UnsafeBufferPointer<UInt8>, in reader: any StoreReader) throws -> Info {
        if let last, last.id.withUnsafeBufferPointer({ sameBytes($0, id) }) { return last.info }
        let info = try info(named: String(decoding: id, as: UTF8.self), in: reader)
        last = (Array(id), info)
        return info
    }

    mutating func info(named id: String, in reader: any StoreReader) throws -> Info {
        let info = try known[id] ?? make(id, reader)
        known[id] = info
        return info
    }

    private func make(_ id: String, _ reader: any StoreReader) throws -> Info {
        let s = context.config.settings(for: id)
        let epochs = try reader.settingsEpochs(of: id)
        let simple =
            s.goal == 1 && s.leewayHours == 0
            && epochs.allSatisfy { $0.since > context.now || ($0.goal == 1 && $0.leewayHours == 0) }
        return Info(freeze: s.freeze, epochs: epochs, simple: simple)
    }
}

/// Zones by their name's bytes, each made once: a million streaks over a few hundred zones. A
/// zone is found by its number in a `ByteTable`, not by a String made from the bytes and hashed
/// again by a Dictionary (with the zone's copy out of it, a quarter of the recomputation's
/// samples). The zone handed to `body` is still copied (`perf annotate`: its name and rules
/// retained), as the engine takes it by value.
private struct ZoneCache {
    let book: ZoneBook
    var names = ByteTable(capacity: 1024)
    var zones: [Zone] = []

    init(book: ZoneBook) { self.book = book }

    mutating func with<R>(_ name: UnsafeBufferPointer<UInt8>, _ body: (Zone) throws -> R) throws -> R {
        let n: Int
        if let found = names.value(name) {
            n = Int(found)
        } else {
            n = zones.count
            zones.append(try book.stored(String(decoding: name, as: UTF8.self)))
            names.add(name, value: UInt64(n))
        }
        return try zones.withUnsafeBufferPointer { try body($0[n]) }
    }
}
