import Foundation

/// A line-oriented input file (or standard input), read whole and split into lines.
struct InputFile {
    /// The name errors use: the path, or `<stdin>`.
    let name: String
    let lines: [Substring]

    static let maxLine = 64 * 1024

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
        var number = 0
        for raw in data.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false) {
            number += 1
            guard raw.count <= maxLine else {
                throw StreakdError.data("\(name):\(number): the line is \(raw.count) bytes long; at most \(maxLine)")
            }
            guard var text = String(validating: raw, as: UTF8.self) else {
                throw StreakdError.data("\(name):\(number): invalid UTF-8; the file must be UTF-8 text")
            }
            if text.hasSuffix("\r") { text.removeLast() }
            lines.append(Substring(text))
        }
        if lines.last?.isEmpty == true { lines.removeLast() }
        return InputFile(name: name, lines: lines)
    }
}
