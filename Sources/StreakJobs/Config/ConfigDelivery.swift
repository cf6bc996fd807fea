import Foundation
import StreakCore
import StreakDelivery
import TOMLKit

/// The delivery sections of `streakd.toml`: `[desktop]`, `[[hooks]]`, `[journal]` and `[runs]`.
extension ConfigLoader {
    static let hookNameRule = "1 to 32 characters of a-z, 0-9, '_' and '-'"
    /// A hook's command line: at most this many strings, each at most this many bytes.
    static let argumentsAtMost = 256
    static let argumentBytesAtMost = 4096

    /// Each part is read on its own (`TableReader.attempt`), so that every problem is reported.
    static func readDelivery(_ table: TOMLTable, reader: TableReader, into config: inout Config, checkPrograms: Bool) {
        reader.attempt {
            guard let t = try reader.table(table, "desktop", in: "") else { return }
            try reader.keys(t, in: "desktop", allowed: ["users"])
            if let users = try reader.stringArray(t, "users", in: "desktop") {
                for u in users {
                    if let rule = Validate.userID(u) {
                        throw reader.error("desktop", "users", "\(quoted(u)) is not a user id; use \(rule)")
                    }
                }
                config.desktopUsers = users
            }
        }
        reader.attempt {
            guard let t = try reader.table(table, "journal", in: "") else { return }
            try reader.keys(t, in: "journal", allowed: ["burst", "interval_seconds"])
            config.journalBurst = try reader.int(t, "burst", in: "journal", range: 0...1_000_000) ?? config.journalBurst
            config.journalInterval =
                try reader.int(t, "interval_seconds", in: "journal", range: 1...3600) ?? config.journalInterval
        }
        reader.attempt {
            guard let t = try reader.table(table, "runs", in: "") else { return }
            try reader.keys(t, in: "runs", allowed: ["lease_seconds"])
            config.leaseSeconds =
                try reader.int(t, "lease_seconds", in: "runs", range: 5...86_400) ?? config.leaseSeconds
        }
        guard let value = table["hooks"] else { return }
        guard let array = value.array, value.type == .array else {
            reader.note(reader.error("hooks", nil, "must be an array of tables, each under a [[hooks]] header"))
            return
        }
        for (i, item) in array.enumerated() {
            reader.attempt {
                guard let t = item.table else {
                    throw reader.error("hooks", nil, "must be an array of tables, each under a [[hooks]] header")
                }
                let hook = try readHook(t, index: i, reader: reader)
                if config.hooks.contains(where: { $0.name == hook.name }) {
                    throw reader.error(
                        "hooks", "name", "\(quoted(hook.name)) names two hooks; give each hook its own name",
                        occurrence: i)
                }
                config.hooks.append(hook)
                // SPEC §5: the program an absolute path. A relative one runs whatever is at that path
                // in the folder of whoever runs `tick`; a bare name, whatever their PATH finds first
                // (a unit's PATH is not a terminal's).
                let program = hook.argv[0]
                guard program.hasPrefix("/") else {
                    let name = program.split(separator: "/").last.map(String.init) ?? program
                    throw reader.error(
                        "hooks", "command",
                        "\(quoted(program)) is not an absolute path; name the program by its full path, such as "
                            + "\"/usr/local/bin/\(name)\" (`command -v \(name)` shows it): streakd runs hooks in no "
                            + "particular folder and looks nothing up in PATH", occurrence: i)
                }
                if checkPrograms, let reason = cannotRun(program) {
                    throw reader.error(
                        "hooks", "command",
                        "\(quoted(program)) cannot be run: \(reason); give the path of an executable file",
                        occurrence: i)
                }
            }
        }
    }

    /// Why a program at an absolute path cannot be run from here, or nil.
    static func cannotRun(_ program: String) -> String? {
        var isFolder: ObjCBool = false
        if FileManager.default.fileExists(atPath: program, isDirectory: &isFolder), isFolder.boolValue {
            return String(cString: strerror(EISDIR))
        }
        return access(program, X_OK) == 0 ? nil : String(cString: strerror(errno))
    }

    /// Reads the file again as `config check` does: every problem, and hooks whose program cannot
    /// be run from here (not there, not executable, a folder) too.
    public static func check(path: String) throws {
        guard let data = FileManager.default.contents(atPath: path), let text = String(data: data, encoding: .utf8)
        else { return }  // `load` has said why already
        _ = try parse(text, file: path, checkPrograms: true)
    }

