import Foundation
import StreakTestKit
import Testing

/// One rule for the values on a command line (issue 34, defect 5; streakd(1), EXIT STATUS): a
/// value that is not of its option's or argument's form or range is a usage error, 64, whatever
/// the option (it was 64 for `--weeks 0` and 65 for `--remind-at 8pm`); 65 is left for what a
/// well-formed value names (an unknown user, a name taken) and for input files' records; a file
/// that is not there is 66.
@Suite(.fastTier) struct OptionValueTests {
    /// A command line with one bad value, the option or argument it is for, and the exit status.
    struct Row: CustomStringConvertible, Sendable {
        var command: [String]
        var option: String
        var args: [String]
        var code: Int32 = 64
        var description: String { (command + args).joined(separator: " ") }
    }

    static func row(_ command: String, _ option: String, _ args: [String], _ code: Int32 = 64) -> Row {
        Row(command: command.split(separator: " ").map(String.init), option: option, args: args, code: code)
    }

    /// Every option and argument that takes a value, with one it refuses. The options every
    /// command takes (one implementation, `CommonOptions`) are tried on `status` and on `log`,
    /// whose -o values differ.
    static let rows: [Row] = [
        row("status", "--store", ["u1", "--store", "ftp://example.org/s"]),
        row("status", "--config", ["u1", "--config", ""]),
        row("status", "--now", ["u1", "--now", "soonish"]),
        row("status", "--now", ["u1", "--now", ""]),
        row("status", "-o", ["u1", "-o", "xml"]),
        row("status", "-o", ["u1", "-o", "cat"]),
        row("log", "-o", ["-o", "xml"]),
        row("log", "--now", ["--now", "soonish"]),
        row("user add", "id", ["bad id", "--tz", "Europe/Berlin"]),
        row("user add", "--tz", ["u2", "--tz", "Europe/Berln"]),
        row("user add", "--remind-at", ["u2", "--tz", "Europe/Berlin", "--remind-at", "8pm"]),
        row("user add", "--remind-at", ["u2", "--tz", "Europe/Berlin", "--remind-at", "08:07"]),
        row("user add", "--lang", ["u2", "--tz", "Europe/Berlin", "--lang", "!!"]),
        row("user add", "--lang", ["u2", "--tz", "Europe/Berlin", "--lang", "fr"]),
        row("user set", "id", ["bad id", "--tz", "Europe/Berlin"]),
        row("user set", "--tz", ["u1", "--tz", "Europe/Berln"]),
        row("user set", "--remind-at", ["u1", "--remind-at", "25:00"]),
        row("user set", "--lang", ["u1", "--lang", "!!"]),
        row("user remove", "id", ["bad id"]),
        row("user import", "file", ["$DIR/missing.jsonl"], 66),
        row("checkin", "id", ["bad id"]),
        row("checkin", "--streak", ["u1", "--streak", "Daily"]),
        row("checkin", "--at", ["u1", "--at", "8pm"]),
        row("checkin", "--at", ["u1", "--at", "2h"]),
        row("checkin", "--tz", ["u1", "--tz", "Europe/Berln"]),
        row("checkin", "--id", ["u1", "--id", "a b"]),
        row("checkin", "--meta", ["u1", "--meta", "k"]),
        row("checkin", "--meta", ["u1", "--meta", "Bad=1"]),
        row("import", "file", ["$DIR/missing.jsonl"], 66),
        row("import", "--format", ["$DIR/x.jsonl", "--format", "xml"]),
        row("status", "id", ["bad id"]),
        row("status", "--streak", ["u1", "--streak", "Daily"]),
        row("badges", "id", ["bad id"]),
        row("calendar", "id", ["bad id"]),
        row("calendar", "--streak", ["u1", "--streak", "Daily"]),
        row("calendar", "--weeks", ["u1", "--weeks", "0"]),
        row("calendar", "--weeks", ["u1", "--weeks", "abc"]),
        row("freeze add", "id", ["bad id"]),
        row("freeze add", "--streak", ["u1", "--streak", "Daily"]),
        row("freeze use", "id", ["bad id"]),
        row("freeze use", "--streak", ["u1", "--streak", "Daily"]),
        row("freeze use", "--date", ["u1", "--date", "2026-13-01"]),
        row("preview", "--until", ["--until", "soon"]),
        row("preview", "--user", ["--user", "bad id"]),
        row("preview", "--kind", ["--kind", "atrisk"]),
        row("log", "--lines", ["-n", "abc"]),
        row("log", "--since", ["--since", "soonish"]),
        row("log", "--until", ["--until", "2h"]),
        row("log", "--user", ["--user", "bad id"]),
        row("log", "--kind", ["--kind", "atrisk"]),
        row("log", "--directory", ["-D", "/etc/hostname"]),
        row("log", "--file", ["--file", "/nonexistent/x.journal"], 66),
        row("log", "--store-id", ["--store-id", "xyz"]),
        row("log", "--priority", ["-p", "loud"]),
        row("log", "--grep", ["-g", "("]),
        row("log", "--host", ["--host", ""]),
        row("store backup", "file", ["$DIR/x.jsonl"]),
        row("token add", "name", ["a b", "--scope", "read"]),
        row("token add", "--scope", ["t1", "--scope", "root"]),
        row("token remove", "name", ["a b"]),
        row("serve", "--listen", ["--listen", "nowhere"]),
        row("pause", "id", ["bad id", "--from", "2026-11-25", "--until", "2026-11-26"]),
        row("pause", "--streak", ["u1", "--streak", "Daily", "--from", "2026-11-25", "--until", "2026-11-26"]),
        row("pause", "--from", ["u1", "--from", "2026-13-01", "--until", "2026-11-26"]),
        row("pause", "--until", ["u1", "--from", "2026-11-25", "--until", "nope"]),
        row("resume", "id", ["bad id"]),
        row("resume", "--streak", ["u1", "--streak", "Daily"]),
        row("repair", "id", ["bad id"]),
        row("repair", "--streak", ["u1", "--streak", "Daily"]),
        row("deliveries list", "--state", ["--state", "gone"]),
        row("deliveries retry", "--sink", ["--sink", "nosuch"]),
        row("deliveries retry", "--kind", ["--kind", "atrisk"]),
        row("deliveries retry", "--user", ["--user", "bad id"]),
        row("deliveries retry", "--since", ["--since", "soonish"]),
    ]

