import Foundation
import StreakCore

/// Any JSON value, as read from input.
enum JSONInput: Decodable {
    case string(String)
    case bool(Bool)
    case integer(Int64)
    case number
    case null
    case array
    case object([String: JSONInput])

    init(from decoder: any Decoder) throws {
        let c = try decoder.singleValueContainer()
        if c.decodeNil() {
            self = .null
        } else if let b = try? c.decode(Bool.self) {
            self = .bool(b)
        } else if let i = try? c.decode(Int64.self) {
            self = .integer(i)
        } else if (try? c.decode(Double.self)) != nil {
            self = .number
        } else if let s = try? c.decode(String.self) {
            self = .string(s)
        } else if let o = try? c.decode([String: JSONInput].self) {
            self = .object(o)
        } else {
            self = .array
        }
    }

    var kind: String {
        switch self {
        case .string: "a string"
        case .bool: "a boolean"
        case .integer: "an integer"
        case .number: "a fractional number"
        case .null: "null"
        case .array: "an array"
        case .object: "an object"
        }
    }

    /// Parses one line holding one JSON object.
    static func object(_ line: Substring) -> Result<[String: JSONInput], FieldProblem> {
        guard line.first == "{" else {
            return .failure(FieldProblem(field: "", message: "malformed JSON: expected one object {...} per line"))
        }
        var line = line
        if let fields = line.withUTF8({ JSONLine.object($0) }) { return .success(fields) }
        do {
            guard case .object(let fields) = try JSONDecoder().decode(JSONInput.self, from: Data(line.utf8)) else {
                return .failure(FieldProblem(field: "", message: "malformed JSON: expected an object {...}"))
            }
            return .success(fields)
        } catch {
            return .failure(FieldProblem(field: "", message: "malformed JSON: \(JSONInput.reason(error))"))
        }
    }

    static func reason(_ error: any Error) -> String {
        if case DecodingError.dataCorrupted(let context) = error {
            let underlying = (context.underlyingError as? NSError)?.userInfo[NSDebugDescriptionErrorKey] as? String
            return underlying ?? context.debugDescription
        }
        return "not a JSON object"
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
