import ArgumentParser
import Foundation
import Logging
import StreakCore
import StreakJobs
import StreakSQLite
import StreakStore

extension OutputFormat: ExpressibleByArgument {}
extension Context.ImportFormat: ExpressibleByArgument {}

extension StoreError.Kind {
    /// The one place a store's error becomes an exit status (SPEC §6).
    var exitStatus: ExitStatus {
        switch self {
        case .unavailable, .full, .readOnly, .newer: .unavailable
        case .busy, .outdated: .tempFail
        case .damaged: .damaged
        case .missing: .noInput
        case .invalid: .usage
        }
    }
}

/// The options every command takes.
struct GlobalOptions: ParsableArguments {
    @Option(name: .long, help: ArgumentHelp("The store: a SQLite file path.", valueName: "path|url"))
    var store: String?

    @Option(name: .long, help: ArgumentHelp("The configuration file.", valueName: "path"))
    var config: String?

    @Option(
        name: .long,
        help: ArgumentHelp("Run as if this RFC 3339 instant were now (or STREAKD_NOW).", valueName: "rfc3339"))
    var now: String?

    @Option(name: .short, help: "Output format: short or json (one JSON object per line).")
    var output: OutputFormat = .short

    @Flag(name: .shortAndLong, help: "Log what streakd does to standard error.")
    var verbose = false

    /// Builds the context and runs a job in it. `access`: whether the job writes; a job that only
    /// reads opens the store read-only and never creates, migrates or changes it (SPEC §6).
    func run(_ access: StoreAccess, anyVersion: Bool = false, _ job: (Context) throws -> Void) throws {
        let env = ProcessInfo.processInfo.environment
        let paths = Paths(environment: env)
        let logger = makeLogger()
        let instant = try nowInstant(env)
        let config = try ConfigLoader.load(path: config ?? paths.defaultConfig, explicit: config != nil)
        let location = try storePath(store ?? paths.defaultStore)
        logger.debug("opening store", metadata: ["path": "\(location)", "access": "\(access)"])
        // A writer waiting for another process's lock gives up within seconds of a SIGTERM.
        let opened = try SQLiteStore(
            path: location, access: access, anyVersion: anyVersion, stopping: { StopSignals.requested })
        try job(
            Context(
                store: opened, config: config, now: instant, zones: ZoneBook(logger: logger, around: instant),
                printer: .standard(format: output), logger: logger))
    }

    /// Runs a job that needs no store (`config check`): none is opened, so none is created.
    func runWithoutStore(_ job: (Context) throws -> Void) throws {
        let env = ProcessInfo.processInfo.environment
        let paths = Paths(environment: env)
        let logger = makeLogger()
        let instant = try nowInstant(env)
        let config = try ConfigLoader.load(path: config ?? paths.defaultConfig, explicit: config != nil)
        try job(
            Context(
                store: NoStore(), config: config, now: instant, zones: ZoneBook(logger: logger, around: instant),
                printer: .standard(format: output), logger: logger))
    }

    func makeLogger() -> Logger {
        var logger = Logger(label: "streakd") { StreamLogHandler.standardError(label: $0) }
        logger.logLevel = verbose ? .debug : .warning
        return logger
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
        if value.isEmpty || value == "sqlite://" {
            throw StreakdError.usage(
                "--store: the path is empty; name a SQLite file, such as ~/.local/state/streakd/streakd.sqlite")
        }
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
