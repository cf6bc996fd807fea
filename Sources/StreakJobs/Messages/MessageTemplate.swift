/// One message template (SPEC §10): text with placeholders such as `{length}`, and the `plural`
/// and `select` arguments of ICU MessageFormat, which translators know, for what differs by a
/// number or a value: `{freezes, plural, =0 {No freezes left.} one {# freeze left.} other {#
/// freezes left.}}`, `{streak, select, daily {} other { {streak}}}`. Apostrophes quote as in
/// ICU: `''` is one apostrophe, and `'{'` a literal brace; any other apostrophe is itself.
public struct MessageTemplate: Equatable, Sendable, CustomStringConvertible {
    /// The text as written.
    public let source: String
    let parts: [Part]

    public var description: String { source }

    public static func == (a: MessageTemplate, b: MessageTemplate) -> Bool { a.source == b.source }

    indirect enum Part: Sendable {
        case text(String)
        case value(String)
        /// `#` inside a plural case: its number.
        case number(String)
        case plural(String, [Case])
        case select(String, [Case])
    }

    struct Case: Sendable {
        var selector: String
        var parts: [Part]
    }

    /// What a placeholder stands for when a message is written.
    public enum Value: Sendable {
        case number(Int)
        case text(String)

        var text: String {
            switch self {
            case .number(let n): String(n)
            case .text(let s): s
            }
        }
    }

    /// A template that cannot be read, or names a placeholder it may not use.
    public struct Problem: Error, Equatable, Sendable {
        public var message: String
    }

    /// Reads `source`, allowing the placeholders in `numbers` (which `plural` may count) and
    /// `texts`.
    public init(_ source: String, numbers: [String], texts: [String]) throws(Problem) {
        var reader = Reader(characters: Array(source), numbers: numbers, texts: texts)
        parts = try reader.message(closing: false, plural: nil)
        self.source = source
    }

    /// The message with each placeholder's value; `plural` picks a number's category (`one`,
    /// `other`, …) for the language.
    public func render(_ values: [String: Value], plural: (Int) -> String) -> String {
        var out = ""
        Self.render(parts, values, plural: plural, into: &out)
        return out
    }

    private static func render(
        _ parts: [Part], _ values: [String: Value], plural: (Int) -> String, into out: inout String
    ) {
        for part in parts {
            switch part {
            case .text(let s): out += s
            case .value(let name): out += values[name]?.text ?? ""
            case .number(let name): out += values[name]?.text ?? ""
            case .plural(let name, let cases):
                guard case .number(let n)? = values[name] else { continue }
                let chosen =
                    cases.first { $0.selector == "=\(n)" } ?? cases.first { $0.selector == plural(n) }
                    ?? cases.first { $0.selector == "other" }
                if let chosen { render(chosen.parts, values, plural: plural, into: &out) }
            case .select(let name, let cases):
                let text = values[name]?.text ?? ""
                if let chosen = cases.first(where: { $0.selector == text })
                    ?? cases.first(where: { $0.selector == "other" })
                {
                    render(chosen.parts, values, plural: plural, into: &out)
                }
            }
        }
    }

    /// The placeholders named anywhere in the template.
    public var placeholders: Set<String> {
        var names = Set<String>()
        func walk(_ parts: [Part]) {
            for part in parts {
                switch part {
                case .text: break
                case .value(let n), .number(let n): names.insert(n)
                case .plural(let n, let cases), .select(let n, let cases):
                    names.insert(n)
                    cases.forEach { walk($0.parts) }
                }
            }
        }
        walk(parts)
        return names
    }

    /// A recursive-descent reader over the template's characters.
    private struct Reader {
        let characters: [Character]
        let numbers: [String]
        let texts: [String]
        var at = 0

        init(characters: [Character], numbers: [String], texts: [String]) {
            self.characters = characters
            self.numbers = numbers
            self.texts = texts
        }

        /// A problem at `position` (0-based; default where the reader is), told 1-based.
        func fail(_ message: String, at position: Int? = nil) -> Problem {
            Problem(message: "\(message) (at character \(min(position ?? at, characters.count) + 1))")
        }

        var allNames: String { (numbers + texts).map { "{\($0)}" }.joined(separator: ", ") }

