/// Reads one line holding one JSON object (RFC 8259), with messages for people:
/// what is wrong, at which column, in which field, and what would be valid.
///
/// Our own reader rather than Foundation's `JSONDecoder`, which answered with
/// the wrong cause: an integer past Int64 was "a fractional number", a lone
/// surrogate "an array", and a key given twice was taken silently (the last
/// one won). It works on the line's bytes, which `InputFile` has checked are UTF-8.
struct JSONReader {
    /// Objects and arrays nest at most this deep: a check-in needs two levels.
    static let maxDepth = 32

    private let b: UnsafeBufferPointer<UInt8>
    private var i = 0
    /// The top-level field whose value is being read; empty elsewhere.
    private var field = ""

    /// What holds the text, named in messages ("the line ends inside it").
    private let holder: Holder

    private init(_ b: UnsafeBufferPointer<UInt8>, in holder: Holder) { (self.b, self.holder) = (b, holder) }

    /// What holds the object: a line of a file (import's JSON lines) or an HTTP request's body.
    enum Holder: String {
        case line, body

        /// What a holder must hold, said where it holds something else.
        var rule: String { self == .line ? "write one object per line" : "the body must be one object {...}" }
        var expected: String { self == .line ? "expected one object {...} per line" : rule }
    }

    /// The object on the line (or in the body), or what is wrong with it.
    static func object(_ utf8: UnsafeBufferPointer<UInt8>, in holder: Holder = .line) -> Result<
        [String: JSONInput], FieldProblem
    > {
        var reader = JSONReader(utf8, in: holder)
        do throws(FieldProblem) {
            reader.skipSpace()
            guard reader.peek() == 123 else {  // {
                throw FieldProblem(field: "", message: "malformed JSON: " + holder.expected)
            }
            let fields = try reader.object(depth: 1)
            reader.skipSpace()
            if reader.i < utf8.count { throw reader.malformed("text after the object; " + holder.rule) }
            return .success(fields)
        } catch {
            return .failure(error)
        }
    }

    /// The objects of a JSON array of objects (a batch of the HTTP API), or what is wrong with
    /// it, naming the element (from 0) where the error is.
    static func objects(_ utf8: UnsafeBufferPointer<UInt8>) -> Result<[[String: JSONInput]], FieldProblem> {
        var reader = JSONReader(utf8, in: .body)
        var objects: [[String: JSONInput]] = []
        var started = false
        do throws(FieldProblem) {
            reader.skipSpace()
            guard reader.peek() == 91 else {  // [
                throw FieldProblem(field: "", message: "malformed JSON: expected an array of objects [{...}, ...]")
            }
            reader.i += 1
            started = true
            reader.skipSpace()
            if reader.peek() == 93 {
                reader.i += 1
            } else {
                while true {
                    reader.skipSpace()
                    guard reader.peek() == 123 else {
                        throw reader.malformed("element \(objects.count) of the array is not an object {...}")
                    }
                    objects.append(try reader.object(depth: 1))
                    reader.skipSpace()
                    switch reader.peek() {
                    case 44: reader.i += 1  // ,
                    case 93: reader.i += 1  // ]
                    default: throw reader.malformed("expected ',' or ']' after element \(objects.count - 1)")
                    }
                    if utf8[reader.i - 1] == 93 { break }
                }
            }
            reader.skipSpace()
            if reader.i < utf8.count { throw reader.malformed("text after the array") }
            return .success(objects)
        } catch {
            // Where: the element being read, and its field when the error is in one.
            guard started else { return .failure(error) }
            let at = "\(objects.count)" + (error.field.isEmpty ? "" : "/" + error.field)
            return .failure(FieldProblem(field: at, message: error.message))
        }
    }

    private mutating func value(depth: Int) throws(FieldProblem) -> JSONInput {
        skipSpace()
        guard let c = peek() else {
            throw malformed("the \(holder.rawValue) ends where a value should be; " + Self.values)
        }
        switch c {
        case 123: return .object(try object(depth: depth + 1))
        case 91: return try array(depth: depth + 1)
        case 34: return .string(try string())
        case 45, 48...57: return try number()
        default: return try word()
        }
    }

    private mutating func object(depth: Int) throws(FieldProblem) -> [String: JSONInput] {
        guard depth <= Self.maxDepth else { throw malformed("objects and arrays nested deeper than \(Self.maxDepth)") }
        i += 1  // {
        var fields: [String: JSONInput] = [:]
        skipSpace()
        if peek() == 125 {  // }
            i += 1
            return fields
        }
        while true {
            skipSpace()
            guard peek() == 34 else {
                throw malformed(
                    "expected a field name in double quotes\(fields.isEmpty ? "" : " after ','"), found \(found())")
            }
            let key = try string()
            if depth == 1 { field = key }
            skipSpace()
            guard peek() == 58 else {
                throw malformed("expected ':' after the field name \(quoted(key)), found \(found())")
            }  // :
            i += 1
            let value = try value(depth: depth)
            // Swift compares keys as Unicode text: two spellings of one key
            // (composed and decomposed) count as the same key here.
            if fields.updateValue(value, forKey: key) != nil {
                if depth == 1 {
                    throw FieldProblem(field: key, message: "given twice in one object; give each field once")
                }
                throw FieldProblem(field: field, message: "key \(quoted(key)) is given twice; give each key once")
            }
            if depth == 1 { field = "" }
            skipSpace()
            switch peek() {
            case 44: i += 1  // ,
            case 125:  // }
                i += 1
                return fields
            default:
                throw malformed("expected ',' or '}' after the value of \(quoted(key)), found \(found())")
            }
        }
    }

