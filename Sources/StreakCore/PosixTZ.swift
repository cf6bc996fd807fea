/// A POSIX TZ string as found in a TZif footer (RFC 8536 section 3.3), such as
/// `CET-1CEST,M3.5.0,M10.5.0/3` or `<+0545>-5:45`: a standard offset and,
/// optionally, a daylight-saving offset with the rules for its start and end.
///
/// Offsets here are seconds *east* of UTC (the string's signs are west).
/// Rule times may be negative or past 24:00 (up to ±167 hours), as RFC 8536
/// allows. A daylight name without rules is refused rather than guessed.
public struct PosixTZ: Sendable, Equatable {
    /// A day of a year: `Jn` (1...365, February 29 never counted), `n`
    /// (0...365, counting February 29) or `Mm.w.d` (weekday `d`, 0 = Sunday,
    /// of week `w` of month `m`, 5 = the last).
    public enum Day: Sendable, Equatable {
        case julian(Int)
        case zeroBased(Int)
        case monthWeek(month: Int, week: Int, weekday: Int)
    }

    /// When a period starts: a day, and a local time on it in the offset in force before.
    public struct Change: Sendable, Equatable {
        public var day: Day
        public var time: Int
    }

    /// Daylight-saving time: its offset, when it starts and when it ends.
    public struct Daylight: Sendable, Equatable {
        public var offset: Int
        public var start: Change
        public var end: Change
    }

    public var standard: Int
    /// Nil: standard time all year.
    public var daylight: Daylight?

    public init(standard: Int, daylight: Daylight? = nil) {
        self.standard = standard
        self.daylight = daylight
    }

    /// Parses a TZ string; nil if it is not one this reader understands.
    public init?(_ text: String) {
        var p = PosixTZParser(bytes: Array(text.utf8))
        guard p.name(), let std = p.offset(maxHours: 24) else { return nil }
        standard = -std
        if p.atEnd {
            daylight = nil
            return
        }
        guard p.name() else { return nil }
        var dst = standard + 3600
        if !p.peek(UInt8(ascii: ",")) {
            guard let o = p.offset(maxHours: 24) else { return nil }
            dst = -o
        }
        guard p.skip(UInt8(ascii: ",")), let start = p.change(), p.skip(UInt8(ascii: ",")), let end = p.change(),
            p.atEnd
        else { return nil }
        daylight = Daylight(offset: dst, start: start, end: end)
    }

    /// The transitions of a rule year as (UTC instant, offset from then on), in time order.
    /// Empty without daylight-saving time.
    public func transitions(year: Int) -> [(at: Int64, offset: Int)] {
        guard let d = daylight else { return [] }
        let on = (at: Self.instant(d.start, year: year, offsetBefore: standard), offset: d.offset)
        let off = (at: Self.instant(d.end, year: year, offsetBefore: d.offset), offset: standard)
        return on.at <= off.at ? [on, off] : [off, on]
    }

    /// The offset in force at an instant, from the rules alone.
    public func offset(at t: Int64) -> Int {
        guard let d = daylight else { return standard }
        let year = LocalDate(day: Int((t + Int64(standard)).floorDiv(Instant.day))).components.year
        // Transitions sit within a week of their year, so three years bracket t.
        // The latest transition at or before t wins; of equal instants, the
        // later in `transitions(year:)` order (as when a table is built).
        var best = Int64.min
        var offset = standard
        func consider(_ at: Int64, _ o: Int) {
            if at <= t, at >= best { (best, offset) = (at, o) }
        }
        for y in (year - 1)...(year + 1) {
            let on = Self.instant(d.start, year: y, offsetBefore: standard)
            let off = Self.instant(d.end, year: y, offsetBefore: d.offset)
            if on <= off {
                consider(on, d.offset)
                consider(off, standard)
            } else {
                consider(off, standard)
                consider(on, d.offset)
            }
        }
        return offset
    }

