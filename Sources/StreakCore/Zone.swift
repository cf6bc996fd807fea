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

    /// The stretch of time around an instant in which the offset does not change, if the rules
    /// can tell at once (nil: ask each question).
    func steadyOffset(around instant: Instant) -> SteadyOffset?
}

/// An offset in force over UTC instants `[from, until)`, with no transition inside.
public struct SteadyOffset: Sendable, Equatable {
    public let from: Int64
    public let until: Int64
    public let offset: Int64

    public init(from: Int64, until: Int64, offset: Int) {
        self.from = from
        self.until = until
        self.offset = Int64(offset)
    }

    /// Local times whose answer is `local - offset` for certain: their instant lies two days
    /// inside the stretch, so every search a general answer makes (a day either side) lands in it.
    @inline(__always)
    func instant(ofLocal local: Int64) -> Instant? {
        let t = local &- offset
        return t >= from &+ 2 * Instant.day && t < until &- 2 * Instant.day ? Instant(seconds: t) : nil
    }
}

extension ZoneRules {
    public func instant(ofLocal local: Int64) -> Instant { searchInstant(ofLocal: local) }
    public func steadyOffset(around instant: Instant) -> SteadyOffset? { nil }

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

/// A named zone: an IANA identifier and its rules.
///
/// A zone made `steadied(around:)` an instant answers questions near that instant (months, up
/// to the zone's previous and next transitions) with arithmetic, and all others as before; the
/// answers are the same (tested for every zone over 2020–2040).
public struct Zone: Sendable, CustomStringConvertible {
    public let identifier: String
    public let rules: any ZoneRules
    public let steady: SteadyOffset?

    public init(identifier: String, rules: any ZoneRules) {
        self.identifier = identifier
        self.rules = rules
        steady = nil
    }

    init(identifier: String, rules: any ZoneRules, steady: SteadyOffset?) {
        self.identifier = identifier
        self.rules = rules
        self.steady = steady
    }

    /// The same zone, fast around `instant` (the run's "now").
    public func steadied(around instant: Instant) -> Zone {
        Zone(identifier: identifier, rules: rules, steady: rules.steadyOffset(around: instant))
    }

    public var description: String { identifier }

    @inline(__always)
    public func offset(at instant: Instant) -> Int {
        if let s = steady, instant.seconds >= s.from, instant.seconds < s.until { return Int(s.offset) }
        return rules.offset(at: instant)
    }

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
        if let s = steady, let t = s.instant(ofLocal: local) { return t }
        return rules.instant(ofLocal: local)
    }

    /// The first instant of a date (not always 00:00: some zones skip midnight).
    public func start(of date: LocalDate) -> Instant { instant(of: date, secondsIntoDay: 0) }
}
