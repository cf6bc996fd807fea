import Foundation
import StreakCore
import TOMLKit

/// Typed access to a TOML table, with errors that name file, line and key.
///
/// A value of the wrong type or out of range is noted in `problems` and read as absent (so the
/// default stands), and reading goes on: `config check` reports every problem of the file at
/// once. Rules that span several values still throw; `attempt` notes those and goes on too.
struct TableReader {
    let file: String
    let text: String
    let problems = Problems()

    init(file: String, text: String) {
        self.file = file
        self.text = text
    }

    /// The problems found so far, in the order they were found.
    final class Problems {
        var list: [StreakdError] = []
    }

    func note(_ error: StreakdError) { problems.list.append(error) }

    /// Runs one part of the reading; its error is noted, and reading goes on.
    func attempt(_ body: () throws -> Void) {
        do {
            try body()
        } catch let error as StreakdError {
            note(error)
        } catch {
            note(.config("\(file): \(error)"))
        }
    }

    /// Throws what was noted: one problem as it is, several as one error of a line each (by line
    /// number), with their count.
    func finish() throws {
        guard let first = problems.list.first else { return }
        guard problems.list.count > 1 else { throw first }
        let lines = problems.list.map(\.message).enumerated().sorted { a, b in
            let (la, lb) = (lineNumber(a.element), lineNumber(b.element))
            return la != lb ? la < lb : a.offset < b.offset
        }.map(\.element)
        throw StreakdError.config((lines + ["\(lines.count) problems in \(file)"]).joined(separator: "\n"))
    }

    /// The line a message names after the file (`FILE:LINE: …`).
    private func lineNumber(_ message: String) -> Int {
        guard message.hasPrefix(file + ":") else { return 0 }
        return Int(message.dropFirst(file.count + 1).prefix { $0.isNumber }) ?? 0
    }

    func error(_ section: String, _ key: String?, _ message: String, header: String? = nil) -> StreakdError {
        let name = [section, key].compactMap { $0 }.filter { !$0.isEmpty }.joined(separator: ".")
        let found = key.flatMap { self.line(of: $0, in: section) } ?? self.line(ofHeader: header ?? section)
        return .config("\(file):\(found.map(String.init) ?? "1"): \(name): \(message)")
    }

