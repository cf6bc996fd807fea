import Foundation

/// The offset rules of one time zone. Where they come from (tables built from
/// the system's TZif files, or Foundation's TimeZone) is the caller's choice.
/// Rules are shared, immutable objects: a `Zone` copies as one reference.
public protocol ZoneRules: AnyObject, Sendable {
    /// Seconds east of UTC in force at an instant.
    func offset(at instant: Instant) -> Int

    /// The instant of a wall-clock reading, given as seconds since
    /// 1970-01-01T00:00 local time. A reading in a gap moves forward by the
    /// gap; one that occurs twice takes the first occurrence.
    func instant(ofLocal local: Int64) -> Instant
}

extension ZoneRules {
    public func instant(ofLocal local: Int64) -> Instant { searchInstant(ofLocal: local) }

    /// `instant(ofLocal:)` from offsets alone: the offsets a day either side
    /// are the candidates; the earliest that maps back to itself wins.
    public func searchInstant(ofLocal local: Int64) -> Instant {
        let before = offset(at: Instant(seconds: local - Instant.day))
        let after = offset(at: Instant(seconds: local + Instant.day))
        func fits(_ o: Int) -> Bool { offset(at: Instant(seconds: local - Int64(o))) == o }
        switch (fits(before), fits(after)) {
        case (true, true): return Instant(seconds: local - Int64(max(before, after)))
        case (true, false): return Instant(seconds: local - Int64(before))
        case (false, true): return Instant(seconds: local - Int64(after))
        case (false, false):
            // In a gap: keep the offset from before the gap, which lands as far
            // past the gap's end as the wall time was past its start.
            return Instant(seconds: local - Int64(min(before, after)))
        }
    }
}

/// Zone rules read from Foundation's `TimeZone` for a named zone.
public final class FoundationZoneRules: ZoneRules {
    let zone: TimeZone
    public init?(identifier: String) {
        guard let zone = TimeZone(identifier: identifier) else { return nil }
        self.zone = zone
    }
    public func offset(at instant: Instant) -> Int {
        zone.secondsFromGMT(for: Date(timeIntervalSince1970: TimeInterval(instant.seconds)))
    }
}

/// A named zone: an IANA identifier and its rules.
public struct Zone: Sendable, CustomStringConvertible {
    public let identifier: String
    public let rules: any ZoneRules

    public init(identifier: String, rules: any ZoneRules) {
        self.identifier = identifier
        self.rules = rules
    }

    public var description: String { identifier }

    public func offset(at instant: Instant) -> Int { rules.offset(at: instant) }

    /// The calendar date of an instant in this zone.
    public func date(of instant: Instant) -> LocalDate {
        LocalDate(day: Int((instant.seconds + Int64(offset(at: instant))).floorDiv(Instant.day)))
    }

    /// The instant of a local wall-clock time on a date.
    ///
    /// A time that does not exist (a spring-forward gap) moves forward by the
    /// gap's length; a time that occurs twice (fall-back) takes the first
    /// occurrence — the rules of java.time and of zoneinfo with fold=0.
    public func instant(of date: LocalDate, secondsIntoDay: Int) -> Instant {
        rules.instant(ofLocal: Int64(date.day) * Instant.day + Int64(secondsIntoDay))
    }

    /// The first instant of a date (not always 00:00: some zones skip midnight).
    public func start(of date: LocalDate) -> Instant { instant(of: date, secondsIntoDay: 0) }
}
