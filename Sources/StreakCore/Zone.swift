import Foundation

/// The offset rules of one time zone. The core asks only for offsets; where
/// they come from (Foundation's TimeZone, or tables built from tzdata) is the
/// caller's choice.
public protocol ZoneRules: Sendable {
    /// Seconds east of UTC in force at an instant.
    func offset(at instant: Instant) -> Int
}

/// Zone rules read from Foundation's `TimeZone` for a named zone.
public struct FoundationZoneRules: ZoneRules {
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
        let local = Int64(date.day) * Instant.day + Int64(secondsIntoDay)
        let before = offset(at: Instant(seconds: local - Instant.day))
        let after = offset(at: Instant(seconds: local + Instant.day))
        var best: Int64?
        for o in [before, after] where offset(at: Instant(seconds: local - Int64(o))) == o {
            best = min(best ?? Int64.max, local - Int64(o))
        }
        if let best { return Instant(seconds: best) }
        // In a gap: keep the offset from before the gap, which lands as far
        // past the gap's end as the wall time was past its start.
        return Instant(seconds: local - Int64(min(before, after)))
    }

    /// The first instant of a date (not always 00:00: some zones skip midnight).
    public func start(of date: LocalDate) -> Instant { instant(of: date, secondsIntoDay: 0) }
}
