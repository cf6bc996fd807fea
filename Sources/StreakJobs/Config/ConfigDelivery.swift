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
    /// `knownUsers` (`config check`, with a store): the store's users, which `[desktop] users` must
    /// name.
    static func readDelivery(
        _ table: TOMLTable, reader: TableReader, into config: inout Config, checkPrograms: Bool,
        knownUsers: Set<String>? = nil
    ) {
        reader.attempt {
            guard let t = try reader.table(table, "desktop", in: "") else { return }
            try reader.keys(t, in: "desktop", allowed: ["users"])
            if let users = try reader.stringArray(t, "users", in: "desktop") {
                for u in users {
                    if let rule = Validate.userID(u) {
                        throw reader.error("desktop", "users", "\(quoted(u)) is not a user id; use \(rule)")
                    }
                }
                let unknown = knownUsers.map { known in users.filter { !known.contains($0) } } ?? []
                if !unknown.isEmpty {
                    throw reader.error(
                        "desktop", "users",
                        "\(unknown.map(quoted).joined(separator: ", ")) \(unknown.count == 1 ? "is not a user" : "are not users") "
                            + "of the store; add \(unknown.count == 1 ? "it" : "them") (streakd user add ID --tz ZONE) or "
                            + "take \(unknown.count == 1 ? "it" : "them") out of the list")
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
        let hooks = reader.arrayOfTables(
            table, "hooks", rule: "must be an array of tables, each under a [[hooks]] header", nameKey: "name",
            twice: { ("name", "\(quoted($0)) names two hooks; give each hook its own name") },
            read: { t, i in readHook(t, index: i, reader: reader, checkPrograms: checkPrograms) })
        if let hooks { config.hooks += hooks }
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
    /// be run from here (not there, not executable, a folder) too, and with `knownUsers` (the
    /// store's) `[desktop] users` that name none of them.
    public static func check(path: String, knownUsers: Set<String>? = nil) throws {
        // Read as `load` reads it (at most 1 MiB); what it refused, it has said why already.
        guard let bytes = try? read(path), let text = String(validating: bytes, as: UTF8.self) else { return }
        _ = try parse(text, file: path, checkPrograms: true, knownUsers: knownUsers)
    }

    /// One `[[hooks]]` table, or nil when it has problems: each is noted (`config check` reports
    /// every one of them, not only the first).
    static func readHook(_ t: TOMLTable, index i: Int, reader: TableReader, checkPrograms: Bool) -> HookCommand? {
        var problems = 0
        func fail(_ key: String?, _ message: String) {
            reader.note(reader.error("hooks", key, message, occurrence: i))
            problems += 1
        }
        let allowed = ["name", "command", "timeout_seconds", "kinds", "concurrency", "batch"]
        for key in t.keys.sorted() where !allowed.contains(key) {
            fail(key, "unknown setting; valid in [[hooks]]: \(allowed.joined(separator: ", "))")
        }
        let name = t["name"]?.type == .string ? t["name"]?.string : nil
        if let name {
            let nameOK =
                (1...32).contains(name.count)
                && name.unicodeScalars.allSatisfy {
                    ("a"..."z").contains($0) || ("0"..."9").contains($0) || $0 == "_" || $0 == "-"
                }
            if !nameOK { fail("name", "\(quoted(name)) is not a hook name; use \(hookNameRule)") }
        } else {
            fail(t["name"] == nil ? nil : "name", "every hook needs a name = \"…\" of \(hookNameRule)")
        }
        let argv = readCommand(t, name: name, fail: fail)
        let timeout = readInt(t, "timeout_seconds", 1...3600, fail: fail) ?? 10
        let kinds = t["kinds"] == nil ? nil : readKinds(t, fail: fail)
        // SPEC §12: processes at once, and notifications one process takes.
        let concurrency = readInt(t, "concurrency", 1...64, fail: fail) ?? 1
        let batch = readInt(t, "batch", 1...10_000, fail: fail) ?? 1
        if let argv, checkPrograms, let reason = cannotRun(argv[0]) {
            fail("command", "\(quoted(argv[0])) cannot be run: \(reason); give the path of an executable file")
        }
        guard problems == 0, let name, let argv else { return nil }
        return HookCommand(
            name: name, argv: argv, timeout: Double(timeout), kinds: kinds, concurrency: concurrency, batch: batch)
    }

    /// A hook's `command`: an argv array whose program is an absolute path (SPEC §5), or nil
    /// after noting what is wrong with it.
    static func readCommand(_ t: TOMLTable, name: String?, fail: (String?, String) -> Void) -> [String]? {
        let argvRule =
            "must be a list of strings, the program and its arguments, such as [\"/usr/local/bin/notify\", \"--quiet\"]; streakd never runs a shell"
        guard let c = t["command"] else {
            fail(nil, "hook \(name.map(quoted) ?? "") needs a command = [\"program\", …]")
            return nil
        }
        guard c.type == .array, let items = c.array, !items.isEmpty else {
            fail("command", argvRule)
            return nil
        }
        var argv: [String] = []
        for item in items {
            guard item.type == .string, let s = item.string else {
                fail("command", argvRule)
                return nil
            }
            if s.utf8.contains(0) {
                fail("command", TableReader.nulRule)
                return nil
            }
            argv.append(s)
        }
        // The kernel refuses (E2BIG) an argument over 128 KiB, and all of them with the environment
        // over its limit: every run of the hook would fail.
        guard items.count <= Self.argumentsAtMost, argv.allSatisfy({ $0.utf8.count <= Self.argumentBytesAtMost }) else {
            fail(
                "command",
                "is too long for a program's command line; use at most \(Self.argumentsAtMost) strings of at most "
                    + "\(Self.argumentBytesAtMost) bytes each (a longer text belongs in a file the program reads)")
            return nil
        }
        guard !argv[0].isEmpty, !argv[0].contains(" ") || argv[0].hasPrefix("/") else {
            fail(
                "command",
                "\(quoted(argv[0])) is not a program; put the program alone first and each argument in its own string")
            return nil
        }
        // SPEC §5: the program an absolute path. A relative one runs whatever is at that path in
        // the folder of whoever runs `tick`; a bare name, whatever their PATH finds first (a
        // unit's PATH is not a terminal's).
        let program = argv[0]
        guard program.hasPrefix("/") else {
            let base = program.split(separator: "/").last.map(String.init) ?? program
            fail(
                "command",
                "\(quoted(program)) is not an absolute path; name the program by its full path, such as "
                    + "\"/usr/local/bin/\(base)\" (`command -v \(base)` shows it): streakd runs hooks in no "
                    + "particular folder and looks nothing up in PATH")
            return nil
        }
        return argv
    }

    /// A table's whole number in `range`, or nil (absent, or noted through `fail`).
    static func readInt(
        _ t: TOMLTable, _ key: String, _ range: ClosedRange<Int>, fail: (String?, String) -> Void
    ) -> Int? {
        guard let v = t[key] else { return nil }
        guard v.type == .int, let n = v.int, range.contains(n) else {
            fail(key, "must be a whole number from \(range.lowerBound) to \(range.upperBound)")
            return nil
        }
        return n
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

    /// The tables of `[[section]]`, each read by `read` (nil: it had problems, noted), those whose
    /// `nameKey` (as written) repeats one before them left out with `twice`'s message; nil when the file has no
    /// `section` or it is no array. Every problem is noted (`config check` reports them all).
    func arrayOfTables<T>(
        _ table: TOMLTable, _ section: String, rule: String, nameKey: String,
        twice: (String) -> (key: String, message: String), read: (TOMLTable, Int) -> T?
    ) -> [T]? {
        guard let value = table[section] else { return nil }
        guard let array = value.array, value.type == .array else {
            note(error(section, nil, rule))
            return nil
        }
        var items: [T] = []
        // Names as written, those of entries with other problems too: each problem at once.
        var names: Set<String> = []
        for (i, element) in array.enumerated() {
            guard let t = element.table else {
                note(error(section, nil, rule, occurrence: i))
                continue
            }
            let item = read(t, i)
            if let name = t[nameKey]?.string, !names.insert(name).inserted {
                let (key, message) = twice(name)
                note(error(section, key, message, occurrence: i))
                continue
            }
            if let item { items.append(item) }
        }
        return items
    }
}
