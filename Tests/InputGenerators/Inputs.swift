import StreakTestKit

/// Generated input for every parser streakd has: valid examples built from parts,
/// then mutated (bytes changed, tokens put in, spans cut or repeated) into the
/// near misses and garbage that files and command lines bring.
public enum Inputs {
    /// The seed of a fuzz run: `STREAKD_FUZZ_SEED`, else a fixed one, so a run is
    /// repeatable and a failure can be replayed with the seed it printed.
    public static func seed(_ environment: [String: String]) -> UInt64 {
        environment["STREAKD_FUZZ_SEED"].flatMap { UInt64($0) } ?? 2026
    }

    public static let users = ["u1", "u.2", "U3"]
    public static let zones = ["Europe/Berlin", "Asia/Tokyo", "UTC", "America/New_York", "Australia/Lord_Howe"]

    /// Around `now` (seconds): an RFC 3339 instant, mostly valid.
    public static func instant(_ r: inout SplitMix64, now: Int64) -> String {
        let seconds = now - Int64(r.below(380 * 86400)) + Int64(r.below(900))
        let offset = r.pick([0, 3600, -18000, 19800, 45 * 60, 14 * 3600, -12 * 3600])
        let local = seconds + Int64(offset)
        let day = Int((local - ((local % 86400) + 86400) % 86400) / 86400)
        let secs = Int(local - Int64(day) * 86400)
        let (y, m, d) = civil(day)
        var text = "\(pad(y, 4))-\(pad(m, 2))-\(pad(d, 2))\(r.pick(["T", "T", "t", " "]))"
        text += "\(pad(secs / 3600, 2)):\(pad(secs / 60 % 60, 2)):\(pad(secs % 60, 2))"
        if r.oneIn(6) { text += "." + String(r.below(1_000_000_000)) }
        if offset == 0 && r.oneIn(2) { return text + r.pick(["Z", "z"]) }
        let a = abs(offset)
        return text + (offset < 0 ? "-" : "+") + pad(a / 3600, 2) + ":" + pad(a / 60 % 60, 2)
    }

    /// A JSON line of a check-in (SPEC §6), fields in any order, some left out.
    public static func checkinLine(_ r: inout SplitMix64, now: Int64) -> String {
        var fields = [("user", quote(r.pick(users))), ("at", quote(instant(&r, now: now)))]
        if r.oneIn(2) {
            fields.append(("streak", r.oneIn(8) ? "null" : quote(r.pick(["daily", "workout", "read_2"]))))
        }
        if r.oneIn(2) { fields.append(("tz", r.oneIn(8) ? "null" : quote(r.pick(zones)))) }
        if r.oneIn(2) { fields.append(("id", quote("e\(r.below(100))"))) }
        if r.oneIn(2) { fields.append(("meta", meta(&r))) }
        fields.shuffle(using: &r)
        let space = r.pick(["", "", " "])
        return "{" + fields.map { "\"\($0.0)\":\(space)\($0.1)" }.joined(separator: "," + space) + "}"
    }

    static func meta(_ r: inout SplitMix64) -> String {
        let keys = ["reps", "ok", "note", "km", "a_1"].shuffled(using: &r).prefix(r.below(4))
        let values = ["20", "-3", "0", "true", "false", "\"x\"", "\"grüße\"", "\"\\u00e9\\n\"", "123456789012345678"]
        return "{" + keys.map { "\"\($0)\":\(r.pick(values))" }.joined(separator: ",") + "}"
    }

    /// A CSV file's header naming the columns in some order, and rows for it.
    public static func csvHeader(_ r: inout SplitMix64) -> [String] {
        var columns = ["user", "at"]
        for optional in ["tz", "streak", "id"] where r.oneIn(2) { columns.append(optional) }
        return columns.shuffled(using: &r)
    }

    public static func csvRow(_ r: inout SplitMix64, columns: [String], now: Int64) -> String {
        columns.map { column -> String in
            let value: String
            switch column {
            case "user": value = r.pick(users)
            case "at": value = instant(&r, now: now)
            case "tz": value = r.oneIn(4) ? "" : r.pick(zones)
            case "streak": value = r.oneIn(4) ? "" : r.pick(["daily", "workout"])
            default: value = r.oneIn(4) ? "" : "c\(r.below(100))"
            }
            return r.oneIn(5)
                ? "\"" + value.split(separator: "\"", omittingEmptySubsequences: false).joined(separator: "\"\"") + "\""
                : value
        }.joined(separator: ",")
    }

    /// A JSON line of `user import`.
    public static func userLine(_ r: inout SplitMix64) -> String {
        var fields = [("user", quote("n\(r.below(1000))")), ("tz", quote(r.pick(zones)))]
        if r.oneIn(2) { fields.append(("remind_at", quote(r.pick(["20:00", "07:30", "23:59", "00:00"])))) }
        if r.oneIn(3) { fields.append(("remind", r.pick(["true", "false"]))) }
        fields.shuffle(using: &r)
        return "{" + fields.map { "\"\($0.0)\":\($0.1)" }.joined(separator: ",") + "}"
    }