    /// The line where `key = …` stands under `[section]`.
    func line(of key: String, in section: String) -> Int? {
        var current = ""
        for (i, raw) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let s = raw.trimmingCharacters(in: .whitespaces)
            if s.hasPrefix("[") {
                current = s.trimmingCharacters(in: CharacterSet(charactersIn: "[] \t")).replacingOccurrences(
                    of: " ", with: "")
                if let hash = current.firstIndex(of: "#") { current = String(current[..<hash]) }
                continue
            }
            let name = s.split(separator: "=", maxSplits: 1).first?.trimmingCharacters(in: .whitespaces) ?? ""
            if current == section && name == key { return i + 1 }
            if current.isEmpty && name == section + "." + key { return i + 1 }
        }
        return line(ofHeader: section + "." + key)
    }

    func line(ofHeader header: String) -> Int? {
        for (i, raw) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let s = raw.trimmingCharacters(in: .whitespaces).replacingOccurrences(of: " ", with: "")
            if s.hasPrefix("[" + header + "]") || s.hasPrefix("[[" + header + "]]") { return i + 1 }
        }
        return nil
    }

    func keys(_ table: TOMLTable, in section: String, allowed: [String]) throws {
        for key in table.keys.sorted() where !allowed.contains(key) {
            let place = section.isEmpty ? "the top level" : "[\(section)]"
            note(
                error(
                    section, key, "unknown setting; valid in \(place): \(allowed.joined(separator: ", "))",
                    header: section.isEmpty ? key : section + "." + key))
        }
    }

    func table(_ t: TOMLTable, _ key: String, in section: String) throws -> TOMLTable? {
        guard let v = t[key] else { return nil }
        guard let table = v.table else {
            note(error(section, key, "must be a table ([\(section.isEmpty ? key : section + "." + key)])"))
            return nil
        }
        return table
    }

    func int(_ t: TOMLTable, _ key: String, in section: String, range: ClosedRange<Int>) throws -> Int? {
        guard let v = t[key] else { return nil }
        guard v.type == .int, let i = v.int else {
            note(error(section, key, "must be a whole number from \(range.lowerBound) to \(range.upperBound)"))
            return nil
        }
        guard range.contains(i) else {
            note(
                error(
                    section, key,
                    "\(i) is out of range; use a whole number from \(range.lowerBound) to \(range.upperBound)"))
            return nil
        }
        return i
    }

    func bool(_ t: TOMLTable, _ key: String, in section: String) throws -> Bool? {
        guard let v = t[key] else { return nil }
        guard v.type == .bool, let b = v.bool else {
            note(error(section, key, "must be true or false"))
            return nil
        }
        return b
    }

    func string(_ t: TOMLTable, _ key: String, in section: String) throws -> String? {
        guard let v = t[key] else { return nil }
        guard v.type == .string, let s = v.string else {
            note(error(section, key, "must be a string in quotes"))
            return nil
        }
        if s.utf8.contains(0) {
            note(error(section, key, Self.nulRule))
            return nil
        }
        return s
    }

    /// A NUL (`\u0000` in a TOML string) ends a C string: an argument or a message would be cut
    /// there without a word (issue 31).
    static let nulRule =
        "holds a NUL character (\\u0000), which ends a program's argument or a message where it stands; remove it"

    func intArray(_ t: TOMLTable, _ key: String, in section: String, range: ClosedRange<Int>) throws -> [Int]? {
        guard let v = t[key] else { return nil }
        let rule = "must be a list of whole numbers from \(range.lowerBound) to \(range.upperBound), such as [5, 7, 14]"
        guard v.type == .array, let array = v.array else {
            note(error(section, key, rule))
            return nil
        }
        var result: [Int] = []
        for item in array {
            guard item.type == .int, let i = item.int, range.contains(i) else {
                note(error(section, key, rule))
                return nil
            }
            result.append(i)
        }
        return Array(Set(result)).sorted()
    }

    /// `rest_days = ["sat", "sun"]`: English weekday names, any case, three letters or full (SPEC §14).
    func restDays(_ t: TOMLTable, in section: String) throws -> RestDays? {
        guard let v = t["rest_days"] else { return nil }
        let rule =
            "must be a list of English weekday names, three letters or full, such as [\"sat\", \"sun\"] or [\"Friday\"]"
        guard v.type == .array, let array = v.array else {
            note(error(section, "rest_days", rule))
            return nil
        }
        var names: [String] = []
        for item in array {
            guard item.type == .string, let name = item.string else {
                note(error(section, "rest_days", rule))
                return nil
            }
            guard RestDays.weekday(name) != nil else {
                note(error(section, "rest_days", "\(quoted(name)) is not a weekday; \(rule)"))
                return nil
            }
            names.append(name)
        }
        return RestDays(names: names)
    }

    func freeze(_ t: TOMLTable, in section: String, base: FreezeSettings) throws -> FreezeSettings {
        try keys(t, in: section, allowed: ["initial", "max", "min_streak", "auto_use"])
        var f = base
        f.max = try int(t, "max", in: section, range: 0...100) ?? f.max
        f.initial = try int(t, "initial", in: section, range: 0...100) ?? min(f.initial, f.max)
        if f.initial > f.max {
            note(error(section, "initial", "\(f.initial) is more than max (\(f.max)); use a number from 0 to \(f.max)"))
            f.initial = f.max  // noted; the other keys are read on
        }
        f.minStreak = try int(t, "min_streak", in: section, range: 1...10_000) ?? f.minStreak
        f.autoUse = try bool(t, "auto_use", in: section) ?? f.autoUse
        return f
    }
}
