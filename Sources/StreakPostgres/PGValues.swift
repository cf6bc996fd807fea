import StreakCore

/// A value sent as a text-format parameter: `Int64`, `Int`, `String`, `Bool`, `[UInt8]` (bytea),
/// an `Instant` (bigint seconds), an optional of one (NULL), and arrays of `Int64`, `Int`,
/// `String` and their optionals as PostgreSQL array literals (`= ANY($1::bigint[])`,
/// `unnest($1::text[])`).
public protocol PGEncodable {
    /// Appends the value's text form, without a terminating NUL; returns false for NULL (then
    /// appends nothing).
    func appendPGText(to bytes: inout [UInt8]) -> Bool
}

/// A value read from a result's text, or from its binary form (a statement sent with
/// `binaryResults`): nil is NULL; returns nil when the value is not one.
public protocol PGDecodable {
    init?(pgText text: UnsafeBufferPointer<UInt8>?)
    init?(pgBinary value: UnsafeBufferPointer<UInt8>?)
    /// What the value is, for messages ("a bigint").
    static var pgTypeName: String { get }
}

/// An element of an array parameter.
public protocol PGArrayElement {
    func appendPGArrayElement(to bytes: inout [UInt8])
}

// MARK: Integers

extension Int64: PGEncodable, PGDecodable, PGArrayElement {
    public func appendPGText(to bytes: inout [UInt8]) -> Bool {
        appendDecimal(self, to: &bytes)
        return true
    }
    public func appendPGArrayElement(to bytes: inout [UInt8]) { appendDecimal(self, to: &bytes) }

    public init?(pgText text: UnsafeBufferPointer<UInt8>?) {
        guard let text, let value = parseDecimal(text) else { return nil }
        self = value
    }
    /// bigint, integer or smallint: big-endian, by the value's length.
    public init?(pgBinary value: UnsafeBufferPointer<UInt8>?) {
        guard let value, value.count == 8 || value.count == 4 || value.count == 2 else { return nil }
        var n: UInt64 = 0
        for byte in value { n = n << 8 | UInt64(byte) }
        let unused = UInt64(64 - 8 * value.count)
        self = Int64(bitPattern: n << unused) >> Int64(unused)  // sign-extended
    }
    public static var pgTypeName: String { "a bigint" }
}

extension Int: PGEncodable, PGDecodable, PGArrayElement {
    public func appendPGText(to bytes: inout [UInt8]) -> Bool { Int64(self).appendPGText(to: &bytes) }
    public func appendPGArrayElement(to bytes: inout [UInt8]) { appendDecimal(Int64(self), to: &bytes) }
    public init?(pgText text: UnsafeBufferPointer<UInt8>?) {
        guard let value = Int64(pgText: text) else { return nil }
        self = Int(value)
    }
    public init?(pgBinary value: UnsafeBufferPointer<UInt8>?) {
        guard let value = Int64(pgBinary: value) else { return nil }
        self = Int(value)
    }
    public static var pgTypeName: String { "an integer" }
}

extension Instant: PGEncodable, PGDecodable, PGArrayElement {
    public func appendPGText(to bytes: inout [UInt8]) -> Bool { seconds.appendPGText(to: &bytes) }
    public func appendPGArrayElement(to bytes: inout [UInt8]) { appendDecimal(seconds, to: &bytes) }
    public init?(pgText text: UnsafeBufferPointer<UInt8>?) {
        guard let seconds = Int64(pgText: text) else { return nil }
        self.init(seconds: seconds)
    }
    public init?(pgBinary value: UnsafeBufferPointer<UInt8>?) {
        guard let seconds = Int64(pgBinary: value) else { return nil }
        self.init(seconds: seconds)
    }
    public static var pgTypeName: String { "an instant (bigint seconds since 1970)" }
}

/// Writes `value` in decimal without making a String.
@inline(__always)
func appendDecimal(_ value: Int64, to bytes: inout [UInt8]) {
    if value < 0 { bytes.append(UInt8(ascii: "-")) }
    var magnitude = value.magnitude  // unsigned, so Int64.min works
    var digits: (UInt64, UInt64, UInt64) = (0, 0, 0)  // 24 bytes for at most 19 digits
    withUnsafeMutableBytes(of: &digits) { buffer in
        var i = buffer.count
        repeat {
            i -= 1
            buffer[i] = UInt8(truncatingIfNeeded: magnitude % 10) + 48
            magnitude /= 10
        } while magnitude > 0
        bytes.append(contentsOf: buffer[i...])
    }
}

/// Parses an optionally signed decimal integer that fills the whole text.
func parseDecimal(_ text: UnsafeBufferPointer<UInt8>) -> Int64? {
    var i = 0
    var negative = false
    if i < text.count && (text[i] == UInt8(ascii: "-") || text[i] == UInt8(ascii: "+")) {
        negative = text[i] == UInt8(ascii: "-")
        i += 1
    }
    guard i < text.count else { return nil }
    var magnitude: UInt64 = 0
    while i < text.count {
        let d = text[i] &- 48
        guard d < 10 else { return nil }
        let (times10, o1) = magnitude.multipliedReportingOverflow(by: 10)
        let (sum, o2) = times10.addingReportingOverflow(UInt64(d))
        guard !o1 && !o2 else { return nil }
        magnitude = sum
        i += 1
    }
    if negative {
        guard magnitude <= UInt64(Int64.max) + 1 else { return nil }
        return magnitude == UInt64(Int64.max) + 1 ? Int64.min : -Int64(magnitude)
    }
    guard magnitude <= UInt64(Int64.max) else { return nil }
    return Int64(magnitude)
}

// MARK: Text and booleans