    /// A configuration file with some of every section (`docs/configuration`).
    public static func toml(_ r: inout SplitMix64) -> String {
        var parts: [String] = []
        if r.oneIn(2) { parts.append("[import]\nbackfill_days = \(r.below(366))\n") }
        if r.oneIn(2) {
            let max = r.below(5)
            parts.append(
                "[freeze]\nmax = \(max)\ninitial = \(r.below(max + 1))\nmin_streak = \(1 + r.below(9))\nauto_use = \(r.pick(["true", "false"]))\n"
            )
        }
        if r.oneIn(2) { parts.append("[reminders]\ndays = [5, 7, 14]\nmax_late = \"\(1 + r.below(90))m\"\n") }
        if r.oneIn(3) { parts.append("[journal]\nburst = \(r.below(10000))\ninterval_seconds = \(1 + r.below(60))\n") }
        if r.oneIn(3) { parts.append("[desktop]\nusers = [\"u1\", \"u.2\"]\n") }
        if r.oneIn(3) {
            parts.append(
                "[[hooks]]\nname = \"ping\"\ncommand = [\"/usr/bin/true\", \"--x\"]\ntimeout_seconds = 5\nkinds = [\"at_risk\"]\n"
            )
        }
        if r.oneIn(2) {
            parts.append(
                "[streaks.workout]\ngoal = \(1 + r.below(5))\nleeway_hours = \(r.below(25))\n\n[streaks.workout.freeze]\nmax = 2\n"
            )
        }
        if r.oneIn(4) { parts.append("# a comment, with 'quotes' and é\n") }
        return parts.shuffled(using: &r).joined(separator: "\n")
    }

    /// A duration as `preview --until` takes it.
    public static func duration(_ r: inout SplitMix64) -> String {
        "\(r.below(200))\(r.pick(["m", "h", "d", "w"]))"
    }

    /// A `--meta KEY=VALUE`.
    public static func metaArgument(_ r: inout SplitMix64) -> String {
        r.pick(["reps", "ok", "note", "km", "a_1"]) + "="
            + r.pick(["20", "-3", "true", "false", "007", "+5", "x y", "", "=", "grüße", "9223372036854775807"])
    }

    /// Pieces worth putting into input: JSON, CSV and TOML syntax, escapes that are
    /// not characters, numbers past 64 bits, bytes that are not UTF-8, control characters.
    public static let tokens: [[UInt8]] =
        [
            "\"", "\\", "{", "}", "[", "]", ":", ",", "=", "\"\"", "\\ud800", "\\udc00", "\\u0000", "\\u00e9", "\\x",
            "9223372036854775808", "-9223372036854775809", "123456789012345678901234567890", "1e999", "1.5", "-0",
            "01", "null", "true", "tru", "\n", "\r", "\t", " ", "#", "'", "'''", "\"\"\"", "[[", "]]", "inf", "nan",
            "+", "-", "T", "Z", ":60", "24:00", "9999", "0000", "é", "𝄞", "\u{FEFF}", "\u{1b}", "\u{7f}",
            "[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[", String(repeating: "9", count: 40),
            String(repeating: "a", count: 1100), "\"user\":\"u1\",", "\"meta\":{\"n\":1},", "\"at\":",
        ].map { Array($0.utf8) } + [[0], [0xFF], [0xC3], [0xED, 0xA0, 0x80], [0xE2, 0x82]]

    /// `text` with 1 to 4 random changes.
    public static func mutate(_ text: [UInt8], _ r: inout SplitMix64) -> [UInt8] {
        var b = text
        for _ in 0...r.below(4) {
            let at = b.isEmpty ? 0 : r.below(b.count + 1)
            switch r.below(7) {
            case 0 where !b.isEmpty:  // a byte replaced
                b[min(at, b.count - 1)] = r.pick(tokens.filter { $0.count == 1 })[0]
            case 1, 2:  // a token put in
                b.insert(contentsOf: r.pick(tokens), at: at)
            case 3 where !b.isEmpty:  // a span cut out
                b.removeSubrange(min(at, b.count - 1)..<min(b.count, at + 1 + r.below(8)))
            case 4 where !b.isEmpty:  // a span repeated
                let end = min(b.count, at + 1 + r.below(12))
                b.insert(contentsOf: b[min(at, b.count - 1)..<end], at: end)
            case 5:  // cut short
                b.removeSubrange(at..<b.count)
            default:  // a run of digits made far too long
                if let digit = b.indices.shuffled(using: &r).first(where: { b[$0] >= 48 && b[$0] <= 57 }) {
                    b.insert(contentsOf: Array(String(repeating: "9", count: 19 + r.below(20)).utf8), at: digit)
                }
            }
        }
        return b
    }

    /// `text`, mutated now and then: about a third of the results stay valid.
    public static func maybeMutated(_ text: String, _ r: inout SplitMix64) -> [UInt8] {
        r.oneIn(3) ? Array(text.utf8) : mutate(Array(text.utf8), &r)
    }

    static func quote(_ s: String) -> String { "\"\(s)\"" }

    static func pad(_ n: Int, _ width: Int) -> String {
        let s = String(n)
        return String(repeating: "0", count: max(0, width - s.count)) + s
    }

    /// Year, month, day of a day number since 1970-01-01 (Howard Hinnant's algorithm).
    static func civil(_ days: Int) -> (Int, Int, Int) {
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let doe = z - era * 146_097
        let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146_096) / 365
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        let d = doy - (153 * mp + 2) / 5 + 1
        let m = mp < 10 ? mp + 3 : mp - 9
        return (yoe + era * 400 + (m <= 2 ? 1 : 0), m, d)
    }
}