    /// The options (every name) and value-taking arguments of each command, by the parser's own
    /// account (`--experimental-dump-help`), but the ones every command takes.
    static func declared() throws -> [String: Set<String>] {
        let r = streakd(["--experimental-dump-help"])
        let root = try #require(try JSONSerialization.jsonObject(with: Data(r.out.utf8)) as? [String: Any])
        var found: [String: Set<String>] = [:]
        func walk(_ command: [String: Any], _ path: [String]) {
            let subcommands = command["subcommands"] as? [[String: Any]] ?? []
            for sub in subcommands where sub["commandName"] as? String != "help" {
                walk(sub, path + [sub["commandName"] as? String ?? "?"])
            }
            guard subcommands.isEmpty else { return }
            for argument in command["arguments"] as? [[String: Any]] ?? [] {
                let kind = argument["kind"] as? String
                guard kind == "option" || kind == "positional" else { continue }
                let preferred = argument["preferredName"] as? [String: Any]
                let name = preferred?["name"] as? String ?? argument["valueName"] as? String ?? "?"
                let shown = kind == "positional" ? name : (preferred?["kind"] as? String == "short" ? "-" : "--") + name
                if ["--store", "--config", "--now", "-o"].contains(shown) { continue }
                found[path.joined(separator: " "), default: []].insert(shown)
            }
        }
        walk(root["command"] as? [String: Any] ?? [:], [])
        return found
    }

