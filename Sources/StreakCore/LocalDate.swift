/// A calendar date with no zone: a day number counted from 1970-01-01.
///
/// Arithmetic is plain integer arithmetic; conversions use the proleptic
/// Gregorian calendar (Howard Hinnant's civil-date algorithms).
public struct LocalDate: Hashable, Comparable, Sendable, CustomStringConvertible {
    public var day: Int

    public init(day: Int) { self.day = day }

    /// The dates of `Instant.plausible`: 1900-01-01 to 2199-12-31.
    public static let plausible = LocalDate(day: -25_567)...LocalDate(day: 84_005)

    public init?(year: Int, month: Int, day: Int) {
        guard (1...12).contains(month), day >= 1, day <= LocalDate.daysIn(year: year, month: month) else {
            return nil
        }
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yoe = y - era * 400
        let mp = (month + 9) % 12
        let doy = (153 * mp + 2) / 5 + day - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        self.day = era * 146_097 + doe - 719_468
    }

    /// Parses `YYYY-MM-DD` exactly.
    public init?(_ text: Substring) {
        let b = Array(text.utf8)
        guard b.count == 10, b[4] == UInt8(ascii: "-"), b[7] == UInt8(ascii: "-"),
            let y = Digits.parse(b[0..<4]), let m = Digits.parse(b[5..<7]), let d = Digits.parse(b[8..<10])
        else { return nil }
        self.init(year: y, month: m, day: d)
    }

    public init?(_ text: String) { self.init(Substring(text)) }

    public var components: (year: Int, month: Int, day: Int) {
        let z = day + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let doe = z - era * 146_097
        let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146_096) / 365
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        let d = doy - (153 * mp + 2) / 5 + 1
        let m = mp < 10 ? mp + 3 : mp - 9
        return (yoe + era * 400 + (m <= 2 ? 1 : 0), m, d)
    }

    /// 1 = Monday … 7 = Sunday (ISO 8601).
    public var isoWeekday: Int { ((day % 7) + 7 + 3) % 7 + 1 }

    public var description: String {
        let (y, m, d) = components
        return Digits.pad(y, 4) + "-" + Digits.pad(m, 2) + "-" + Digits.pad(d, 2)
    }

    public static func + (lhs: LocalDate, rhs: Int) -> LocalDate { LocalDate(day: lhs.day + rhs) }
    public static func - (lhs: LocalDate, rhs: Int) -> LocalDate { LocalDate(day: lhs.day - rhs) }
    public static func - (lhs: LocalDate, rhs: LocalDate) -> Int { lhs.day - rhs.day }
    public static func < (lhs: LocalDate, rhs: LocalDate) -> Bool { lhs.day < rhs.day }

    static func daysIn(year: Int, month: Int) -> Int {
        switch month {
        case 2: return (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 ? 29 : 28
        case 4, 6, 9, 11: return 30
        default: return 31
        }
    }
}

/// Small helpers for fixed-width decimal fields.
enum Digits {
    static func parse(_ bytes: ArraySlice<UInt8>) -> Int? {
        guard !bytes.isEmpty else { return nil }
        var value = 0
        for b in bytes {
            guard b >= 48, b <= 57 else { return nil }
            value = value * 10 + Int(b - 48)
        }
        return value
    }

    /// The decimal number in `bytes[from..<to]`, digits only.
    static func parse(_ bytes: UnsafeBufferPointer<UInt8>, _ from: Int, _ to: Int) -> Int? {
        guard from < to else { return nil }
        var value = 0
        for i in from..<to {
            let b = bytes[i]
            guard b >= 48, b <= 57 else { return nil }
            value = value * 10 + Int(b - 48)
        }
        return value
    }

    static func pad(_ value: Int, _ width: Int) -> String {
        let s = String(abs(value))
        let padded = s.count >= width ? s : String(repeating: "0", count: width - s.count) + s
        return value < 0 ? "-" + padded : padded
    }
}
