import Foundation
import StreakCore

/// Check-in records from JSON lines (SPEC §6).
enum CheckinJSONLines {
    static let fields = ["user", "streak", "at", "tz", "id", "meta"]

    static func record(_ line: Substring) -> Result<CheckinInput, FieldProblem> {
        JSONInput.object(line).flatMap(record)
    }

    /// A record read already as a JSON object (an element of the HTTP API's batch array).
    static func record(_ o: [String: JSONInput]) -> Result<CheckinInput, FieldProblem> {
        records(o).mapError { $0.all[0] }
    }

    /// A line's record, or every problem of its shape (the API's batch names each, SPEC §11).
    static func records(_ line: Substring) -> Result<CheckinInput, FieldProblems> {
        JSONInput.object(line).mapError { FieldProblems(all: [$0]) }.flatMap(records)
    }

    /// An object's record, or every problem of its shape: each unknown field, then each field
    /// whose value is not what it must be.
    static func records(_ o: [String: JSONInput]) -> Result<CheckinInput, FieldProblems> {
        var problems = o.keys.sorted().filter { !fields.contains($0) }.map {
            JSONInput.unknownField($0, valid: fields)
        }
        func value<T>(_ read: Result<T, FieldProblem>) -> T? {
            switch read {
            case .success(let v): return v
            case .failure(let p):
                problems.append(p)
                return nil
            }
        }
        let user = value(JSONInput.string(o, "user", required: true))
        let streak = value(JSONInput.string(o, "streak", required: false))
        let at = value(JSONInput.string(o, "at", required: true))
        let tz = value(JSONInput.string(o, "tz", required: false))
        let id = value(JSONInput.string(o, "id", required: false))
        let meta = value(JSONInput.meta(o["meta"]))
        guard problems.isEmpty, let user = user ?? nil, let streak, let at, let tz, let id, let meta else {
            return .failure(FieldProblems(all: problems))
        }
        return .success(CheckinInput(user: user, streak: streak, at: at, tz: tz, id: id, meta: meta))
    }
}

/// Every problem of one record, not only its first.
struct FieldProblems: Error {
    let all: [FieldProblem]
}

/// Check-in records from CSV with a header row naming `user,at[,tz][,streak][,id]`.
struct CheckinCSV {
    static let columns = ["user", "at", "tz", "streak", "id"]
    static let maxField = 1024

    /// The header's column names, in order.
    let names: [String]
    /// Where each column is in a row; -1 when the header does not name it.
    let user: Int
    let at: Int
    let tz: Int
    let streak: Int
    let id: Int

    /// Reads and checks the header row: nil for an empty file.
    static func header(_ file: InputFile) throws -> CheckinCSV? {
        guard let line = try file.next() else { return nil }
        if let why = line.problem { throw StreakdError.data("\(file.name):1: \(why)") }
        let header: [String]
        switch fields(line.string) {
        case .success(let names): header = names
        case .failure(let p): throw StreakdError.data("\(file.name):1: the header row is not valid CSV: \(p.message)")
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
        return CheckinCSV(names: names)
    }

    init(names: [String]) {
        self.names = names
        func position(_ column: String) -> Int { names.firstIndex(of: column) ?? -1 }
        (user, at, tz, streak, id) = (
            position("user"), position("at"), position("tz"), position("streak"), position("id")
        )
    }

    /// A row as a check-in, or what is wrong with it.
    func record(_ line: Substring) -> Result<CheckinInput, FieldProblem> {
        Self.fields(line).mapError { p in
            FieldProblem(field: p.field < names.count ? names[p.field] : "", message: "malformed CSV: \(p.message)")
        }.flatMap { values -> Result<CheckinInput, FieldProblem> in
            guard values.count == names.count else {
                return .failure(
                    FieldProblem(
                        field: "", message: "\(values.count) fields, but the header names \(names.count) columns"))
            }
            for (name, value) in zip(names, values) where value.utf8.count > Self.maxField {
                return .failure(
                    FieldProblem(
                        field: name, message: "is \(value.utf8.count) bytes long; far longer than any valid value"))
            }
            func value(_ column: Int) -> String? { column < 0 || values[column].isEmpty ? nil : values[column] }
            guard let user = value(user) else {
                return .failure(FieldProblem(field: "user", message: "empty; it is required"))
            }
            guard value(at) != nil else {
                return .failure(FieldProblem(field: "at", message: "empty; it is required"))
            }
            return .success(
                CheckinInput(user: user, streak: value(streak), at: value(at), tz: value(tz), id: value(id)))
        }
    }

    /// Splits a plain row (ASCII, no quotes) into `fields`, as positions in `text`. False when
    /// the row needs `record`: quotes, or not one field per column, or a field too long.
    func split(_ text: UnsafeBufferPointer<UInt8>, into fields: inout [Range<Int>]) -> Bool {
        fields.removeAll(keepingCapacity: true)
        var start = 0
        for i in 0..<text.count {
            switch text[i] {
            case 44:  // ,
                guard fields.count + 1 < names.count, i - start <= Self.maxField else { return false }
                fields.append(start..<i)
                start = i + 1
            case 34: return false  // "
            default: continue
            }
        }
        guard fields.count + 1 == names.count, text.count - start <= Self.maxField else { return false }
        fields.append(start..<text.count)
        return true
    }

    /// What `fields` found wrong, and in which field (from 0).
    struct Malformed: Error {
        var field: Int
        var message: String
    }

    static let notClosed = "a quote is not closed on its line"
    static let notClosedMessage = "malformed CSV: " + notClosed

    /// The problem of a row whose quoted value the next line closes: a line break inside quotes.
    static func lineBreak(_ open: FieldProblem, goesOnTo line: Int) -> FieldProblem {
        FieldProblem(
            field: open.field,
            message:
                "malformed CSV: a line break inside a quoted value (the value goes on to line \(line)); no check-in field holds one, and streakd reads one record a line"
        )
    }

    /// Splits one CSV record (RFC 4180 quoting; no line breaks inside fields:
    /// no check-in field can hold one, so streakd reads one record a line).
    static func fields(_ line: Substring) -> Result<[String], Malformed> {
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
                return .failure(Malformed(field: fields.count, message: "text after a closing quote"))
            } else {
                current.append(c)
            }
        }
        if quoted { return .failure(Malformed(field: fields.count, message: notClosed)) }
        fields.append(current)
        return .success(fields)
    }

    /// Whether a line closes a quote left open by the line before: it holds a
    /// quote that is not doubled, so the line break was inside a quoted value.
    static func closesQuote(_ text: UnsafeBufferPointer<UInt8>) -> Bool {
        var i = 0
        while i < text.count {
            if text[i] == 34 {
                if i + 1 < text.count && text[i + 1] == 34 {
                    i += 2
                    continue
                }
                return true
            }
            i += 1
        }
        return false
    }
}
