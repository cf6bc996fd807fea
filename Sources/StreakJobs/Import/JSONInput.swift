import StreakCore

/// Any JSON value, as read from input (`JSONReader`).
enum JSONInput {
    case string(String)
    case bool(Bool)
    case integer(Int64)
    /// A whole number beyond Int64, as written.
    case largeInteger(String)
    /// A number with a fraction, as written.
    case number(String)
    case null
    case array
    case object([String: JSONInput])

    var kind: String {
        switch self {
        case .string: "a string"
        case .bool: "a boolean"
        case .integer, .largeInteger: "an integer"
        case .number: "a fractional number"
        case .null: "null"
        case .array: "an array"
        case .object: "an object"
        }
    }

    /// Parses one line (or a request's body) holding one JSON object.
    static func object(_ line: Substring, in holder: JSONReader.Holder = .line) -> Result<
        [String: JSONInput], FieldProblem
    > {
        var line = line
        return line.withUTF8 { JSONReader.object($0, in: holder) }
    }

    /// A field no record has. One with an empty name says so: the message names it.
    static func unknownField(_ key: String, valid: [String]) -> FieldProblem {
        let rule = valid.isEmpty ? "this body takes no fields" : "valid fields: \(valid.joined(separator: ", "))"
        guard !key.isEmpty else {
            return FieldProblem(field: "", message: "unknown field \"\" (an empty name); \(rule)")
        }
        return FieldProblem(field: key, message: "unknown field; \(rule)")
    }

    /// A string field, or a problem naming the field.
    static func string(_ fields: [String: JSONInput], _ key: String, required: Bool) -> Result<String?, FieldProblem> {
        switch fields[key] {
        case nil where required: return .failure(FieldProblem(field: key, message: "missing; it is required"))
        case nil, .null?:
            return required ? .failure(FieldProblem(field: key, message: "must not be null")) : .success(nil)
        case .string(let s)?:
            guard s.utf8.count <= 1024 else {
                return .failure(
                    FieldProblem(field: key, message: "is \(s.utf8.count) bytes long; far longer than any valid value"))
            }
            return .success(s)
        case let other?: return .failure(FieldProblem(field: key, message: "must be a string, not \(other.kind)"))
        }
    }

    /// Metadata: an object of strings, booleans and integers.
    static func meta(_ value: JSONInput?) -> Result<Metadata, FieldProblem> {
        guard let value else { return .success([]) }
        if case .null = value { return .success([]) }
        guard case .object(let o) = value else {
            return .failure(FieldProblem(field: "meta", message: "must be an object, not \(value.kind)"))
        }
        var result: Metadata = []
        for key in o.keys.sorted() {
            switch o[key]! {
            case .string(let s): result.append((key, .string(s)))
            case .bool(let b): result.append((key, .bool(b)))
            case .integer(let i): result.append((key, .integer(i)))
            case .largeInteger(let written):
                return .failure(
                    FieldProblem(
                        field: "meta",
                        message:
                            "value of \(quoted(key)) is \(shortened(written)), out of range; metadata integers must be from \(Int64.min) to \(Int64.max)"
                    ))
            case let other:
                return .failure(
                    FieldProblem(
                        field: "meta",
                        message:
                            "value of \(quoted(key)) is \(other.kind); metadata values must be strings, booleans or integers"
                    ))
            }
        }
        return .success(result)
    }
}

/// A number as written, cut when absurdly long.
private func shortened(_ written: String) -> String {
    written.count > 40 ? "\(written.prefix(20))... (\(written.count) characters)" : written
}