    @Test func theTableCoversEveryOption() throws {
        let declared = try Self.declared()
        #expect(declared.count >= 15 && declared["log"]?.contains("--priority") == true, "\(declared)")
        for (command, options) in declared {
            let tried = Set(Self.rows.filter { $0.command.joined(separator: " ") == command }.map(\.option))
            for option in options.sorted() {
                // -n is --lines, -S --since, and so on: a row names an option by its long name.
                #expect(tried.contains(option), "no bad value is tried for streakd \(command) \(option)")
            }
        }
    }

    @Test func aBadValueIsAUsageErrorForEveryOption() throws {
        let s = try Sandbox()
        s.addUser("u1")
        try s.file("x.jsonl", "")
        // Each row its own process, four at a time (a row that hangs is killed after 20 s).
        let env = ["PATH": "/usr/bin:/bin", "LANG": "C.UTF-8"].merging(s.environment) { $1 }
        let jobs = Self.rows.map { row -> (Row, [String]) in
            let args = row.args.map { $0.replacingOccurrences(of: "$DIR", with: s.dir.path) }
            // --store itself is the value tried: the sandbox's would come after it and win.
            let store = row.option == "--store" ? [] : ["--store", s.store]
            return (row, [streakdBinary] + row.command + args + store)
        }
        let failures = Failures()
        DispatchQueue.concurrentPerform(iterations: 4) { lane in
            for (row, argv) in jobs.enumerated().filter({ $0.offset % 4 == lane }).map(\.element) {
                let r = StreakTestKit.run(argv, env: env, timeout: .seconds(20))
                // A person's error (streakd's, or the parser's for a value of the wrong type), never a trap.
                let person = r.err.hasPrefix("streakd: error:")
                if r.code != row.code || !person {
                    failures.add("streakd \(row): exit \(r.code), wanted \(row.code): \(r.err.prefix(300))")
                }
            }
        }
        #expect(failures.list.isEmpty, "\(failures.list.joined(separator: "\n"))")
    }

    /// A value with a leading "-" is the option's value, judged by its rule, not "Missing value"
    /// (the parser took `-1` for an option): as `--weeks 0` is told its range.
    @Test func aNegativeValueIsJudgedNotMissing() throws {
        let s = try Sandbox()
        s.addUser("u1")
        let weeks = s.run(["calendar", "u1", "--weeks", "-1"])
        #expect(weeks.code == 64 && weeks.err == error("--weeks: -1 is out of range; use 1 to 520"), "\(weeks)")
        let until = s.run(["preview", "--until", "-5h"])
        #expect(
            until.code == 64 && until.err.hasPrefix(error(#"--until: "-5h" is not a duration"#).dropLast()), "\(until)")
    }

    final class Failures: @unchecked Sendable {
        private let lock = NSLock()
        private var items: [String] = []
        func add(_ s: String) { lock.withLock { items.append(s) } }
        var list: [String] { lock.withLock { items } }
    }

    /// What a well-formed value names stays 65: an unknown user, a name taken, a date refused.
    @Test func wellFormedValuesTheDataRefusesStay65() throws {
        let s = try Sandbox()
        s.addUser("u1")
        for args in [
            ["status", "ghost"], ["checkin", "ghost"], ["user", "add", "u1", "--tz", "UTC"],
            ["user", "remove", "ghost"],
            ["checkin", "u1", "--at", "2027-01-01T00:00:00Z"], ["checkin", "u1", "--at", "2020-01-01T00:00:00Z"],
            ["preview", "--user", "ghost"],
            // A freeze's date the rules refuse, as a pause's (SPEC §14).
            ["freeze", "use", "u1", "--date", "2020-01-01"], ["freeze", "use", "u1", "--date", "2030-01-01"],
        ] {
            let r = s.run(args)
            #expect(r.code == 65, "\(args): \(r)")
        }
    }
}
