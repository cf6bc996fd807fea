import StreakCore

/// A streak's whole stored history (zones, check-ins, freeze events) packed into
/// one blob, kept in its schedule row by the run that last read it (migration 4,
/// docs/ARCHITECTURE.md "Packed histories"). It stands for the tables only while the
/// streak's version is the one it was packed at: every change moves the version on.
///
/// Layout (integers are LEB128 varints, signed ones zigzag-encoded):
/// format (1), zone names (count, then length and UTF-8 each), zone changes
/// (count, then since and name index each), check-ins (count, then each: `at`
/// minus the previous `at`, name index, `stored_at` minus `at`, event id as
/// 0 for none or length + 1 and UTF-8), freeze events (count, then `at`,
/// kind 0 grant, 1 refill, 2 use followed by the date's day number, 3 pause and 4 repair followed
/// by the first and last dates' day numbers and the author as 0 for none or length + 1 and UTF-8).
public enum PackedHistory {
    @usableFromInline static let format: UInt8 = 1

    public static func pack(_ s: StoredStreak) -> [UInt8] {
        var out = Packer()
        out.bytes.append(format)
        var names: [String] = []
        var index: [String: Int] = [:]
        func name(_ zone: String) -> Int {
            if let i = index[zone] { return i }
            names.append(zone)
            index[zone] = names.count - 1
            return names.count - 1
        }
        let zones = s.zones.map { ($0.since, name($0.zone)) }
        let checkins = s.checkins.map { ($0, name($0.zone)) }
        out.unsigned(names.count)
        for n in names { out.text(n) }
        out.unsigned(zones.count)
        for (since, i) in zones {
            out.signed(since.seconds)
            out.unsigned(i)
        }
        out.unsigned(checkins.count)
        var previous: Int64 = 0
        for (c, i) in checkins {
            out.signed(c.instant.seconds &- previous)
            previous = c.instant.seconds
            out.unsigned(i)
            out.signed(c.storedAt.seconds &- c.instant.seconds)
            if let id = c.eventID {
                out.unsigned(id.utf8.count + 1)
                out.bytes += id.utf8
            } else {
                out.unsigned(0)
            }
        }
        out.unsigned(s.freezeEvents.count)
        for e in s.freezeEvents {
            out.signed(e.at.seconds)
            switch e.kind {
            case .grant: out.unsigned(0)
            case .refill: out.unsigned(1)
            case .use(let date):
                out.unsigned(2)
                out.signed(Int64(date.day))
            case .pause(let from, let until), .repair(let from, let until):
                if case .pause = e.kind { out.unsigned(3) } else { out.unsigned(4) }
                out.signed(Int64(from.day))
                out.signed(Int64(until.day))
                if let author = e.author {
                    out.unsigned(author.utf8.count + 1)
                    out.bytes += author.utf8
                } else {
                    out.unsigned(0)
                }
            }
        }
        return out.bytes
    }

