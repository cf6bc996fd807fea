import Foundation
import StreakCore
import TOMLKit

/// Reads `streakd.toml`: every key checked, errors naming file, line and key.
public enum ConfigLoader {
    /// Loads the configuration. A missing file at a default path means the
    /// defaults; a missing file named on the command line is an error.
    /// `environment`: the process's (`STREAKD_JOURNAL_PACING`, `unpacedWhereExempt`).
    public static func load(
        path: String, explicit: Bool, environment: [String: String] = ProcessInfo.processInfo.environment
    ) throws -> Config {
        guard FileManager.default.fileExists(atPath: path) else {
            if explicit { throw StreakdError(.noInput, "\(path): no such configuration file") }
            return unpacedWhereExempt(Config(), fileSetsBurst: false, environment: environment)
        }
        let bytes = try read(path)
        guard let text = String(validating: bytes, as: UTF8.self) else {
            let (line, column) = invalidUTF8(bytes)
            throw StreakdError.config("\(path):\(line): the configuration is not valid UTF-8 text (column \(column))")
        }
        var config = try parse(text, file: path)
        config.source = path
        let fileSetsBurst = (try? TOMLTable(string: text))?["journal"]?.table?["burst"] != nil
        return unpacedWhereExempt(config, fileSetsBurst: fileSetsBurst, environment: environment)
    }

    /// The variable the shipped units set beside `LogRateLimitIntervalSec=0` (SPEC §12): journald
    /// does not limit this service, so its entries are not paced.
    public static let pacingVariable = "STREAKD_JOURNAL_PACING"

    /// No journal pacing where the unit says journald does not rate-limit it
    /// (`STREAKD_JOURNAL_PACING=off`), unless the file sets `[journal] burst` itself.
    static func unpacedWhereExempt(
        _ config: Config, fileSetsBurst: Bool, environment: [String: String]
    ) -> Config {
        guard !fileSetsBurst, environment[pacingVariable] == "off" else { return config }
        var config = config
        config.journalBurst = 0
        return config
    }

    /// A configuration is a small text file: more than this is not one.
    static let maxSize = 1 << 20

    /// The file's bytes, read as a stream until its end, so that `/dev/null`
    /// (like any empty file) is an empty configuration: the defaults.
    static func read(_ path: String) throws -> [UInt8] {
        var isFolder: ObjCBool = false
        if FileManager.default.fileExists(atPath: path, isDirectory: &isFolder), isFolder.boolValue {
            throw StreakdError.config("\(path): a folder, not a configuration file")
        }
        let handle: FileHandle
        do {
            handle = try OpenToRead.open(path)
        } catch .noWriter(let waited) {
            throw StreakdError.config(
                "\(path): a pipe nobody wrote to within \(waited.components.seconds) s; name the configuration file itself"
            )
        } catch .folder {
            throw StreakdError.config("\(path): a folder, not a configuration file")
        } catch {
            throw StreakdError.config("\(path): cannot read the configuration file")
        }
        defer { try? handle.close() }
        var bytes: [UInt8] = []
        do {
            while let data = try handle.read(upToCount: 1 << 16), !data.isEmpty {
                bytes += data
                guard bytes.count <= maxSize else {
                    throw StreakdError.config(
                        "\(path): over \(maxSize >> 20) MiB; a configuration is a small text file (is this the right path?)"
                    )
                }
            }
        } catch let error as StreakdError {
            throw error
        } catch {
            throw StreakdError.config("\(path): cannot read the configuration file")
        }
        return bytes
    }

    /// Where the first byte that is not UTF-8 is: line and column, for the message.
    static func invalidUTF8(_ bytes: [UInt8]) -> (Int, Int) {
        var line = 1
        var column = 1
        var iterator = bytes.makeIterator()
        var decoder = UTF8()
        while case .scalarValue(let c) = decoder.decode(&iterator) {
            (line, column) = c == "\n" ? (line + 1, 1) : (line, column + 1)
        }
        return (line, column)
    }

