/// A point in time: whole seconds since 1970-01-01T00:00:00Z.
///
/// streakd keeps instants to the second; fractions in input are dropped.
public struct Instant: Hashable, Comparable, Sendable, CustomStringConvertible {
    public var seconds: Int64

    public init(seconds: Int64) { self.seconds = seconds }

    public static func < (lhs: Instant, rhs: Instant) -> Bool { lhs.seconds < rhs.seconds }
    public static func + (lhs: Instant, rhs: Int64) -> Instant { Instant(seconds: lhs.seconds + rhs) }
    public static func - (lhs: Instant, rhs: Int64) -> Instant { Instant(seconds: lhs.seconds - rhs) }
    public static func - (lhs: Instant, rhs: Instant) -> Int64 { lhs.seconds - rhs.seconds }

    public static let hour: Int64 = 3600
    public static let day: Int64 = 86400

    /// The instants a stored history may hold: 1900-01-01T00:00:00Z to 2199-12-31T23:59:59Z.
    /// Bytes that decode to one outside are no history (`PackedHistory`), and the engine counts
    /// nothing outside: no walk over dates then runs for more than about 110,000 days (a value
    /// of 2^60 seconds would have walked for billions of days, issue 31).
    public static let plausible = Instant(seconds: -2_208_988_800)...Instant(seconds: 7_258_118_399)

    /// `YYYY-MM-DDTHH:MM:SSZ`, in UTC, without fractions.
    public var description: String { RFC3339.format(self, offset: 0, utcZ: true) }
}

/// RFC 3339 timestamps as streakd reads and writes them.
public enum RFC3339 {
    /// Parses `YYYY-MM-DDTHH:MM:SS[.frac](Z|±HH:MM)`. An offset is required.
    public static func parse(_ text: String) -> Instant? {
        var text = text
        return text.withUTF8 { parse(utf8: $0) }
    }

    /// The same from UTF-8 bytes (bulk imports read bytes, not strings).
    public static func parse(utf8 b: UnsafeBufferPointer<UInt8>) -> Instant? {
        guard b.count >= 20, b.count <= 40, b[4] == 45, b[7] == 45, b[10] == 84 || b[10] == 116 || b[10] == 32,
            b[13] == 58, b[16] == 58,
            let y = Digits.parse(b, 0, 4), let mo = Digits.parse(b, 5, 7), let d = Digits.parse(b, 8, 10),
            let date = LocalDate(year: y, month: mo, day: d),
            let hh = Digits.parse(b, 11, 13), let mm = Digits.parse(b, 14, 16), let ss = Digits.parse(b, 17, 19),
            hh < 24, mm < 60, ss < 61
        else { return nil }
        var i = 19
        if b[i] == 46 {  // fraction
            i += 1
            let start = i
            while i < b.count, b[i] >= 48, b[i] <= 57 { i += 1 }
            guard i > start, i - start <= 9 else { return nil }
        }
        guard i < b.count else { return nil }
        var offset = 0
        if b[i] == 90 || b[i] == 122 {  // Z
            guard i + 1 == b.count else { return nil }
        } else if b[i] == 43 || b[i] == 45 {
            guard b.count == i + 6, b[i + 3] == 58, let oh = Digits.parse(b, i + 1, i + 3),
                let om = Digits.parse(b, i + 4, i + 6), oh < 24, om < 60
            else { return nil }
            offset = (oh * 3600 + om * 60) * (b[i] == 45 ? -1 : 1)
        } else {
            return nil
        }
        let local = Int64(date.day) * Instant.day + Int64(hh * 3600 + mm * 60 + min(ss, 59))
        return Instant(seconds: local - Int64(offset))
    }

    /// Formats an instant at a fixed offset: `…Z` when `utcZ` and the offset is 0, else `±HH:MM`.
    public static func format(_ instant: Instant, offset: Int, utcZ: Bool = false) -> String {
        let local = instant.seconds + Int64(offset)
        let days = Int(local.floorDiv(Instant.day))
        let secs = Int(local - Int64(days) * Instant.day)
        let time = Digits.pad(secs / 3600, 2) + ":" + Digits.pad(secs / 60 % 60, 2) + ":" + Digits.pad(secs % 60, 2)
        return LocalDate(day: days).description + "T" + time + offsetText(offset, utcZ: utcZ)
    }

    public static func offsetText(_ offset: Int, utcZ: Bool = false) -> String {
        if offset == 0 && utcZ { return "Z" }
        let sign = offset < 0 ? "-" : "+"
        let a = abs(offset)
        return sign + Digits.pad(a / 3600, 2) + ":" + Digits.pad(a / 60 % 60, 2)
    }
}

extension Int64 {
    /// Division rounding toward negative infinity.
    func floorDiv(_ d: Int64) -> Int64 {
        let q = self / d
        return (self % d != 0 && (self < 0) != (d < 0)) ? q - 1 : q
    }
}