    /// The history packed in `bytes`, or nil when they are not a packed history of this format.
    /// The bytes are not trusted (a store's copy may be damaged where `store check` does not
    /// look): every count is checked against the bytes left (each item takes at least one byte
    /// per field), and every instant and date against `Instant.plausible` and
    /// `LocalDate.plausible`, so decoding ends in time linear in the bytes and nothing decoded
    /// sends a later walk over dates for billions of days (issue 31).
    public static func unpack(_ bytes: UnsafeBufferPointer<UInt8>, user: String, streak: String) -> StoredStreak? {
        var r = Unpacker(bytes: bytes)
        guard r.byte() == format, let nameCount = r.count(each: 1) else { return nil }
        var names: [String] = []
        names.reserveCapacity(nameCount)
        for _ in 0..<nameCount {
            guard let n = r.text() else { return nil }
            names.append(n)
        }
        func name(_ i: Int?) -> String? { i.flatMap { $0 < names.count ? names[$0] : nil } }
        guard let zoneCount = r.count(each: 2), zoneCount > 0 else { return nil }
        var zones: [StoredZoneChange] = []
        zones.reserveCapacity(zoneCount)
        for _ in 0..<zoneCount {
            guard let since = r.instant(), let zone = name(r.count()) else { return nil }
            zones.append(StoredZoneChange(since: since, zone: zone))
        }
        guard let checkinCount = r.count(each: 4) else { return nil }
        var checkins: [StoredCheckin] = []
        checkins.reserveCapacity(checkinCount)
        var at: Int64 = 0
        for _ in 0..<checkinCount {
            guard let delta = r.signed(), let zone = name(r.count()), let stored = r.signed(), let idLength = r.count()
            else { return nil }
            at = at &+ delta
            guard Instant.plausible.contains(Instant(seconds: at)),
                Instant.plausible.contains(Instant(seconds: at &+ stored))
            else { return nil }
            var id: String?
            if idLength > 0 {
                guard let text = r.text(length: idLength - 1) else { return nil }
                id = text
            }
            checkins.append(
                StoredCheckin(
                    instant: Instant(seconds: at), zone: zone, eventID: id, storedAt: Instant(seconds: at &+ stored)))
        }
        guard let freezeCount = r.count(each: 2) else { return nil }
        var events: [FreezeEvent] = []
        for _ in 0..<freezeCount {
            guard let at = r.instant(), let kind = r.count() else { return nil }
            switch kind {
            case 0: events.append(FreezeEvent(at: at, kind: .grant))
            case 1: events.append(FreezeEvent(at: at, kind: .refill))
            case 2:
                guard let date = r.date() else { return nil }
                events.append(FreezeEvent(at: at, kind: .use(date)))
            case 3, 4:
                guard let from = r.date(), let until = r.date(), let length = r.count() else { return nil }
                var author: String?
                if length > 0 {
                    guard let text = r.text(length: length - 1) else { return nil }
                    author = text
                }
                let span: FreezeEvent.Kind = kind == 3 ? .pause(from: from, until: until) : .repair(from: from, until: until)
                events.append(FreezeEvent(at: at, kind: span, author: author))
            default: return nil
            }
        }
        guard r.atEnd else { return nil }
        return StoredStreak(userID: user, zones: zones, streak: streak, checkins: checkins, freezeEvents: events)
    }
}

struct Packer {
    var bytes: [UInt8] = []

    mutating func unsigned(_ value: Int) { unsigned(UInt64(value)) }

    mutating func unsigned(_ value: UInt64) {
        var v = value
        while v >= 0x80 {
            bytes.append(UInt8(v & 0x7f) | 0x80)
            v >>= 7
        }
        bytes.append(UInt8(v))
    }

    mutating func signed(_ value: Int64) { unsigned(UInt64(bitPattern: (value << 1) ^ (value >> 63))) }

    mutating func text(_ s: String) {
        unsigned(s.utf8.count)
        bytes += s.utf8
    }
}

@usableFromInline
struct Unpacker {
    @usableFromInline let bytes: UnsafeBufferPointer<UInt8>
    @usableFromInline var at = 0

    @inlinable init(bytes: UnsafeBufferPointer<UInt8>) { self.bytes = bytes }

    @inlinable var atEnd: Bool { at == bytes.count }

    @inlinable mutating func byte() -> UInt8? {
        guard at < bytes.count else { return nil }
        at += 1
        return bytes[at - 1]
    }

    @inlinable mutating func unsigned() -> UInt64? {
        var value: UInt64 = 0
        var shift: UInt64 = 0
        while let b = byte() {
            guard shift < 64 else { return nil }
            value |= UInt64(b & 0x7f) << shift
            if b < 0x80 { return value }
            shift += 7
        }
        return nil
    }

    /// A count or index: small enough to be one.
    @inlinable mutating func count() -> Int? { unsigned().flatMap { $0 <= UInt64(Int32.max) ? Int($0) : nil } }

    /// A count of items that take at least `each` bytes apiece: no more than the bytes left can hold.
    @inlinable mutating func count(each: Int) -> Int? {
        count().flatMap { $0 <= (bytes.count - at) / each ? $0 : nil }
    }

    /// An instant within `Instant.plausible`.
    @inlinable mutating func instant() -> Instant? {
        signed().flatMap { Instant.plausible.contains(Instant(seconds: $0)) ? Instant(seconds: $0) : nil }
    }

