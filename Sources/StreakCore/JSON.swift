/// A JSON value written with its keys in the order given.
public enum JSON: Equatable, Sendable {
    case string(String)
    case int(Int64)
    case bool(Bool)
    case null
    case array([JSON])
    case object([(String, JSON)])

    public static func == (a: JSON, b: JSON) -> Bool { a.text == b.text }

    public static func int(_ v: Int) -> JSON { .int(Int64(v)) }
    public static func optional(_ s: String?) -> JSON { s.map { .string($0) } ?? .null }

    /// One line of compact JSON.
    public var text: String { String(decoding: bytes, as: UTF8.self) }

    /// One line of compact JSON, as UTF-8 (a webhook's body, an HTTP answer).
    public var bytes: [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(256)
        write(to: &out)
        return out
    }

    /// Over several lines as journalctl's `-o json-pretty` writes an entry: a tab per level, a
    /// field a line, `"key" : value`.
    public var prettyText: String {
        var out: [UInt8] = []
        writePretty(to: &out, depth: 0)
        return String(decoding: out, as: UTF8.self)
    }

    func writePretty(to out: inout [UInt8], depth: Int) {
        let tab = UInt8(ascii: "\t")
        switch self {
        case .array(let items) where !items.isEmpty:
            out += "[\n".utf8
            for (i, item) in items.enumerated() {
                out += repeatElement(tab, count: depth + 1)
                item.writePretty(to: &out, depth: depth + 1)
                out += (i == items.count - 1 ? "\n" : ",\n").utf8
            }
            out += repeatElement(tab, count: depth)
            out.append(UInt8(ascii: "]"))
        case .object(let fields) where !fields.isEmpty:
            out += "{\n".utf8
            for (i, (key, value)) in fields.enumerated() {
                out += repeatElement(tab, count: depth + 1)
                JSON.escape(key, into: &out)
                out += " : ".utf8
                value.writePretty(to: &out, depth: depth + 1)
                out += (i == fields.count - 1 ? "\n" : ",\n").utf8
            }
            out += repeatElement(tab, count: depth)
            out.append(UInt8(ascii: "}"))
        default: write(to: &out)
        }
    }

    /// Written as bytes, not appended to a String: a String's appends were about a third of
    /// building a webhook's request.
    func write(to out: inout [UInt8]) {
        switch self {
        case .string(let s): JSON.escape(s, into: &out)
        case .int(let i): out += String(i).utf8
        case .bool(let b): out += (b ? "true" : "false").utf8
        case .null: out += "null".utf8
        case .array(let items):
            out.append(UInt8(ascii: "["))
            for (i, item) in items.enumerated() {
                if i > 0 { out.append(UInt8(ascii: ",")) }
                item.write(to: &out)
            }
            out.append(UInt8(ascii: "]"))
        case .object(let fields):
            out.append(UInt8(ascii: "{"))
            for (i, (key, value)) in fields.enumerated() {
                if i > 0 { out.append(UInt8(ascii: ",")) }
                JSON.escape(key, into: &out)
                out.append(UInt8(ascii: ":"))
                value.write(to: &out)
            }
            out.append(UInt8(ascii: "}"))
        }
    }

    /// A string in quotes, escaped (`appendEscaped`).
    static func escape(_ s: String, into out: inout [UInt8]) {
        out.append(UInt8(ascii: "\""))
        appendEscaped(s, to: &out)
        out.append(UInt8(ascii: "\""))
    }

    /// `s` as inside a JSON string: `"`, `\` and control characters escaped, the rest as it is.
    /// Only ASCII bytes are escaped, so the bytes of a multi-byte scalar are copied unchanged. The
    /// runs between bytes to escape go in at once (a byte at a time, each append checked the
    /// buffer's uniqueness: 7 % of a JSON preview). Preview's lines use it too (`PreviewLines`).
    public static func appendEscaped(_ s: String, to out: inout [UInt8]) {
        var s = s
        s.withUTF8 { appendEscaped(UnsafeRawBufferPointer($0), to: &out) }
    }

    /// The same of UTF-8 bytes.
    public static func appendEscaped(_ utf8: UnsafeRawBufferPointer, to out: inout [UInt8]) {
        var start = 0
        for (i, b) in utf8.enumerated() where b < 0x20 || b == 0x22 || b == 0x5C {
            if i > start { out.append(contentsOf: UnsafeRawBufferPointer(rebasing: utf8[start..<i])) }
            start = i + 1
            switch b {
            case 0x22: out += #"\""#.utf8
            case 0x5C: out += #"\\"#.utf8
            case 0x0A: out += #"\n"#.utf8
            case 0x0D: out += #"\r"#.utf8
            case 0x09: out += #"\t"#.utf8
            default:
                let hex = Array("0123456789abcdef".utf8)
                out += #"\u00"#.utf8
                out += [hex[Int(b >> 4)], hex[Int(b & 15)]]
            }
        }
        if utf8.count > start { out.append(contentsOf: UnsafeRawBufferPointer(rebasing: utf8[start...])) }
    }
}