extension String: PGEncodable, PGDecodable, PGArrayElement {
    public func appendPGText(to bytes: inout [UInt8]) -> Bool {
        bytes.append(contentsOf: utf8)
        return true
    }

    /// Double-quoted, with `"` and `\` escaped by a backslash (PostgreSQL's array syntax).
    public func appendPGArrayElement(to bytes: inout [UInt8]) {
        bytes.append(UInt8(ascii: "\""))
        for byte in utf8 {
            if byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") { bytes.append(UInt8(ascii: "\\")) }
            bytes.append(byte)
        }
        bytes.append(UInt8(ascii: "\""))
    }

    public init?(pgText text: UnsafeBufferPointer<UInt8>?) {
        guard let text else { return nil }
        self.init(decoding: text, as: UTF8.self)
    }
    /// text's binary form is its bytes.
    public init?(pgBinary value: UnsafeBufferPointer<UInt8>?) { self.init(pgText: value) }
    public static var pgTypeName: String { "text" }
}

extension Bool: PGEncodable, PGDecodable {
    public func appendPGText(to bytes: inout [UInt8]) -> Bool {
        bytes.append(self ? UInt8(ascii: "t") : UInt8(ascii: "f"))
        return true
    }
    public init?(pgText text: UnsafeBufferPointer<UInt8>?) {
        guard let text, text.count == 1 else { return nil }
        switch text[0] {
        case UInt8(ascii: "t"): self = true
        case UInt8(ascii: "f"): self = false
        default: return nil
        }
    }
    public init?(pgBinary value: UnsafeBufferPointer<UInt8>?) {
        guard let value, value.count == 1, value[0] <= 1 else { return nil }
        self = value[0] == 1
    }
    public static var pgTypeName: String { "a boolean" }
}

// MARK: NULL

extension Optional: PGEncodable where Wrapped: PGEncodable {
    public func appendPGText(to bytes: inout [UInt8]) -> Bool {
        guard let value = self else { return false }
        return value.appendPGText(to: &bytes)
    }
}

extension Optional: PGArrayElement where Wrapped: PGArrayElement {
    public func appendPGArrayElement(to bytes: inout [UInt8]) {
        if let value = self {
            value.appendPGArrayElement(to: &bytes)
        } else {
            bytes.append(contentsOf: "NULL".utf8)
        }
    }
}

extension Optional: PGDecodable where Wrapped: PGDecodable {
    public init?(pgText text: UnsafeBufferPointer<UInt8>?) {
        guard let text else {
            self = .none
            return
        }
        guard let value = Wrapped(pgText: text) else { return nil }
        self = .some(value)
    }
    public init?(pgBinary value: UnsafeBufferPointer<UInt8>?) {
        guard let value else {
            self = .none
            return
        }
        guard let wrapped = Wrapped(pgBinary: value) else { return nil }
        self = .some(wrapped)
    }
    public static var pgTypeName: String { Wrapped.pgTypeName + " or NULL" }
}

// MARK: Arrays and bytea

/// `[UInt8]` is bytea (hex, `\x…`); every other array is a PostgreSQL array literal. (Swift
/// allows one conditional conformance of Array, so bytes take this branch: PostgreSQL has no
/// array of unsigned bytes for them to mean instead.)
extension UInt8: PGArrayElement {
    public func appendPGArrayElement(to bytes: inout [UInt8]) { appendDecimal(Int64(self), to: &bytes) }
}

extension Array: PGEncodable where Element: PGArrayElement {
    public func appendPGText(to bytes: inout [UInt8]) -> Bool {
        // By type, not by `as? [UInt8]`: an empty array of anything casts to [UInt8].
        if Element.self == UInt8.self {
            withUnsafeBytes { appendHex($0, to: &bytes) }
            return true
        }
        bytes.append(UInt8(ascii: "{"))
        for (i, element) in enumerated() {
            if i > 0 { bytes.append(UInt8(ascii: ",")) }
            element.appendPGArrayElement(to: &bytes)
        }
        bytes.append(UInt8(ascii: "}"))
        return true
    }
}

extension Array: PGDecodable where Element == UInt8 {
    /// bytea in hex output (`\x0a1b`), which the connection sets (`bytea_output=hex`).
    public init?(pgText text: UnsafeBufferPointer<UInt8>?) {
        guard let text, text.count >= 2, text[0] == UInt8(ascii: "\\"), text[1] == UInt8(ascii: "x"),
            text.count % 2 == 0
        else { return nil }
        var bytes = [UInt8]()
        bytes.reserveCapacity((text.count - 2) / 2)
        var i = 2
        while i < text.count {
            guard let high = hexValue(text[i]), let low = hexValue(text[i + 1]) else { return nil }
            bytes.append(high << 4 | low)
            i += 2
        }
        self = bytes
    }
    /// bytea's binary form is its bytes.
    public init?(pgBinary value: UnsafeBufferPointer<UInt8>?) {
        guard let value else { return nil }
        self = Array(value)
    }
    public static var pgTypeName: String { "bytea" }
}

private let hexDigits = Array("0123456789abcdef".utf8)

func appendHex(_ data: UnsafeRawBufferPointer, to bytes: inout [UInt8]) {
    bytes.reserveCapacity(bytes.count + 2 + data.count * 2)
    bytes.append(UInt8(ascii: "\\"))
    bytes.append(UInt8(ascii: "x"))
    for byte in data {
        bytes.append(hexDigits[Int(byte >> 4)])
        bytes.append(hexDigits[Int(byte & 15)])
    }
}

func hexValue(_ c: UInt8) -> UInt8? {
    switch c {
    case 48...57: c - 48
    case 97...102: c - 87
    case 65...70: c - 55
    default: nil
    }
}
