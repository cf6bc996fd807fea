import Foundation

/// A line-oriented input file (or standard input), read whole and split into lines.
struct InputFile {
    /// The name errors use: the path, or `<stdin>`.
    let name: String
    /// The lines; one that could not be read is empty here and named in `unreadable`.
    let lines: [Substring]
    /// Why a line (by index) could not be read: invalid UTF-8, or too long.
    let unreadable: [Int: String]

    static let maxLine = 64 * 1024

    /// The lines that hold something, with their numbers; unreadable ones as problems.
    var records: [(line: Int, result: Result<Substring, FieldProblem>)] {
        lines.enumerated().compactMap { i, text in
            if let why = unreadable[i] { return (i + 1, .failure(FieldProblem(field: "", message: why))) }
            return text.allSatisfy(\.isWhitespace) ? nil : (i + 1, .success(text))
        }
    }

    /// Reads `path`, or standard input for `-`.
    static func read(_ path: String) throws -> InputFile {
        let data: Data
        if path == "-" {
            data = FileHandle.standardInput.readDataToEndOfFile()
        } else {
            var isDir: ObjCBool = false
            guard FileManager.default.fileExists(atPath: path, isDirectory: &isDir) else {
                throw StreakdError(.noInput, "\(path): no such file")
            }
            guard !isDir.boolValue, let d = FileManager.default.contents(atPath: path) else {
                throw StreakdError(.noInput, "\(path): cannot read the file")
            }
            data = d
        }
        let name = path == "-" ? "<stdin>" : path
        var lines: [Substring] = []
        var unreadable: [Int: String] = [:]
        for raw in data.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false) {
            if raw.count > maxLine {
                unreadable[lines.count] = "the line is \(raw.count) bytes long; at most \(maxLine)"
                lines.append("")
            } else if var text = String(validating: raw, as: UTF8.self) {
                if text.hasSuffix("\r") { text.removeLast() }
                if lines.isEmpty && text.hasPrefix("\u{FEFF}") { text.removeFirst() }  // a byte-order mark
                lines.append(Substring(text))
            } else {
                unreadable[lines.count] = "invalid UTF-8; the file must be UTF-8 text"
                lines.append("")
            }
        }
        if lines.last?.isEmpty == true && unreadable[lines.count - 1] == nil { lines.removeLast() }
        return InputFile(name: name, lines: lines, unreadable: unreadable)
    }
}
