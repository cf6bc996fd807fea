import StreakCore

/// One input line: its number and what it held, or what was wrong with it.
struct ParsedLine<T> {
    var line: Int
    var result: Result<T, FieldProblem>
}

/// Check-in records from JSON lines (SPEC §6).
enum CheckinJSONLines {
    static let fields = ["user", "streak", "at", "tz", "id", "meta"]

    static func parse(_ file: InputFile) -> [ParsedLine<CheckinInput>] {
        var out: [ParsedLine<CheckinInput>] = []
        for (number, line) in file.records {
            out.append(ParsedLine(line: number, result: line.flatMap(record)))
        }
        return out
    }

    static func record(_ line: Substring) -> Result<CheckinInput, FieldProblem> {
        Result {
            let o = try JSONInput.object(line).get()
            if let unknown = o.keys.sorted().first(where: { !fields.contains($0) }) {
                throw FieldProblem(
                    field: unknown, message: "unknown field; valid fields: \(fields.joined(separator: ", "))")
            }
            return CheckinInput(
                user: try JSONInput.string(o, "user", required: true).get()!,
                streak: try JSONInput.string(o, "streak", required: false).get(),
                at: try JSONInput.string(o, "at", required: true).get(),
                tz: try JSONInput.string(o, "tz", required: false).get(),
                id: try JSONInput.string(o, "id", required: false).get(),
                meta: try JSONInput.meta(o["meta"]).get())
        }.mapError { $0 as? FieldProblem ?? FieldProblem(field: "", message: "\($0)") }
    }
}

/// Check-in records from CSV with a header row naming `user,at[,tz][,streak][,id]`.
enum CheckinCSV {
    static let columns = ["user", "at", "tz", "streak", "id"]

    static func parse(_ file: InputFile) throws -> [ParsedLine<CheckinInput>] {
        guard let headerLine = file.lines.first else { return [] }
        if let why = file.unreadable[0] { throw StreakdError.data("\(file.name):1: \(why)") }
        guard case .success(let header) = fields(headerLine) else {
            throw StreakdError.data("\(file.name):1: the header row is not valid CSV")
        }
        let names = header.map { $0.trimmingCharacters(in: .whitespaces).lowercased() }
        for name in names where !columns.contains(name) {
            throw StreakdError.data(
                "\(file.name):1: column \(quoted(name)) is unknown; the header names the columns user, at and optionally tz, streak, id"
            )
        }
        for required in ["user", "at"] where !names.contains(required) {
            throw StreakdError.data("\(file.name):1: the header has no \(quoted(required)) column; it is required")
        }
        if Set(names).count != names.count {
            throw StreakdError.data("\(file.name):1: the header names a column twice")
        }
        var out: [ParsedLine<CheckinInput>] = []
        for (number, line) in file.records where number > 1 {
            let result = line.flatMap(fields).flatMap { values -> Result<CheckinInput, FieldProblem> in
                guard values.count == names.count else {
                    return .failure(
                        FieldProblem(
                            field: "", message: "\(values.count) fields, but the header names \(names.count) columns"))
                }
                var row: [String: String] = [:]
                for (name, value) in zip(names, values) {
                    guard value.utf8.count <= 1024 else {
                        return .failure(
                            FieldProblem(
                                field: name,
                                message: "is \(value.utf8.count) bytes long; far longer than any valid value"))
                    }
                    if !value.isEmpty { row[name] = value }
                }
                guard let user = row["user"] else {
                    return .failure(FieldProblem(field: "user", message: "empty; it is required"))
                }
                guard row["at"] != nil else {
                    return .failure(FieldProblem(field: "at", message: "empty; it is required"))
                }
                return .success(
                    CheckinInput(user: user, streak: row["streak"], at: row["at"], tz: row["tz"], id: row["id"]))
            }
            out.append(ParsedLine(line: number, result: result))
        }
        return out
    }

    /// Splits one CSV record (RFC 4180 quoting; no line breaks inside fields).
    static func fields(_ line: Substring) -> Result<[String], FieldProblem> {
        var fields: [String] = []
        var current = ""
        var quoted = false
        var wasQuoted = false
        var chars = line.makeIterator()
        while let c = chars.next() {
            if quoted {
                if c == "\"" {
                    var lookahead = chars
                    if lookahead.next() == "\"" {
                        current.append("\"")
                        chars = lookahead
                    } else {
                        quoted = false
                    }
                } else {
                    current.append(c)
                }
            } else if c == "," {
                fields.append(current)
                current = ""
                wasQuoted = false
            } else if c == "\"" && current.isEmpty && !wasQuoted {
                quoted = true
                wasQuoted = true
            } else if wasQuoted {
                return .failure(FieldProblem(field: "", message: "malformed CSV: text after a closing quote"))
            } else {
                current.append(c)
            }
        }
        if quoted { return .failure(FieldProblem(field: "", message: "malformed CSV: a quote is not closed")) }
        fields.append(current)
        return .success(fields)
    }
}
