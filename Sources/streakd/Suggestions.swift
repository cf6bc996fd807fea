import ArgumentParser

/// A mistyped command gets the nearest ones, as git says "The most similar command is status".
/// (A mistyped option gets ArgumentParser's own "Did you mean '--streak'?".)
enum Suggestions {
    /// The error for a command line (global options already moved last) whose word where a
    /// command belongs names none; nil when each does, or the line has none to check.
    static func unknownCommand(_ args: [String], root: any ParsableCommand.Type = Streakd.self) -> String? {
        var command = root
        var path: [String] = []
        for word in args {
            let subcommands = command.configuration.subcommands
            // A command of its own (its arguments follow), an option, or help: the parser's to read.
            if subcommands.isEmpty || word.hasPrefix("-") || word == "help" { return nil }
            if let next = subcommands.first(where: { name($0) == word }) {
                command = next
                path.append(word)
                continue
            }
            let group = (["streakd"] + path).joined(separator: " ")
            var message = "\(quotedWord(word)) is not a \(group) command; see \(group) --help"
            let near = nearest(word, subcommands.map(name))
            if !near.isEmpty {
                let prefix = path.isEmpty ? "" : path.joined(separator: " ") + " "
                message +=
                    "\n\nThe most similar command\(near.count == 1 ? " is" : "s are")\n"
                    + near.map { "\t" + prefix + $0 }.joined(separator: "\n")
            } else {
                message += " (commands: \(subcommands.map(name).joined(separator: ", ")))"
            }
            return message
        }
        return nil
    }

    static func name(_ command: any ParsableCommand.Type) -> String {
        command.configuration.commandName ?? String(describing: command).lowercased()
    }

    /// The names within an edit distance of 2 of `word` (at most a third of it, and at least 1),
    /// or that it begins or is the beginning of; the nearest first.
    static func nearest(_ word: String, _ names: [String]) -> [String] {
        let limit = max(1, min(2, word.count / 3 + 1))
        let scored = names.map { name -> (String, Int) in
            let d = distance(word.lowercased(), name)
            let prefix = word.count >= 2 && (name.hasPrefix(word.lowercased()) || word.lowercased().hasPrefix(name))
            return (name, prefix ? min(d, limit) : d)
        }.filter { $0.1 <= limit }
        guard let best = scored.map(\.1).min() else { return [] }
        return scored.filter { $0.1 == best }.map(\.0)
    }

    /// The optimal string alignment distance: insertions, deletions, substitutions and swaps of
    /// neighbours each cost 1 (`stauts` is one from `status`).
    static func distance(_ a: String, _ b: String) -> Int {
        let a = Array(a)
        let b = Array(b)
        guard !a.isEmpty, !b.isEmpty else { return max(a.count, b.count) }
        var d = [[Int]](repeating: [Int](repeating: 0, count: b.count + 1), count: a.count + 1)
        for i in 0...a.count { d[i][0] = i }
        for j in 0...b.count { d[0][j] = j }
        for i in 1...a.count {
            for j in 1...b.count {
                let cost = a[i - 1] == b[j - 1] ? 0 : 1
                d[i][j] = min(d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost)
                if i > 1, j > 1, a[i - 1] == b[j - 2], a[i - 2] == b[j - 1] {
                    d[i][j] = min(d[i][j], d[i - 2][j - 2] + 1)
                }
            }
        }
        return d[a.count][b.count]
    }

    /// A word as typed, quoted, cut when long, control characters shown as `?`.
    static func quotedWord(_ word: String) -> String {
        let shown = String(word.prefix(40).map { $0.isASCII && ($0.asciiValue ?? 0) < 32 ? "?" : $0 })
        return "\"" + shown + (word.count > 40 ? "…" : "") + "\""
    }
}