    private mutating func array(depth: Int) throws(FieldProblem) -> JSONInput {
        guard depth <= Self.maxDepth else { throw malformed("objects and arrays nested deeper than \(Self.maxDepth)") }
        i += 1  // [
        skipSpace()
        if peek() == 93 {  // ]
            i += 1
            return .array
        }
        while true {
            _ = try value(depth: depth)
            skipSpace()
            switch peek() {
            case 44: i += 1  // ,
            case 93:  // ]
                i += 1
                return .array
            default: throw malformed("expected ',' or ']' in the array, found \(found())")
            }
        }
    }

    /// A string in double quotes, its escapes read.
    private mutating func string() throws(FieldProblem) -> String {
        let open = i
        i += 1
        let start = i
        // Most strings have no escapes: their bytes are the text.
        while i < b.count, b[i] != 34, b[i] != 92, b[i] >= 32 { i += 1 }
        if i < b.count && b[i] == 34 {
            i += 1
            return String(decoding: UnsafeBufferPointer(rebasing: b[start..<(i - 1)]), as: UTF8.self)
        }
        var text = Array(b[start..<i])
        while true {
            guard i < b.count else {
                throw malformed(
                    "the string is not closed: the \(holder.rawValue) ends inside it", at: open)
            }
            let c = b[i]
            switch c {
            case 34:
                i += 1
                return String(decoding: text, as: UTF8.self)
            case 92:
                try escape(into: &text)
            case 0..<32:
                throw malformed(
                    "a control character (U+\(hex4(UInt32(c)))) inside a string; write it as the escape \\u\(hex4(UInt32(c)))"
                )
            default:
                text.append(c)
                i += 1
            }
        }
    }

    /// One escape after a backslash, appended as UTF-8.
    private mutating func escape(into text: inout [UInt8]) throws(FieldProblem) {
        let at = i
        i += 1
        guard let c = peek() else { throw malformed("the \(holder.rawValue) ends inside an escape", at: at) }
        i += 1
        switch c {
        case 34, 92, 47: text.append(c)  // " \ /
        case 98: text.append(8)  // b
        case 102: text.append(12)  // f
        case 110: text.append(10)  // n
        case 114: text.append(13)  // r
        case 116: text.append(9)  // t
        case 117:  // u
            var scalar = try hex(at: at)
            if (0xD800..<0xDC00).contains(scalar) {
                // The first half of a surrogate pair: the second half must follow as \uDC00…\uDFFF.
                let second = i + 1 < b.count && b[i] == 92 && b[i + 1] == 117 ? hexDigits(i + 2) : nil
                guard let low = second, (0xDC00..<0xE000).contains(low) else {
                    throw malformed(
                        "\\u\(hex4(scalar)) is the first half of a surrogate pair, and its second half (\\udc00 to \\udfff) does not follow; a string must be valid Unicode",
                        at: at)
                }
                i += 6
                scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
            } else if (0xDC00..<0xE000).contains(scalar) {
                throw malformed(
                    "\\u\(hex4(scalar)) is the second half of a surrogate pair without its first half (\\ud800 to \\udbff); a string must be valid Unicode",
                    at: at)
            }
            text.append(contentsOf: String(Unicode.Scalar(scalar)!).utf8)
        default:
            i -= 1
            throw malformed(
                "\\\(describe(at: i)) is not an escape; use \\\", \\\\, \\/, \\b, \\f, \\n, \\r, \\t or \\u and 4 hex digits",
                at: at)
        }
    }

    /// The 4 hex digits after `\u` (at `i`).
    private mutating func hex(at escape: Int) throws(FieldProblem) -> UInt32 {
        guard let value = hexDigits(i) else {
            throw malformed("\\u must be followed by 4 hex digits (0-9, a-f), as in \\u00e9", at: escape)
        }
        i += 4
        return value
    }

    private func hexDigits(_ from: Int) -> UInt32? {
        guard from + 4 <= b.count else { return nil }
        var value: UInt32 = 0
        for k in from..<(from + 4) {
            let c = b[k]
            let digit: UInt8
            switch c {
            case 48...57: digit = c - 48
            case 97...102: digit = c - 87
            case 65...70: digit = c - 55
            default: return nil
            }
            value = value << 4 | UInt32(digit)
        }
        return value
    }

