/// A quick reader for the plain JSON lines that bulk files hold: one object of
/// strings without escapes, integers, booleans, nulls and objects of those.
/// It answers nil for anything else (escapes, fractions, arrays, repeated keys,
/// any error), and `JSONInput.object` then asks `JSONDecoder`, whose answers
/// and messages are the contract; on what it accepts, both agree
/// (`JSONLineTests`).
struct JSONLine {
    private let b: UnsafeBufferPointer<UInt8>
    private var i = 0

    static func object(_ utf8: UnsafeBufferPointer<UInt8>) -> [String: JSONInput]? {
        var reader = JSONLine(b: utf8)
        guard case .object(let o)? = reader.object(depth: 0) else { return nil }
        reader.skipSpace()
        return reader.i == utf8.count ? o : nil
    }

    private init(b: UnsafeBufferPointer<UInt8>) { self.b = b }

    private mutating func object(depth: Int) -> JSONInput? {
        guard depth < 2, next() == 123 else { return nil }  // {
        var fields: [String: JSONInput] = [:]
        skipSpace()
        if peek() == 125 {  // }
            i += 1
            return .object(fields)
        }
        while true {
            skipSpace()
            guard let key = string() else { return nil }
            skipSpace()
            guard next() == 58 else { return nil }  // :
            skipSpace()
            guard let value = value(depth: depth), fields.updateValue(value, forKey: key) == nil else { return nil }
            skipSpace()
            switch next() {
            case 44: continue  // ,
            case 125: return .object(fields)
            default: return nil
            }
        }
    }

    private mutating func value(depth: Int) -> JSONInput? {
        guard let c = peek() else { return nil }
        switch c {
        case 34: return string().map(JSONInput.string)
        case 123: return object(depth: depth + 1)
        case 116: return word("true", .bool(true))
        case 102: return word("false", .bool(false))
        case 110: return word("null", .null)
        case 45, 48...57: return integer()
        default: return nil
        }
    }

    /// A string without escapes or control characters.
    private mutating func string() -> String? {
        guard next() == 34 else { return nil }
        let start = i
        while i < b.count {
            let c = b[i]
            if c == 34 {
                i += 1
                return String(decoding: UnsafeBufferPointer(rebasing: b[start..<(i - 1)]), as: UTF8.self)
            }
            if c == 92 || c < 32 { return nil }  // a backslash or a control character
            i += 1
        }
        return nil
    }

    /// `-?(0|[1-9][0-9]*)`, at most 18 digits: always an Int64.
    private mutating func integer() -> JSONInput? {
        let negative = peek() == 45
        if negative { i += 1 }
        let start = i
        var value: Int64 = 0
        while let c = peek(), c >= 48, c <= 57 {
            value = value * 10 + Int64(c - 48)
            i += 1
            guard i - start <= 18 else { return nil }
        }
        let digits = i - start
        guard digits >= 1, b[start] != 48 || digits == 1, !(negative && value == 0) else { return nil }
        if let c = peek(), c == 46 || c == 101 || c == 69 { return nil }  // . e E
        return .integer(negative ? -value : value)
    }

    private mutating func word(_ text: StaticString, _ value: JSONInput) -> JSONInput? {
        let n = text.utf8CodeUnitCount
        guard i + n <= b.count else { return nil }
        for k in 0..<n where b[i + k] != text.utf8Start[k] { return nil }
        i += n
        return value
    }

    private mutating func skipSpace() {
        while let c = peek(), c == 32 || c == 9 || c == 10 || c == 13 { i += 1 }
    }

    private func peek() -> UInt8? { i < b.count ? b[i] : nil }

    private mutating func next() -> UInt8? {
        defer { i += 1 }
        return peek()
    }
}
