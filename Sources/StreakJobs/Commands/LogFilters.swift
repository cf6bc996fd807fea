import Foundation
import StreakCore
import StreakDelivery

/// `log -p`, `-g` and `--host` as journalctl takes them: the option's text read, or a usage error
/// (64) saying what would be valid.
enum LogFilters {
    /// syslog's levels by name, as journalctl -p and PRIORITY= number them.
    static let levels = ["emerg", "alert", "crit", "err", "warning", "notice", "info", "debug"]

    static let priorityRule =
        "use a level, by name (\(levels.joined(separator: ", "))) or number (0 to 7): that one and the more urgent "
        + "ones; or a range FROM..TO, such as err..notice"

    /// `-p LEVEL` (0...LEVEL) or `-p FROM..TO`.
    static func priorities(_ text: String) throws -> ClosedRange<Int> {
        func level(_ s: Substring) -> Int? {
            if let n = Int(s), (0...7).contains(n), s.count == 1 { return n }
            return levels.firstIndex(of: s.lowercased())
        }
        let parts = text.components(separatedBy: "..")
        switch parts.count {
        case 1:
            if let n = level(Substring(text)) { return 0...n }
        case 2:
            // As journalctl: either end may be left out, and the ends may come in either order.
            let from = parts[0].isEmpty ? 0 : level(Substring(parts[0]))
            let to = parts[1].isEmpty ? 7 : level(Substring(parts[1]))
            if let from, let to { return min(from, to)...max(from, to) }
        default: break
        }
        throw StreakdError.usage("-p: \(quoted(text)) is not a priority; \(priorityRule)")
    }

    /// `--host NAME`: a machine's name as journald records it (`_HOSTNAME`).
    static func host(_ text: String) throws -> String {
        let ok =
            (1...255).contains(text.utf8.count)
            && text.unicodeScalars.allSatisfy { $0.value > 32 && $0.value < 127 && $0 != "=" }
        guard ok else {
            throw StreakdError.usage(
                "--host: \(quoted(text)) is not a machine's name; use the name journald records (_HOSTNAME), such as "
                    + "web-1 (journalctl -D DIR -F _HOSTNAME lists those in a journal)")
        }
        return text
    }

    /// The longest `-g` pattern taken, in bytes.
    static let patternBytesAtMost = 1024

    /// `-g PATTERN`: a regular expression, case-insensitive unless it has a capital letter.
    static func pattern(_ text: String) throws -> Regex<AnyRegexOutput> {
        guard !text.isEmpty, text.utf8.count <= patternBytesAtMost else {
            throw StreakdError.usage(
                "-g: the pattern is \(text.isEmpty ? "empty" : "longer than \(patternBytesAtMost) bytes"); give a "
                    + "regular expression for the messages, such as 'hook|desktop'")
        }
        do {
            let regex = try Regex(text)
            return text.contains(where: \.isUppercase) ? regex : regex.ignoresCase()
        } catch {
            throw StreakdError.usage(
                "-g: \(quoted(text)) is not a regular expression (\(error)); escape special characters with \\, "
                    + "such as 'at risk\\!'")
        }
    }

    /// Whether an entry's message (as `-o cat` shows it) matches.
    static func matches(_ entry: LogEntry, _ pattern: Regex<AnyRegexOutput>) -> Bool {
        (try? pattern.firstMatch(in: entry.notification.message)) != nil
    }
}

/// Colour in `log`'s lines, as journalctl's: failed deliveries (priority 4) yellow, dead ones
/// (priority 3) red, when standard output is a terminal (a pager's included) and the
/// environment does not say otherwise.
public enum LogColor {
    static let red = "\u{1B}[0;1;31m"
    static let yellow = "\u{1B}[0;1;33m"
    static let reset = "\u{1B}[0m"

    /// systemd's rule: `TERM=dumb` is none; `SYSTEMD_COLORS` a boolean (or `16`, `256`, `24bit`:
    /// on) decides; else `NO_COLOR` set and not empty is none; else colour on a terminal.
    public static func enabled(environment env: [String: String], isTerminal: Bool) -> Bool {
        if env["TERM"] == "dumb" { return false }
        if let value = env["SYSTEMD_COLORS"]?.lowercased(), !value.isEmpty {
            if ["1", "yes", "y", "true", "t", "on", "16", "256", "24bit"].contains(value) { return true }
            if ["0", "no", "n", "false", "f", "off"].contains(value) { return false }
        }
        if let noColor = env["NO_COLOR"], !noColor.isEmpty { return false }
        return isTerminal
    }

    static func paint(_ line: String, _ entry: LogEntry, on: Bool) -> String {
        guard on else { return line }
        if entry.dead != nil { return red + line + reset }
        if entry.failed != nil { return yellow + line + reset }
        return line
    }
}