    /// A date (a day number) within `LocalDate.plausible`.
    @inlinable mutating func date() -> LocalDate? {
        signed().flatMap { day in
            Int(exactly: day).flatMap { LocalDate.plausible.contains(LocalDate(day: $0)) ? LocalDate(day: $0) : nil }
        }
    }

    @inlinable mutating func signed() -> Int64? {
        unsigned().map { Int64(bitPattern: $0 >> 1) ^ -Int64(bitPattern: $0 & 1) }
    }

    mutating func text() -> String? { count().flatMap { text(length: $0) } }

    mutating func text(length: Int) -> String? {
        guard length <= bytes.count - at else { return nil }
        defer { at += length }
        return String(validating: UnsafeBufferPointer(rebasing: bytes[at..<at + length]), as: UTF8.self)
    }
}

extension PackedHistory {
    /// What a history of one zone holds, read straight from its bytes without building it.
    public struct OneZone {
        /// The zone's name, as UTF-8 (the packed bytes').
        public var zone: UnsafeBufferPointer<UInt8>
        public var checkins: Int
        /// The earliest event other than a pause (a freeze's grant, refill or use, a repair), if any.
        public var firstOtherEvent: Instant?

        @inlinable init(zone: UnsafeBufferPointer<UInt8>, checkins: Int, firstOtherEvent: Instant?) {
            self.zone = zone
            self.checkins = checkins
            self.firstOtherEvent = firstOtherEvent
        }
    }

    /// When the packed history names one zone only (the user's, all along, and every
    /// check-in's): the zone, with each check-in's instant and stored instant passed to
    /// `checkin` in stored order, and each pause the engine keeps (`FreezeEvent.pausedDates`) to
    /// `pause`. Nil for any other history, or bytes that are not one. Inlinable: `preview` calls
    /// it for each of a million runs.
    @inlinable
    public static func oneZone(
        _ bytes: UnsafeBufferPointer<UInt8>, _ checkin: (_ at: Instant, _ storedAt: Instant) -> Void,
        pause: (DateSpan) -> Void
    ) -> OneZone? {
        var r = Unpacker(bytes: bytes)
        guard r.byte() == format, r.count() == 1, let length = r.count(), length <= bytes.count - r.at else {
            return nil
        }
        let zone = UnsafeBufferPointer(rebasing: bytes[r.at..<r.at + length])
        r.at += length
        // Bounded as `unpack` is: counts by the bytes left, instants and dates plausible. (A
        // check-in already handed to `checkin` stays handed: callers use the answer only when
        // it is not nil.)
        guard r.count() == 1, r.instant() != nil, r.count() == 0, let count = r.count(each: 4) else { return nil }
        var at: Int64 = 0
        for _ in 0..<count {
            guard let delta = r.signed(), r.count() == 0, let stored = r.signed(), let id = r.count(),
                id <= bytes.count - r.at + 1
            else { return nil }
            r.at += max(id - 1, 0)
            at = at &+ delta
            guard Instant.plausible.contains(Instant(seconds: at)),
                Instant.plausible.contains(Instant(seconds: at &+ stored))
            else { return nil }
            checkin(Instant(seconds: at), Instant(seconds: at &+ stored))
        }
        guard let events = r.count(each: 2) else { return nil }
        var first: Instant?
        for _ in 0..<events {
            guard let t = r.instant(), let kind = r.count(), kind <= 4 else { return nil }
            switch kind {
            case 2:
                guard r.date() != nil else { return nil }
            case 3, 4:
                guard let from = r.date(), let until = r.date(), let author = r.count(),
                    author <= bytes.count - r.at + 1
                else { return nil }
                r.at += max(author - 1, 0)
                if kind == 3, let span = DateSpan.pause(from: from, until: until) {
                    pause(span)
                }
            default: break
            }
            if kind != 3 { first = min(first ?? t, t) }
        }
        guard r.atEnd else { return nil }
        return OneZone(zone: zone, checkins: count, firstOtherEvent: first)
    }
}