        /// Text and arguments up to the end, or up to the `}` that closes a case when `closing`.
        /// Inside a plural case (`plural` names its number), `#` stands for the number.
        mutating func message(closing: Bool, plural: String?) throws(Problem) -> [Part] {
            var parts: [Part] = []
            var text = ""
            func flush() {
                if !text.isEmpty { parts.append(.text(text)) }
                text = ""
            }
            while at < characters.count {
                let c = characters[at]
                switch c {
                case "{":
                    flush()
                    at += 1
                    parts.append(try argument())
                case "}":
                    guard closing else { throw fail("a '}' with no '{' before it; write '}' for a brace itself") }
                    at += 1
                    flush()
                    return parts
                case "#":
                    if let plural {
                        flush()
                        parts.append(.number(plural))
                    } else {
                        text.append("#")
                    }
                    at += 1
                case "'":
                    at += 1
                    if at < characters.count && characters[at] == "'" {
                        text.append("'")
                        at += 1
                    } else if at < characters.count && "{}#".contains(characters[at]) {
                        // Quoted: literal text up to the next lone apostrophe.
                        while at < characters.count {
                            if characters[at] == "'" {
                                if at + 1 < characters.count && characters[at + 1] == "'" {
                                    text.append("'")
                                    at += 2
                                    continue
                                }
                                at += 1
                                break
                            }
                            text.append(characters[at])
                            at += 1
                        }
                    } else {
                        text.append("'")
                    }
                default:
                    text.append(c)
                    at += 1
                }
            }
            if closing { throw fail("a '{' is never closed; every case needs its '}'") }
            flush()
            return parts
        }

        mutating func skipSpaces() {
            while at < characters.count && characters[at].isWhitespace { at += 1 }
        }

        mutating func word() -> String {
            var w = ""
            while at < characters.count, !characters[at].isWhitespace, !",{}".contains(characters[at]) {
                w.append(characters[at])
                at += 1
            }
            return w
        }

        mutating func expect(_ c: Character, _ what: String) throws(Problem) {
            skipSpaces()
            guard at < characters.count, characters[at] == c else { throw fail(what) }
            at += 1
        }

        /// After a `{`: `name}`, `name, plural, cases}` or `name, select, cases}`.
        mutating func argument() throws(Problem) -> Part {
            let brace = at - 1
            skipSpaces()
            let name = word()
            guard !name.isEmpty else { throw fail("a '{' needs a placeholder name; use \(allNames)", at: brace) }
            guard numbers.contains(name) || texts.contains(name) else {
                throw fail("unknown placeholder {\(name)}; use \(allNames)", at: brace)
            }
            skipSpaces()
            guard at < characters.count else { throw fail("{\(name) is never closed; write {\(name)}") }
            if characters[at] == "}" {
                at += 1
                return .value(name)
            }
            try expect(",", "after {\(name) comes '}', or ', plural,' or ', select,' and cases")
            skipSpaces()
            let type = word()
            guard type == "plural" || type == "select" else {
                throw fail("{\(name), \(type)…}: use plural or select")
            }
            if type == "plural" && !numbers.contains(name) {
                throw fail(
                    "{\(name)} is not a number; plural counts \(numbers.map { "{\($0)}" }.joined(separator: ", "))")
            }
            try expect(",", "{\(name), \(type)} needs its cases, such as {\(name), \(type), other {…}}")
            var cases: [Case] = []
            while true {
                skipSpaces()
                guard at < characters.count else { throw fail("{\(name), \(type), …} is never closed") }
                if characters[at] == "}" {
                    at += 1
                    break
                }
                let selector = word()
                guard !selector.isEmpty else { throw fail("a case of {\(name), \(type), …} needs a selector") }
                if type == "plural" {
                    let categories = ["zero", "one", "two", "few", "many", "other"]
                    let exact = selector.first == "=" && Int(selector.dropFirst()) != nil
                    guard exact || categories.contains(selector) else {
                        throw fail(
                            "\(selector) is not a plural case; use =N (such as =0) or \(categories.joined(separator: ", "))"
                        )
                    }
                }
                try expect(
                    "{", "the case \(selector) of {\(name), \(type), …} needs its text in braces: \(selector) {…}")
                cases.append(
                    Case(selector: selector, parts: try message(closing: true, plural: type == "plural" ? name : nil)))
            }
            guard cases.contains(where: { $0.selector == "other" }) else {
                throw fail("{\(name), \(type), …} needs an other {…} case")
            }
            return type == "plural" ? .plural(name, cases) : .select(name, cases)
        }
    }
}