    /// A number. A whole number (also written as 1.0 or 1e2) within Int64 is an
    /// integer; one beyond is kept as written; anything else is fractional.
    private mutating func number() throws(FieldProblem) -> JSONInput {
        let start = i
        if peek() == 45 { i += 1 }  // -
        let intStart = i
        while let c = peek(), c >= 48, c <= 57 { i += 1 }
        let intDigits = intStart..<i
        guard !intDigits.isEmpty else { throw malformed("a number needs a digit after '-'", at: start) }
        if intDigits.count > 1 && b[intStart] == 48 {
            throw malformed("a number must not start with 0 and more digits (write 7, not 07)", at: start)
        }
        var fraction = i..<i
        if peek() == 46 {  // .
            i += 1
            let s = i
            while let c = peek(), c >= 48, c <= 57 { i += 1 }
            fraction = s..<i
            guard !fraction.isEmpty else { throw malformed("a number needs a digit after its '.'", at: start) }
        }
        var exponent = 0
        if let c = peek(), c == 101 || c == 69 {  // e E
            i += 1
            var negative = false
            if let s = peek(), s == 43 || s == 45 {
                negative = s == 45
                i += 1
            }
            let s = i
            while let c = peek(), c >= 48, c <= 57 {
                exponent = min(exponent * 10 + Int(c - 48), 1_000_000)  // far past any Int64
                i += 1
            }
            guard i > s else { throw malformed("a number needs a digit after its exponent 'e'", at: start) }
            if negative { exponent = -exponent }
        }
        if let c = peek(), (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || c == 46 || c == 43 || c == 45 {
            throw malformed("\(quoted(text(start..<(i + 1)))) is not a number", at: start)
        }
        let written = text(start..<i)
        // The significant digits, and the power of ten they are multiplied by.
        var digits = Array(b[intDigits]) + Array(b[fraction])
        var power = exponent - fraction.count
        while let first = digits.first, first == 48 { digits.removeFirst() }
        while let last = digits.last, last == 48 {
            digits.removeLast()
            power += 1
        }
        if digits.isEmpty { return .integer(0) }
        if power < 0 { return .number(written) }
        guard digits.count + power <= 19 else { return .largeInteger(written) }
        var magnitude: UInt64 = 0
        for d in digits + Array(repeating: 48, count: power) {
            let (times10, o1) = magnitude.multipliedReportingOverflow(by: 10)
            let (sum, o2) = times10.addingReportingOverflow(UInt64(d - 48))
            guard !o1, !o2 else { return .largeInteger(written) }
            magnitude = sum
        }
        if b[start] == 45 {
            guard magnitude <= UInt64(Int64.max) + 1 else { return .largeInteger(written) }
            return .integer(Int64(bitPattern: 0 &- magnitude))
        }
        guard magnitude <= UInt64(Int64.max) else { return .largeInteger(written) }
        return .integer(Int64(magnitude))
    }

    /// true, false or null.
    private mutating func word() throws(FieldProblem) -> JSONInput {
        let start = i
        while let c = peek(), (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || (c >= 48 && c <= 57) || c == 95 {
            i += 1
        }
        switch text(start..<i) {
        case "true": return .bool(true)
        case "false": return .bool(false)
        case "null": return .null
        case "":
            i = start
            throw malformed("expected a value, found \(found()); " + Self.values)
        case let w:
            throw malformed(
                "\(quoted(w)) is not a JSON value; text goes in double quotes, and the words JSON knows are true, false and null",
                at: start)
        }
    }

    static let values = "a value is a string in double quotes, a number, true, false, null, an object or an array"

    private mutating func skipSpace() {
        while let c = peek(), c == 32 || c == 9 || c == 10 || c == 13 { i += 1 }
    }

    private func peek() -> UInt8? { i < b.count ? b[i] : nil }

    private func text(_ r: Range<Int>) -> String {
        String(decoding: UnsafeBufferPointer(rebasing: b[r.clamped(to: 0..<b.count)]), as: UTF8.self)
    }

    /// The character at `i` for a message, or the end of the line (or body).
    private func found() -> String { i < b.count ? "'\(describe(at: i))'" : "the end of the \(holder.rawValue)" }

    /// The character that starts at `at`, control characters as U+XXXX.
    private func describe(at: Int) -> String {
        guard at < b.count else { return "" }
        var end = at + 1
        while end < b.count, b[end] & 0xC0 == 0x80 { end += 1 }
        let c = b[at]
        if c < 32 || c == 127 { return "U+\(hex4(UInt32(c)))" }
        return text(at..<end)
    }

    /// The column (in characters, from 1) of the byte at `at`.
    private func column(_ at: Int) -> Int {
        var n = 1
        for k in 0..<min(at, b.count) where b[k] & 0xC0 != 0x80 { n += 1 }
        return n
    }

    private func malformed(_ why: String, at: Int? = nil) -> FieldProblem {
        FieldProblem(field: field, message: "malformed JSON at column \(column(at ?? i)): \(why)")
    }
}

private func hex4(_ v: UInt32) -> String {
    let s = String(v, radix: 16)
    return String(repeating: "0", count: max(0, 4 - s.count)) + s
}
