/// What the TOML parser underneath (toml++ in TOMLKit) does not survive or does not
/// see, checked before it runs: errors name the line, exit 78.
///
/// - Control characters: TOML allows none but tab and line breaks (in a string,
///   one is written as an escape), and the parser took a NUL for the end of the
///   text, dropping whatever followed silently.
/// - A table header whose name does not start with a letter, digit, '_', '-' or a
///   quote (`[$]`, `[[ [a]]]`, `[é]`), and a `}` or a Unicode line separator where
///   an array needs a value (`a = [}]`, `a = [U+2028]`): toml++ asserts that these
///   never come, and the assertion aborted the process (exit 134), in release
///   builds too. Found by `ParserFuzzTests`.
enum TOMLPrecheck {
    static func check(_ text: String, file: String) throws {
        try controlCharacters(text, file: file)
        try TOMLNulEscape.check(text, file: file)
        try tableHeaders(Array(text.utf8), file: file)
    }

    static func controlCharacters(_ text: String, file: String) throws {
        var line = 1
        var column = 1
        var previous: Unicode.Scalar = " "
        func loneReturn() -> StreakdError {
            .config(
                "\(file):\(line): a carriage return (U+000D) not followed by a line break at column \(column - 1); TOML allows no control characters but tab and line breaks"
            )
        }
        for c in text.unicodeScalars {
            defer { previous = c }
            if c == "\n" {
                line += 1
                column = 1
                continue
            }
            if previous == "\r" { throw loneReturn() }
            if c.value < 32 && c != "\t" && c != "\r" || c.value == 127 {
                let name = c.value == 0 ? "a NUL byte" : "a control character"
                let hex = String(c.value, radix: 16)
                let code = String(repeating: "0", count: 4 - hex.count) + hex
                throw StreakdError.config(
                    "\(file):\(line): \(name) (U+\(code.uppercased())) at column \(column); TOML allows no control characters but tab and line breaks"
                        + (c.value == 0 ? "; remove it" : " (in a quoted string write it as \\u\(code))")
                )
            }
            column += 1
        }
        if previous == "\r" { throw loneReturn() }
    }

    /// Finds the table headers (a `[` first on a line, outside strings, comments and
    /// values) and checks the first character of each one's name.
    static func tableHeaders(_ b: [UInt8], file: String) throws {
        var i = 0
        var line = 1
        var open: [UInt8] = []  // the brackets and braces open in a value
        var lineStart = true
        func skip(_ text: [UInt8]) -> Bool {
            guard i + text.count <= b.count, Array(b[i..<(i + text.count)]) == text else { return false }
            i += text.count
            return true
        }
        /// Past the end of a string that started before `i`: `"`, `'`, or their tripled forms.
        func string(_ quote: UInt8, multiline: Bool) {
            while i < b.count {
                let c = b[i]
                if c == 10 {
                    guard multiline else { return }  // the parser reports it
                    line += 1
                } else if c == 92 && quote == 34 {  // an escape in a basic string
                    i += 1
                    if i < b.count && b[i] == 10 { line += 1 }
                } else if c == quote && (!multiline || skip([quote, quote, quote])) {
                    if !multiline { i += 1 }
                    return
                }
                i += 1
            }
        }
        while i < b.count {
            let c = b[i]
            if lineStart && (c == 32 || c == 9) {
                i += 1
                continue
            }
            if lineStart && open.isEmpty && c == 91 {  // [
                try header(b, at: i, line: line, file: file)
                while i < b.count && b[i] != 10 { i += 1 }  // a header is one line
                continue
            }
            lineStart = false
            switch c {
            case 10:
                line += 1
                lineStart = true
                i += 1
            case 35:  // # a comment, to the end of the line
                while i < b.count && b[i] != 10 { i += 1 }
            case 34, 39:  // " or '
                let multiline = skip([c, c, c])
                if !multiline { i += 1 }
                string(c, multiline: multiline)
            case 91, 123:  // [ {
                open.append(c)
                i += 1
            case 93, 125:  // ] }
                if c == 125 && open.last == 91 {
                    throw StreakdError.config(
                        "\(file):\(line): a '}' inside an array, where a value, ',' or ']' should be")
                }
                _ = open.popLast()
                i += 1
            case 0xC2 where i + 1 < b.count && b[i + 1] == 0x85,
                0xE2 where i + 2 < b.count && b[i + 1] == 0x80 && (b[i + 2] == 0xA8 || b[i + 2] == 0xA9):
                // U+0085, U+2028, U+2029: line breaks to Unicode, not to TOML, except inside a string.
                throw StreakdError.config(
                    "\(file):\(line): a Unicode line separator (U+\(c == 0xC2 ? "0085" : b[i + 2] == 0xA8 ? "2028" : "2029")) outside quotes; TOML's line breaks are LF and CR LF"
                )
            default:
                i += 1
            }
        }
    }

    /// A header's name starts with a letter, digit, '_' or '-', or a quote; or it is empty
    /// (`[]`) or cut short by the end of the file, which the parser reports itself.
    static func header(_ b: [UInt8], at start: Int, line: Int, file: String) throws {
        var i = start + 1
        func skipSpace() { while i < b.count && (b[i] == 32 || b[i] == 9) { i += 1 } }
        skipSpace()
        if i < b.count && b[i] == 91 && i == start + 1 {  // [[ an array of tables
            i += 1
            skipSpace()
        }
        guard i < b.count else { return }
        let c = b[i]
        let bare = (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || (c >= 48 && c <= 57) || c == 95 || c == 45
        guard !bare && c != 34 && c != 39 && c != 93 else { return }
        var end = i + 1
        while end < b.count && b[end] & 0xC0 == 0x80 { end += 1 }
        let found =
            c == 91
            ? "a third '['"
            : c == 10 || c == 13 ? "the end of the line" : "'\(String(decoding: b[i..<end], as: UTF8.self))'"
        throw StreakdError.config(
            "\(file):\(line): a table header's name starts with a letter, digit, '_' or '-', or is in quotes, as in [freeze] or [[hooks]]; found \(found)"
        )
    }
}
