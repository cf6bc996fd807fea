import ArgumentParser
import Foundation
import Logging
import StreakCore
import StreakJobs
import StreakSQLite
import StreakStore

extension Context.ImportFormat: ExpressibleByArgument {}

/// `-o`: every command prints `short` or `json`; `log` also `cat` and `verbose`.
enum OutputOption: String, CaseIterable, ExpressibleByArgument {
    case short, json, cat, verbose
}

/// A store error on its way to the user.
struct StoreFailure: Error {
    var message: String
}

/// The options every command takes.
struct GlobalOptions: ParsableArguments {
    @Option(
        name: .long,
        help: ArgumentHelp(
            "The store: a SQLite file path (or STREAKD_STORE; default in the state directory).", valueName: "path|url"),
        completion: .file())
    var store: String?

    @Option(name: .long, help: ArgumentHelp("The configuration file.", valueName: "path"), completion: .file())
    var config: String?

    @Option(
        name: .long,
        help: ArgumentHelp("Run as if this RFC 3339 instant were now (or STREAKD_NOW).", valueName: "rfc3339"))
    var now: String?

    @Option(
        name: .short,
        help: ArgumentHelp(
            "Output format: short or json (one JSON object per line); log also cat and verbose.",
            valueName: "short|json"))
    var output: OutputOption = .short

    @Flag(name: .shortAndLong, help: "Log what streakd does to standard error.")
    var verbose = false

    /// The store as named: `--store`, else `STREAKD_STORE`, else the default path.
    func storeLocation(_ env: [String: String]) -> String {
        if let store { return store }
        if let named = env["STREAKD_STORE"], !named.isEmpty { return named }
        return Paths(environment: env).defaultStore
    }

    /// The printer for `-o`: `cat` and `verbose` are `log`'s alone.
    func printer() throws -> Printer {
        switch output {
        case .short: return .standard(format: .short)
        case .json: return .standard(format: .json)
        case .cat, .verbose:
            throw StreakdError.usage("-o \(output.rawValue) is for log only; use -o short or -o json")
        }
    }

    func logger() -> Logger {
        var logger = Logger(label: "streakd") { StreamLogHandler.standardError(label: $0) }
        logger.logLevel = verbose ? .debug : .warning
        return logger
    }

    /// Builds the context and runs a job in it.
    func run(_ job: (Context) throws -> Void) throws {
        let env = ProcessInfo.processInfo.environment
        let paths = Paths(environment: env)
        let logger = logger()
        let printer = try printer()
        let instant = try nowInstant(env)
        let config = try ConfigLoader.load(path: config ?? paths.defaultConfig, explicit: config != nil)
        let location = try storePath(storeLocation(env))
        logger.debug("opening store", metadata: ["path": "\(location)"])
        let opened: SQLiteStore
        do {
            opened = try SQLiteStore(path: location)
        } catch let e as StoreError {
            throw StoreFailure(message: e.description)
        }
        let context = Context(
            store: opened, config: config, now: instant, zones: ZoneBook(logger: logger, around: instant),
            printer: printer, logger: logger)
        do {
            try job(context)
        } catch let e as StoreError {
            throw StreakdError(.tempFail, e.description)
        }
    }

    func nowInstant(_ env: [String: String]) throws -> Instant {
        let (text, name) = now.map { ($0, "--now") } ?? (env["STREAKD_NOW"].map { ($0, "STREAKD_NOW") } ?? (nil, ""))
        guard let text, !text.isEmpty else {
            return Instant(seconds: Int64(Date().timeIntervalSince1970.rounded(.down)))
        }
        guard let instant = RFC3339.parse(text) else {
            throw StreakdError.usage(
                "\(name): \"\(text)\" is not an RFC 3339 instant with an offset; use e.g. 2026-11-21T19:00:00Z")
        }
        guard instant.seconds >= 0, instant.seconds < 7_258_118_400 else {
            throw StreakdError.usage("\(name): \(instant) is out of range; use an instant from 1970 to 2199")
        }
        return instant
    }

    func storePath(_ value: String) throws -> String {
        if value.hasPrefix("postgres://") || value.hasPrefix("postgresql://") {
            throw StreakdError(
                .unavailable, "--store: PostgreSQL stores are not available in this version yet; use a SQLite file path"
            )
        }
        if value.hasPrefix("sqlite://") { return String(value.dropFirst("sqlite://".count)) }
        if value.contains("://") {
            throw StreakdError.usage("--store: \"\(value)\" is not a store; use a SQLite file path")
        }
        return value
    }
}
