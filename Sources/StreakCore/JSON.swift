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
    public var text: String {
        var out = ""
        write(to: &out)
        return out
    }

    /// Over several lines as journalctl's `-o json-pretty` writes an entry: a tab per level, a
    /// field a line, `"key" : value`.
    public var prettyText: String {
        var out = ""
        writePretty(to: &out, depth: 0)
        return out
    }

    func writePretty(to out: inout String, depth: Int) {
        let indent = String(repeating: "\t", count: depth + 1)
        switch self {
        case .array(let items) where !items.isEmpty:
            out += "[\n"
            for (i, item) in items.enumerated() {
                out += indent
                item.writePretty(to: &out, depth: depth + 1)
                out += i == items.count - 1 ? "\n" : ",\n"
            }
            out += String(repeating: "\t", count: depth) + "]"
        case .object(let fields) where !fields.isEmpty:
            out += "{\n"
            for (i, (key, value)) in fields.enumerated() {
                out += indent
                JSON.escape(key, into: &out)
                out += " : "
                value.writePretty(to: &out, depth: depth + 1)
                out += i == fields.count - 1 ? "\n" : ",\n"
            }
            out += String(repeating: "\t", count: depth) + "}"
        default: write(to: &out)
        }
    }

    func write(to out: inout String) {
        switch self {
        case .string(let s): JSON.escape(s, into: &out)
        case .int(let i): out += String(i)
        case .bool(let b): out += b ? "true" : "false"
        case .null: out += "null"
        case .array(let items):
            out += "["
            for (i, item) in items.enumerated() {
                if i > 0 { out += "," }
                item.write(to: &out)
            }
            out += "]"
        case .object(let fields):
            out += "{"
            for (i, (key, value)) in fields.enumerated() {
                if i > 0 { out += "," }
                JSON.escape(key, into: &out)
                out += ":"
                value.write(to: &out)
            }
            out += "}"
        }
    }

    static func escape(_ s: String, into out: inout String) {
        // Most texts need no escape: copied whole (a scalar at a time was a fifth of a webhook
        // request's CPU). Only ASCII bytes are escaped, so the bytes of a multi-byte scalar never are.
        if !s.utf8.contains(where: { $0 == 0x22 || $0 == 0x5C || $0 < 0x20 }) {
            out += "\""
            out += s
            out += "\""
            return
        }
        out += "\""
        for ch in s.unicodeScalars {
            switch ch {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case _ where ch.value < 0x20:
                let hex = String(ch.value, radix: 16)
                out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default: out.unicodeScalars.append(ch)
            }
        }
        out += "\""
    }
}
