/// The shapes of ids and names streakd accepts (SPEC §1). Each check answers
/// `nil` when the text is valid, or a sentence saying what would be valid.
public enum Validate {
    public static let userIDRule = "1 to 128 characters: a letter or digit, then letters, digits, '.', '_', '@' or '-'"
    public static let streakIDRule = "1 to 64 characters of a-z, 0-9 and '_'"
    public static let eventIDRule = "1 to 128 printable ASCII characters without spaces"
    public static let metaKeyRule = "a lowercase letter, then up to 63 of a-z, 0-9 and '_'"
    public static let maxMetaString = 1024

    public static func userID(_ s: String) -> String? {
        var s = s
        return s.withUTF8(isUserID) ? nil : userIDRule
    }

    public static func streakID(_ s: String) -> String? {
        var s = s
        return s.withUTF8(isStreakID) ? nil : streakIDRule
    }

    public static func eventID(_ s: String) -> String? {
        var s = s
        return s.withUTF8(isEventID) ? nil : eventIDRule
    }

    /// The same checks on UTF-8 bytes (bulk imports read bytes, not strings).
    public static func isUserID(_ b: UnsafeBufferPointer<UInt8>) -> Bool {
        (1...128).contains(b.count) && isAlnum(b[0])
            && b.allSatisfy({ isAlnum($0) || $0 == 46 || $0 == 95 || $0 == 64 || $0 == 45 })
    }

    public static func isStreakID(_ b: UnsafeBufferPointer<UInt8>) -> Bool {
        (1...64).contains(b.count) && b.allSatisfy({ isLowerOrDigit($0) || $0 == 95 })
    }

    public static func isEventID(_ b: UnsafeBufferPointer<UInt8>) -> Bool {
        (1...128).contains(b.count) && b.allSatisfy({ $0 > 32 && $0 < 127 })
    }

    public static func metaKey(_ s: String) -> String? {
        let b = Array(s.utf8)
        guard (1...64).contains(b.count), b[0] >= 97, b[0] <= 122,
            b.allSatisfy({ isLowerOrDigit($0) || $0 == 95 })
        else { return metaKeyRule }
        return nil
    }

    /// `HH:MM`, 00:00 to 23:59; answers seconds into the day.
    public static func wallTime(_ s: String) -> Int? {
        let b = Array(s.utf8)
        guard b.count == 5, b[2] == 58, let h = Digits.parse(b[0..<2]), let m = Digits.parse(b[3..<5]), h < 24, m < 60
        else { return nil }
        return h * 3600 + m * 60
    }

    public static func wallTimeText(_ seconds: Int) -> String {
        Digits.pad(seconds / 3600, 2) + ":" + Digits.pad(seconds / 60 % 60, 2)
    }

    private static func isAlnum(_ c: UInt8) -> Bool {
        (c >= 48 && c <= 57) || (c >= 65 && c <= 90) || (c >= 97 && c <= 122)
    }
    private static func isLowerOrDigit(_ c: UInt8) -> Bool { (c >= 48 && c <= 57) || (c >= 97 && c <= 122) }
}

/// A metadata value: string, bool or integer (SPEC §1).
public enum MetaValue: Equatable, Sendable {
    case string(String)
    case bool(Bool)
    case integer(Int64)
}

/// A check-in's metadata, kept in key order.
public typealias Metadata = [(key: String, value: MetaValue)]
