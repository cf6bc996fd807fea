import StreakCore
import StreakStore

/// Simple histories without the engine (docs/ARCHITECTURE.md, "The next run"): one zone all along and for
/// every check-in, a goal of one with no leeway and the same rest days in every epoch, no event
/// but pauses, and nothing counted later than now. `Notices.upcoming(zone:instants:…)` walks the dates once; the two
/// agree on random histories (`SimpleNoticesTests`).
extension PreviewPlan {
    /// `Notices.upcoming` over a simple history's packed bytes, without unpacking it
    /// (`PackedHistory.oneZone`), into `notices`; its zone's number, or nil when it is not simple.
    mutating func simpleNotices(packed: UnsafeBufferPointer<UInt8>, freeze: FreezeSettings, rest: RestDays) throws
        -> Int32?
    {
        let (cap, latest) = (self.cap, self.latest)
        var list = instants
        instants = []
        defer { instants = list }
        list.removeAll(keepingCapacity: true)
        var counts = true
        var pauses: [DateSpan] = []
        let one = PackedHistory.oneZone(packed) { at, storedAt in
            guard at >= storedAt - cap else { return }  // never counts (backfill)
            if at > latest { counts = false }
            list.append(at)
        } pause: {
            pauses.append($0)
        }
        guard let one, one.firstOtherEvent == nil, counts else { return nil }
        return walk(&list, zone: try zoneNumber(bytes: one.zone), freeze: freeze, rest: rest, pauses: pauses)
    }

    /// The same from a history read from the store.
    mutating func simpleNotices(_ stored: StoredStreak, streak: StreakInfo) throws -> Int32? {
        guard streak.simple else { return nil }
        let (cap, latest, name) = (self.cap, self.latest, stored.zones[0].zone)
        var list = instants
        instants = []
        defer { instants = list }
        list.removeAll(keepingCapacity: true)
        guard
            let pauses = SimpleHistory.pauses(
                zones: stored.zones.count, events: stored.freezeEvents, checkins: stored.checkins, cap: cap,
                latest: latest, into: &list, { ($0.instant, $0.storedAt, $0.zone == name) })
        else { return nil }
        return walk(&list, zone: try zoneNumber(named: name), freeze: streak.freeze, rest: streak.rest, pauses: pauses)
    }

    /// The number of the zone whose name's bytes are `bytes`.
    mutating func zoneNumber(bytes: UnsafeBufferPointer<UInt8>) throws -> Int32 {
        if let known = zoneNumbers.value(bytes) { return Int32(known) }
        let number = try zoneNumber(named: String(decoding: bytes, as: UTF8.self))
        _ = zoneNumbers.add(bytes, value: UInt64(number))
        return number
    }

    /// The number of the zone named `name` in `names`.
    mutating func zoneNumber(named name: String) throws -> Int32 {
        if let i = names.number(zoneNamed: name) { return i }
        return names.number(try context.zones.stored(name))
    }

    /// `Notices.upcoming` over `list` (the instants that count) in zone `index`, into `notices`:
    /// `index`, or nil when the history turns out not to be simple.
    /// (The policy is the run's, `policy`.)
    private mutating func walk(
        _ list: inout [Instant], zone index: Int32, freeze: FreezeSettings, rest: RestDays, pauses: [DateSpan]
    ) -> Int32?
    {
        // Nothing of `self` in the closure: a captured context is a dozen references to retain.
        let (zone, from, through, policy) = (names.zone(index), now, end, policy)
        var found = notices
        notices = []
        found.removeAll(keepingCapacity: true)
        let simple = list.withUnsafeMutableBufferPointer {
            Notices.upcoming(
                zone: zone, instants: $0, freeze: freeze, rest: rest, pauses: pauses, policy: policy, from: from,
                through: through, into: &found)
        }
        notices = found
        return simple ? index : nil
    }
}