    static func readHook(_ t: TOMLTable, index i: Int, reader: TableReader) throws -> HookCommand {
        func fail(_ key: String?, _ message: String) -> StreakdError {
            reader.error("hooks", key, message, occurrence: i)
        }
        let allowed = ["name", "command", "timeout_seconds", "kinds", "concurrency", "batch"]
        for key in t.keys where !allowed.contains(key) {
            throw fail(key, "unknown setting; valid in [[hooks]]: \(allowed.joined(separator: ", "))")
        }
        guard let name = t["name"]?.string, t["name"]?.type == .string else {
            throw fail(t["name"] == nil ? nil : "name", "every hook needs a name = \"…\" of \(hookNameRule)")
        }
        let nameOK =
            (1...32).contains(name.count)
            && name.unicodeScalars.allSatisfy {
                ("a"..."z").contains($0) || ("0"..."9").contains($0) || $0 == "_" || $0 == "-"
            }
        guard nameOK else { throw fail("name", "\(quoted(name)) is not a hook name; use \(hookNameRule)") }
        let argvRule =
            "must be a list of strings, the program and its arguments, such as [\"/usr/local/bin/notify\", \"--quiet\"]; streakd never runs a shell"
        guard let c = t["command"] else { throw fail(nil, "hook \(quoted(name)) needs a command = [\"program\", …]") }
        guard c.type == .array, let items = c.array, !items.isEmpty else { throw fail("command", argvRule) }
        var argv: [String] = []
        for item in items {
            guard item.type == .string, let s = item.string else { throw fail("command", argvRule) }
            if s.utf8.contains(0) { throw fail("command", TableReader.nulRule) }
            argv.append(s)
        }
        // The kernel refuses (E2BIG) an argument over 128 KiB, and all of them with the environment
        // over its limit: every run of the hook would fail.
        guard items.count <= Self.argumentsAtMost, argv.allSatisfy({ $0.utf8.count <= Self.argumentBytesAtMost }) else {
            throw fail(
                "command",
                "is too long for a program's command line; use at most \(Self.argumentsAtMost) strings of at most "
                    + "\(Self.argumentBytesAtMost) bytes each (a longer text belongs in a file the program reads)")
        }
        guard !argv[0].isEmpty, !argv[0].contains(" ") || argv[0].hasPrefix("/") else {
            throw fail(
                "command",
                "\(quoted(argv[0])) is not a program; put the program alone first and each argument in its own string")
        }
        let timeout = try readInt(t, "timeout_seconds", range: 1...3600, fail: fail) ?? 10
        var kinds: Set<NotificationKind>?
        if let k = t["kinds"] {
            let rule =
                "must be a list of kinds from \(NotificationKind.allCases.map(\.rawValue).joined(separator: ", "))"
            guard k.type == .array, let list = k.array else { throw fail("kinds", rule) }
            kinds = []
            for item in list {
                guard let s = item.string, let kind = NotificationKind(rawValue: s) else {
                    throw fail("kinds", "\(item.string.map(quoted) ?? "a value") is not a kind; \(rule)")
                }
                kinds?.insert(kind)
            }
        }
        let concurrency = try readInt(t, "concurrency", range: 1...64, fail: fail) ?? 1
        let batch = try readInt(t, "batch", range: 1...10_000, fail: fail) ?? 1
        return HookCommand(
            name: name, argv: argv, timeout: Double(timeout), kinds: kinds, concurrency: concurrency, batch: batch)
    }

    static func readInt(
        _ t: TOMLTable, _ key: String, range: ClosedRange<Int>, fail: (String?, String) -> StreakdError
    ) throws -> Int? {
        guard let v = t[key] else { return nil }
        guard v.type == .int, let i = v.int, range.contains(i) else {
            throw fail(key, "must be a whole number from \(range.lowerBound) to \(range.upperBound)")
        }
        return i
    }
}

extension TableReader {
    func stringArray(_ t: TOMLTable, _ key: String, in section: String) throws -> [String]? {
        guard let v = t[key] else { return nil }
        let rule = "must be a list of strings, such as [\"alice\"]"
        guard v.type == .array, let array = v.array else { throw error(section, key, rule) }
        return try array.map { item in
            guard item.type == .string, let s = item.string else { throw error(section, key, rule) }
            return s
        }
    }

    /// An error in the `occurrence`-th (0-based) `[[section]]` table: `hooks[2].command`.
    func error(_ section: String, _ key: String?, _ message: String, occurrence: Int) -> StreakdError {
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
        var seen = -1
        var found: Int?
        var inside = false
        for (i, raw) in lines.enumerated() {
            let s = raw.trimmingCharacters(in: .whitespaces).replacingOccurrences(of: " ", with: "")
            if s.hasPrefix("[") {
                inside = s.hasPrefix("[[" + section + "]]")
                if inside {
                    seen += 1
                    if seen == occurrence { found = i + 1 }
                }
                continue
            }
            if inside, seen == occurrence, let key,
                s.split(separator: "=", maxSplits: 1).first.map(String.init) == key
            {
                found = i + 1
                break
            }
        }
        let name = "\(section)[\(occurrence + 1)]" + (key.map { "." + $0 } ?? "")
        return .config("\(file):\(found ?? 1): \(name): \(message)")
    }
}