    static func instant(_ change: Change, year: Int, offsetBefore: Int) -> Int64 {
        Int64(date(change.day, year: year).day) * Instant.day + Int64(change.time) - Int64(offsetBefore)
    }

    static func date(_ day: Day, year: Int) -> LocalDate {
        let jan1 = LocalDate(year: year, month: 1, day: 1)!
        let leap = LocalDate.daysIn(year: year, month: 2) == 29
        switch day {
        case .julian(let n): return jan1 + (n - 1) + (leap && n >= 60 ? 1 : 0)
        case .zeroBased(let n): return jan1 + n
        case .monthWeek(let month, let week, let weekday):
            let first = LocalDate(year: year, month: month, day: 1)!
            var d = first + (weekday - first.isoWeekday % 7 + 7) % 7 + 7 * (week - 1)
            while d.day - first.day >= LocalDate.daysIn(year: year, month: month) { d = d - 7 }
            return d
        }
    }
}

/// A cursor over the bytes of a TZ string.
struct PosixTZParser {
    let bytes: [UInt8]
    var i = 0

    var atEnd: Bool { i == bytes.count }

    func peek(_ b: UInt8) -> Bool { i < bytes.count && bytes[i] == b }

    mutating func skip(_ b: UInt8) -> Bool {
        guard peek(b) else { return false }
        i += 1
        return true
    }

    /// A zone abbreviation: three or more letters, or `<...>` of letters, digits and signs.
    mutating func name() -> Bool {
        let start = i
        if skip(UInt8(ascii: "<")) {
            while i < bytes.count, bytes[i] != UInt8(ascii: ">") { i += 1 }
            guard i - start >= 4, skip(UInt8(ascii: ">")) else { return false }
            return true
        }
        while i < bytes.count, (bytes[i] | 0x20) >= 97, (bytes[i] | 0x20) <= 122 { i += 1 }
        return i - start >= 3
    }

    mutating func number(maxDigits: Int) -> Int? {
        let start = i
        var value = 0
        while i < bytes.count, bytes[i] >= 48, bytes[i] <= 57, i - start < maxDigits {
            value = value * 10 + Int(bytes[i] - 48)
            i += 1
        }
        return i > start ? value : nil
    }

    /// `[+-]hh[:mm[:ss]]` in seconds, hours at most `maxHours`.
    mutating func offset(maxHours: Int) -> Int? {
        var sign = 1
        if skip(UInt8(ascii: "-")) { sign = -1 } else { _ = skip(UInt8(ascii: "+")) }
        guard let h = number(maxDigits: 3), h <= maxHours else { return nil }
        var seconds = h * 3600
        for scale in [60, 1] {
            guard skip(UInt8(ascii: ":")) else { break }
            guard let v = number(maxDigits: 2), v < 60 else { return nil }
            seconds += v * scale
        }
        return sign * seconds
    }

    /// `date[/time]`; the time defaults to 02:00 and may run from -167 to 167 hours.
    mutating func change() -> PosixTZ.Change? {
        let day: PosixTZ.Day
        if skip(UInt8(ascii: "J")) {
            guard let n = number(maxDigits: 3), (1...365).contains(n) else { return nil }
            day = .julian(n)
        } else if skip(UInt8(ascii: "M")) {
            guard let m = number(maxDigits: 2), (1...12).contains(m), skip(UInt8(ascii: ".")),
                let w = number(maxDigits: 1), (1...5).contains(w), skip(UInt8(ascii: ".")),
                let d = number(maxDigits: 1), (0...6).contains(d)
            else { return nil }
            day = .monthWeek(month: m, week: w, weekday: d)
        } else {
            guard let n = number(maxDigits: 3), n <= 365 else { return nil }
            day = .zeroBased(n)
        }
        var time = 7200
        if skip(UInt8(ascii: "/")) {
            guard let t = offset(maxHours: 167) else { return nil }
            time = t
        }
        return PosixTZ.Change(day: day, time: time)
    }
}
