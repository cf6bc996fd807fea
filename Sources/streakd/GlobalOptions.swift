import ArgumentParser
import Foundation
import Logging
import StreakCore
import StreakJobs
import StreakPostgres
import StreakSQLite
import StreakStore

extension OutputFormat: ExpressibleByArgument {}
extension Context.ImportFormat: ExpressibleByArgument {}

/// A store error on its way to the user.
struct StoreFailure: Error {
    var message: String
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

    /// Builds the context and runs a job in it.
    func run(_ job: (Context) throws -> Void) throws {
        let env = ProcessInfo.processInfo.environment
        let paths = Paths(environment: env)
        var logger = Logger(label: "streakd") { StreamLogHandler.standardError(label: $0) }
        logger.logLevel = verbose ? .debug : .warning
        let pinned = try pinnedNow(env)
        let config = try ConfigLoader.load(path: config ?? paths.defaultConfig, explicit: config != nil)
        let location = try storeLocation(store ?? paths.defaultStore)
        logger.debug("opening store", metadata: ["store": "\(location)"])
        let opened: any Store
        let instant: Instant
        do {
            switch location {
            case .sqlite(let path): opened = try SQLiteStore(path: path)
            case .postgres(let url): opened = try PostgresStore(url: url)
            }
            instant = try pinned ?? storeNow(opened)
        } catch let e as StoreError {
            throw StoreFailure(message: e.description)
        }
        let context = Context(
            store: opened, config: config, now: instant, zones: ZoneBook(logger: logger, around: instant),
            printer: .standard(format: output),
            logger: logger)
        do {
            try job(context)
        } catch let e as StoreError {
            throw StreakdError(.tempFail, e.description)
        }
    }

    func nowInstant(_ env: [String: String]) throws -> Instant { try pinnedNow(env) ?? hostNow() }

    /// This host's clock, to the second.
    func hostNow() -> Instant { Instant(seconds: Int64(Date().timeIntervalSince1970.rounded(.down))) }

    /// "Now" by the store's clock when it has one (a database server's: several hosts then decide
    /// alike, SPEC §7), else this host's. A host more than a minute off the store's is warned about.
    func storeNow(_ store: any Store) throws -> Instant {
        let host = hostNow()
        guard let shared = try store.clock() else { return host }
        let off = host.seconds - shared.seconds
        if abs(off) > 60 {
            Printer.standard(format: output).warn(
                "this host's clock is \(abs(off)) s \(off > 0 ? "ahead of" : "behind") the store's; "
                    + "streakd goes by the store's (\(shared)): set this host's time right (timedatectl, NTP)")
        }
        return shared
    }

    /// `--now` or `STREAKD_NOW`, if given.
    func pinnedNow(_ env: [String: String]) throws -> Instant? {
        let (text, name) = now.map { ($0, "--now") } ?? (env["STREAKD_NOW"].map { ($0, "STREAKD_NOW") } ?? (nil, ""))
        guard let text, !text.isEmpty else { return nil }
        guard let instant = RFC3339.parse(text) else {
            throw StreakdError.usage(
                "\(name): \"\(text)\" is not an RFC 3339 instant with an offset; use e.g. 2026-11-21T19:00:00Z")
        }
        guard instant.seconds >= 0, instant.seconds < 7_258_118_400 else {
            throw StreakdError.usage("\(name): \(instant) is out of range; use an instant from 1970 to 2199")
        }
        return instant
    }

    /// Where the store is: a SQLite file, or a PostgreSQL database by URL (libpq's rules).
    enum StoreLocation: CustomStringConvertible {
        case sqlite(String)
        case postgres(String)

        var description: String {
            switch self {
            case .sqlite(let path): path
            case .postgres(let url): (try? PGURL(url).description) ?? "a PostgreSQL URL"
            }
        }
    }

    func storeLocation(_ value: String) throws -> StoreLocation {
        if value.hasPrefix("postgres://") || value.hasPrefix("postgresql://") {
            if case .failure(let e) = Result(catching: { try PGURL(value) }) {
                throw StreakdError.usage("--store: \(e)")
            }
            return .postgres(value)
        }
        if value.hasPrefix("sqlite://") { return .sqlite(String(value.dropFirst("sqlite://".count))) }
        if value.contains("://") {
            throw StreakdError.usage(
                "--store: \"\(value)\" is not a store; use a SQLite file path or a postgres:// or postgresql:// URL")
        }
        return .sqlite(value)
    }
}
