import StreakCore

/// The fields of a request's JSON body as a reader takes them: each field that is unknown, of
/// the wrong type or not valid is noted and the reading goes on, so the answer names every bad
/// field (SPEC §11), not only the first.
struct BodyFields {
    let object: [String: JSONInput]
    private(set) var problems: [FieldProblem] = []

    init(_ object: [String: JSONInput], fields: [String]) {
        self.object = object
        for key in object.keys.sorted() where !fields.contains(key) {
            problems.append(JSONInput.unknownField(key, valid: fields))
        }
    }

    /// A string field (nil when left out or null), or nil with its problem noted.
    mutating func string(_ key: String, required: Bool = false) -> String? {
        switch JSONInput.string(object, key, required: required) {
        case .success(let s): return s
        case .failure(let p):
            problems.append(p)
            return nil
        }
    }

    /// A boolean field (nil when left out or null), or nil with its problem noted.
    mutating func bool(_ key: String) -> Bool? {
        switch object[key] {
        case nil, .null?: return nil
        case .bool(let b)?: return b
        case let other?:
            refuse(key, "must be true or false, not \(other.kind)")
            return nil
        }
    }

    /// The metadata field (none when left out or null), or none with its problem noted.
    mutating func meta(_ key: String) -> Metadata {
        switch JSONInput.meta(object[key]) {
        case .success(let m): return m
        case .failure(let p):
            problems.append(p)
            return []
        }
    }

    /// Notes a field's value as not valid, saying what would be.
    mutating func refuse(_ field: String, _ message: String) {
        problems.append(FieldProblem(field: field, message: message))
    }
}

extension Context {
    /// A body that is one JSON object of `fields` (an empty body is `{}` when `emptyIsObject`),
    /// read by import's reader and then by `read`; or the 400 naming each bad field (JSON
    /// pointers) and saying the body is not `what`.
    static func bodyObject<T>(
        _ body: [UInt8], fields: [String], what: String, emptyIsObject: Bool = false,
        _ read: (inout BodyFields) -> T
    ) -> Result<T, APIAnswer> {
        guard let text = String(validating: body, as: UTF8.self) else {
            return .failure(.problem(400, "the body is not UTF-8 text"))
        }
        var object: [String: JSONInput] = [:]
        if !(body.isEmpty && emptyIsObject) {
            switch JSONInput.object(text[...], in: .body) {
            case .success(let o): object = o
            case .failure(let p): return .failure(bodyProblem([p], what: what))
            }
        }
        var fields = BodyFields(object, fields: fields)
        let value = read(&fields)
        return fields.problems.isEmpty ? .success(value) : .failure(bodyProblem(fields.problems, what: what))
    }

    /// The 400 of a body that is not `what`: each problem's field as a JSON pointer; a problem of
    /// the whole body (no field) alone is the detail.
    static func bodyProblem(_ problems: [FieldProblem], what: String) -> APIAnswer {
        if problems.count == 1, problems[0].field.isEmpty { return .problem(400, problems[0].message) }
        return .problem(
            400, "the body is not \(what)", errors: problems.map { .init(pointer: "/" + $0.field, detail: $0.message) })
    }

    /// A body's content type: JSON (any parameters, such as a charset) or a 415.
    static func jsonContentProblem(_ contentType: String?) -> APIAnswer? {
        guard mediaType(contentType) != "application/json" else { return nil }
        return .problem(
            415, "the body must be JSON: Content-Type: application/json (got \(quoted(contentType ?? "none")))")
    }

    /// A content type's media type, lowercased, without parameters.
    static func mediaType(_ contentType: String?) -> String {
        (contentType ?? "").split(separator: ";").first.map { $0.trimmed().lowercased() } ?? ""
    }
}

extension Substring {
    fileprivate func trimmed() -> Substring {
        var s = self
        while s.first == " " || s.first == "\t" { s = s.dropFirst() }
        while s.last == " " || s.last == "\t" { s = s.dropLast() }
        return s
    }
}
