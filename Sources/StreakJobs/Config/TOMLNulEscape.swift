/// `\u0000` (or `\U00000000`) in a basic TOML string: toml++ takes it, and TOMLKit hands the
/// string on as a C string, cut at the NUL, so a hook's argument or a template lost its end
/// without a word (issue 31). Refused before the parser runs, naming line and column (78).
/// A small scanner of TOML's string forms, so the same text in a comment or a literal ('...')
/// string, where it is only characters, is left alone.
enum TOMLNulEscape {
    private enum State {
        case normal, basic, literal, multilineBasic, multilineLiteral, comment
    }

    static func check(_ text: String, file: String) throws {
        let u = Array(text.unicodeScalars)
        func starts(_ i: Int, _ s: String) -> Bool {
            var k = i
            for c in s.unicodeScalars {
                guard k < u.count, u[k] == c else { return false }
                k += 1
            }
            return true
        }
        var state = State.normal
        var line = 1
        var column = 0
        var i = 0
        while i < u.count {
            let c = u[i]
            if c == "\n" {
                line += 1
                column = 0
                if state == .comment || state == .basic || state == .literal { state = .normal }
                i += 1
                continue
            }
            column += 1
            var step = 1
            switch state {
            case .normal:
                if c == "#" {
                    state = .comment
                } else if starts(i, "\"\"\"") {
                    state = .multilineBasic
                    step = 3
                } else if starts(i, "'''") {
                    state = .multilineLiteral
                    step = 3
                } else if c == "\"" {
                    state = .basic
                } else if c == "'" {
                    state = .literal
                }
            case .basic, .multilineBasic:
                if c == "\\" {
                    if starts(i + 1, "u0000") || starts(i + 1, "U00000000") {
                        throw StreakdError.config(
                            "\(file):\(line): a NUL character (\\u0000) at column \(column); it would end a program's "
                                + "argument or a message where it stands; remove it")
                    }
                    // The escaped character is skipped (an escaped quote ends nothing), a line break is not.
                    step = i + 1 < u.count && u[i + 1] != "\n" ? 2 : 1
                } else if state == .basic && c == "\"" {
                    state = .normal
                } else if state == .multilineBasic && starts(i, "\"\"\"") {
                    state = .normal
                    step = 3
                }
            case .literal:
                if c == "'" { state = .normal }
            case .multilineLiteral:
                if starts(i, "'''") {
                    state = .normal
                    step = 3
                }
            case .comment:
                break
            }
            column += step - 1
            i += step
        }
    }
}