    /// Reads the configuration's text. With `checkPrograms` (`config check`), a hook whose
    /// program cannot be run from here is a problem too. Every problem is reported, not only the
    /// first.
    public static func parse(
        _ text: String, file: String, checkPrograms: Bool = false, knownUsers: Set<String>? = nil
    ) throws -> Config {
        try TOMLPrecheck.check(text, file: file)
        let table: TOMLTable
        do {
            table = try TOMLTable(string: text)
        } catch let error as TOMLParseError {
            throw StreakdError.config("\(file):\(error.source.begin.line): \(error.description)")
        }
        let reader = TableReader(file: file, text: text)
        var config = Config()
        let sections = [
            "import", "freeze", "reminders", "desktop", "hooks", "webhooks", "journal", "runs", "api", "streaks",
            "messages", "metrics", "pause", "repair",
        ]
        try reader.keys(table, in: "", allowed: sections + ["xp", "levels", "badges"])
        reader.attempt {
            guard let t = try reader.table(table, "import", in: "") else { return }
            try reader.keys(t, in: "import", allowed: ["backfill_days"])
            config.backfillDays =
                try reader.int(t, "backfill_days", in: "import", range: 0...365) ?? config.backfillDays
        }
        reader.attempt {
            guard let t = try reader.table(table, "freeze", in: "") else { return }
            config.freeze = try reader.freeze(t, in: "freeze", base: config.freeze)
        }
        reader.attempt {
            guard let t = try reader.table(table, "reminders", in: "") else { return }
            try reader.keys(t, in: "reminders", allowed: ["days", "max_late", "usual_earliest", "usual_latest"])
            config.reminderDays =
                try reader.intArray(t, "days", in: "reminders", range: 1...100_000) ?? config.reminderDays
            if let late = try reader.string(t, "max_late", in: "reminders") {
                guard let s = DurationText.seconds(late), s > 0 else {
                    throw reader.error(
                        "reminders", "max_late", "\(quoted(late)) is not a duration; use \(DurationText.rule)")
                }
                config.maxLate = s
            }
            try readUsualBounds(t, reader: reader, into: &config)
        }
        reader.attempt {
            guard let t = try reader.table(table, "pause", in: "") else { return }
            try reader.keys(t, in: "pause", allowed: ["max_days", "days_per_year"])
            config.pause.maxDays = try reader.int(t, "max_days", in: "pause", range: 1...366) ?? config.pause.maxDays
            config.pause.daysPerYear =
                try reader.int(t, "days_per_year", in: "pause", range: 0...366) ?? config.pause.daysPerYear
        }
        reader.attempt {
            guard let t = try reader.table(table, "repair", in: "") else { return }
            try reader.keys(t, in: "repair", allowed: ["window_hours", "per_30_days"])
            config.repair.windowHours =
                try reader.int(t, "window_hours", in: "repair", range: 1...8760) ?? config.repair.windowHours
            config.repair.per30Days =
                try reader.int(t, "per_30_days", in: "repair", range: 0...100) ?? config.repair.per30Days
        }
        readDelivery(table, reader: reader, into: &config, checkPrograms: checkPrograms, knownUsers: knownUsers)
        readWebhooks(table, reader: reader, into: &config, checkFiles: checkPrograms)
        readAPI(table, reader: reader, into: &config)
        reader.attempt {
            guard let t = try reader.table(table, "metrics", in: "") else { return }
            try reader.keys(t, in: "metrics", allowed: ["textfile"])
            if let path = try reader.string(t, "textfile", in: "metrics") {
                var isFolder: ObjCBool = false
                if path.hasPrefix("/"), path.count > 1,
                    path.hasSuffix("/")
                        || (FileManager.default.fileExists(atPath: path, isDirectory: &isFolder)
                            && isFolder.boolValue)
                {
                    let folder = path.hasSuffix("/") ? String(path.dropLast()) : path
                    throw reader.error(
                        "metrics", "textfile",
                        "\(quoted(path)) is a folder; name the file in it, such as \"\(folder)/streakd.prom\"")
                }
                guard path.hasPrefix("/"), path.count > 1, !path.utf8.contains(0) else {
                    throw reader.error(
                        "metrics", "textfile",
                        "\(quoted(path)) is not an absolute file path; use one such as "
                            + "\"/var/lib/prometheus/node-exporter/streakd.prom\"")
                }
                config.metricsTextfile = path
            }
        }
        readAchievements(table, reader: reader, into: &config)
        reader.attempt { try readMessages(table, reader: reader, into: &config) }
        reader.attempt {
            guard let streaks = try reader.table(table, "streaks", in: "") else { return }
            for id in streaks.keys.sorted() {
                reader.attempt {
                    if let problem = Validate.streakID(id) {
                        throw reader.error(
                            "streaks", nil, "\(quoted(id)) is not a streak id; use \(problem)", header: "streaks.\(id)")
                    }
                    guard let t = try reader.table(streaks, id, in: "streaks") else { return }
                    let section = "streaks.\(id)"
                    try reader.keys(t, in: section, allowed: ["goal", "leeway_hours", "rest_days", "freeze"])
                    var s = StreakSettings()
                    s.freeze = config.freeze
                    s.goal = try reader.int(t, "goal", in: section, range: 1...100) ?? s.goal
                    s.leewayHours = try reader.int(t, "leeway_hours", in: section, range: 0...24) ?? s.leewayHours
                    s.restDays = try reader.restDays(t, in: section) ?? s.restDays
                    if let f = try reader.table(t, "freeze", in: section) {
                        s.freeze = try reader.freeze(f, in: section + ".freeze", base: config.freeze)
                    }
                    config.streaks[id] = s
                }
            }
        }
        try reader.finish()
        return config
    }

    /// `reminders.usual_earliest|usual_latest` (SPEC §14): HH:MM on the quarter hour (the usual
    /// hour is one, and so stays on the timer's firings), the earliest not after the latest.
    static func readUsualBounds(_ t: TOMLTable, reader: TableReader, into config: inout Config) throws {
        var seen: [String: Int] = [:]
        for key in ["usual_earliest", "usual_latest"] {
            guard let text = try reader.string(t, key, in: "reminders") else { continue }
            guard let seconds = Validate.wallTime(text), seconds % 900 == 0 else {
                throw reader.error(
                    "reminders", key,
                    "\(quoted(text)) is not a time of day on the quarter hour; use HH:MM with minutes 00, 15, 30 or 45, "
                        + "such as \"\(key == "usual_earliest" ? "08:00" : "21:00")\"")
            }
            seen[key] = seconds
        }
        let earliest = seen["usual_earliest"] ?? config.usualEarliest
        let latest = seen["usual_latest"] ?? config.usualLatest
        guard earliest <= latest else {
            let key = seen["usual_latest"] != nil ? "usual_latest" : "usual_earliest"
            throw reader.error(
                "reminders", key,
                "usual_earliest (\(Validate.wallTimeText(earliest))) is after usual_latest "
                    + "(\(Validate.wallTimeText(latest))); the earliest must not be after the latest")
        }
        (config.usualEarliest, config.usualLatest) = (earliest, latest)
    }
}
