import ArgumentParser
import Foundation
import Logging
import StreakCore
import StreakJobs
import StreakPostgres
import StreakSQLite
import StreakStore

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
        case .denied: .noPermission
        }
    }
}

/// What `-o` takes: each command's own values, which its help lists.
protocol OutputFormats: RawRepresentable<String>, CaseIterable, ExpressibleByArgument, Sendable {
    static var short: Self { get }
    static var help: String { get }
}

/// `-o` of every command that prints records but `log`.
enum RecordFormat: String, OutputFormats {
    case short, json
    static var help: String { "Output format: short, or json (one JSON object per line)." }
}

/// `log -o`: journalctl's names.
enum LogFormat: String, OutputFormats {
    case short, json
    case jsonPretty = "json-pretty"
    case cat, verbose
    static var help: String {
        "Output format: short, json (one JSON object per line), json-pretty, cat (the message alone) or verbose "
            + "(every field)."
    }
}

/// The options of every command but `log`.
typealias GlobalOptions = CommonOptions<RecordFormat>

/// The options every command takes; `-o` with the command's own values.
struct CommonOptions<Format: OutputFormats>: ParsableArguments {
    @Option(
        name: .long,
        help: ArgumentHelp(
            "The store: a SQLite file path or a postgres:// URL (or STREAKD_STORE; default in the state directory).",
            valueName: "path|url"),
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
        help: ArgumentHelp(Format.help, valueName: Format.allCases.map(\.rawValue).joined(separator: "|")))
    var output: Format = .short

    @Flag(name: .shortAndLong, help: "Log what streakd does to standard error.")
    var verbose = false

    /// The store as named: `--store`, else `STREAKD_STORE`, else the default path.
    func namedStore(_ env: [String: String]) -> String {
        if let store { return store }
        if let named = env["STREAKD_STORE"], !named.isEmpty { return named }
        return Paths(environment: env).defaultStore
    }

    /// The printer for `-o` (`log`'s other formats are `log`'s to write).
    func printer() throws -> Printer { .standard(format: output.rawValue == "json" ? .json : .short) }

    /// The log on standard error: with `-v` everything, else warnings and errors. `requests`:
    /// serve's, whose requests are logged at debug priority whenever standard error is the
    /// journal (SPEC §11), where `journalctl -p` chooses what to see.
    func logger(requests: Bool = false) -> Logger {
        let journal = JournalStreamLogHandler.standardErrorIsTheJournal(ProcessInfo.processInfo.environment)
        var logger = Logger(label: "streakd") { label -> any LogHandler in
            journal ? JournalStreamLogHandler() : StreamLogHandler.standardError(label: label)
        }
        logger.logLevel = verbose || (requests && journal) ? .debug : .warning
        return logger
    }

    /// Builds the context and runs a job in it. `access`: whether the job writes; a job that only
    /// reads opens the store read-only and never creates, migrates or changes it (SPEC §6). The
    /// context carries the process's stop token (`StopSignals`).
    /// `existing`: a job that changes what a store holds (a user, a delivery) and would make
    /// nothing of a new one: a SQLite file that is not there is 66, as for a read, and none is
    /// made at a mistyped path.
    func run(_ access: StoreAccess, existing: Bool = false, anyVersion: Bool = false, _ job: (Context) throws -> Void)
        throws
    {
        let env = ProcessInfo.processInfo.environment
        let paths = Paths(environment: env)
        let logger = logger()
        let printer = try printer()
        let pinned = try pinnedNow(env)
        let config = try loadConfig(paths)
        if existing, case .sqlite(let path) = try storeLocation(namedStore(env)),
            !FileManager.default.fileExists(atPath: path)
        {
            _ = try openStore(namedStore(env), .read, logger: logger)  // throws the missing store's error
        }
        let opened = try openStore(namedStore(env), access, anyVersion: anyVersion, logger: logger)
        let instant = try pinned ?? storeNow(opened)
        do {
            try job(
                Context(
                    store: opened, config: config, now: instant,
                    zones: ZoneBook(logger: logger, around: instant, store: opened.location),
                    printer: printer, logger: logger, stop: StopSignals.token))
        } catch {
            // SQLite's own error, let out unwrapped somewhere: still the store's kind (damage is 74).
            if let sqlite = opened as? SQLiteStore,
                let mapped = SQLiteStore.storeError(escaped: error, path: sqlite.path)
            {
                throw mapped
            }
            throw error
        }
    }

    /// The store named, opened for `access`.
    /// `durable`: each commit waits until it is on the disk (SQLite's synchronous=FULL; PostgreSQL's
    /// commits always do), for `serve`, whose 2xx promises it. `readers`: SQLite's reads take
    /// turns on that many connections of their own, side by side (serve's requests). `serving`:
    /// PostgreSQL's shorter deadlines for a process that answers requests (`PGSettings.serving`).
    func openStore(
        _ name: String, _ access: StoreAccess, anyVersion: Bool = false, durable: Bool = false, readers: Int = 0,
        serving: Bool = false, logger: Logger
    )
        throws -> any Store
    {
        let location = try storeLocation(name)
        logger.debug("opening store", metadata: ["store": "\(location)", "access": "\(access)"])
        do {
            switch location {
            case .sqlite(let path):
                // A writer waiting for another process's lock gives up within seconds of a SIGTERM.
                return try SQLiteStore(
                    path: path, access: access, anyVersion: anyVersion, durable: durable, readers: readers,
                    stopping: { StopSignals.token.requested })
            case .postgres(let url):
                return try PostgresStore(
                    url: url, access: access, anyVersion: anyVersion, settings: serving ? .serving : PGSettings())
            }
        } catch let error as StoreError
            where error.kind == .missing && store == nil
            && ProcessInfo.processInfo.environment["STREAKD_STORE"].map({ !$0.isEmpty }) == true
        {
            // The message's "check --store": the store was named by the environment instead.
            throw StoreError(
                .missing, error.description.replacingOccurrences(of: "check --store", with: "check STREAKD_STORE"))
        }
    }

    /// Runs a job that needs no store (`config check`): none is opened, so none is created.
    func runWithoutStore(_ job: (Context) throws -> Void) throws {
        let env = ProcessInfo.processInfo.environment
        let paths = Paths(environment: env)
        let logger = logger()
        let instant = try nowInstant(env)
        let config = try loadConfig(paths)
        try job(
            Context(
                store: NoStore(), config: config, now: instant, zones: ZoneBook(logger: logger, around: instant),
                printer: try printer(), logger: logger, stop: StopSignals.token))
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
            Printer.standard(format: .short).warn(
                "this host's clock is \(abs(off)) s \(off > 0 ? "ahead of" : "behind") the store's; "
                    + "streakd goes by the store's (\(shared)): set this host's time right (timedatectl, NTP)")
        }
        return shared
    }

    /// The configuration `--config` names, else the default one (missing there: the defaults). An
    /// empty `--config` is a usage error (64), as an empty `--store` is.
    func loadConfig(_ paths: Paths) throws -> Config {
        if config == "" {
            throw StreakdError.usage(
                "--config: the path is empty; name a configuration file, such as /etc/streakd/streakd.toml, or "
                    + "leave --config out for the default")
        }
        return try ConfigLoader.load(path: config ?? paths.defaultConfig, explicit: config != nil)
    }

    /// `--now` or `STREAKD_NOW`, if given. An empty `--now` is a usage error (64); an empty
    /// STREAKD_NOW counts as unset, as an empty STREAKD_STORE does.
    func pinnedNow(_ env: [String: String]) throws -> Instant? {
        if now == "" {
            throw StreakdError.usage(
                "--now: the value is empty; give an RFC 3339 instant such as 2026-11-21T19:00:00Z, or leave --now out "
                    + "to run at the current time")
        }
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

    /// libpq's keyword/value form (`host=/run/postgresql dbname=streakd password=...`): its first
    /// word is a libpq keyword and an `=`, which no store file's path starts with in practice.
    static func isKeywordConninfo(_ value: String) -> Bool {
        let first = value.drop { $0 == " " || $0 == "\t" }.prefix { $0 != " " && $0 != "\t" }
        guard let equals = first.firstIndex(of: "=") else { return false }
        let keyword = first[..<equals].trimmingCharacters(in: .whitespaces)
        return [
            "host", "hostaddr", "port", "dbname", "user", "password", "passfile", "options", "sslmode", "service",
            "application_name", "connect_timeout", "sslrootcert", "sslcert", "sslkey", "target_session_attrs",
            "channel_binding", "gssencmode", "requiressl", "krbsrvname", "keepalives", "fallback_application_name",
        ].contains(keyword)
    }

    func storeLocation(_ value: String) throws -> StoreLocation {
        if value.isEmpty || value == "sqlite://" {
            throw StreakdError.usage(
                "--store: the path is empty; name a SQLite file, such as ~/.local/state/streakd/streakd.sqlite")
        }
        if value.hasPrefix("postgres://") || value.hasPrefix("postgresql://") {
            if case .failure(let e) = Result(catching: { try PGURL(value) }) {
                // No libpq to read it with is the machine's lack (69), not a bad argument.
                throw StreakdError((e as? PGError)?.kind == .unreachable ? .unavailable : .usage, "--store: \(e)")
            }
            return .postgres(value)
        }
        if Self.isKeywordConninfo(value) {
            // Never echoed: it may hold a password.
            throw StreakdError.usage(
                "--store: a PostgreSQL keyword/value connection string (host=... dbname=...) is not taken; write it as "
                    + "a URL, libpq's parameters in its query: postgresql:///DBNAME?host=HOST&user=USER (a password "
                    + "belongs in ~/.pgpass or PGPASSFILE rather than on a command line)")
        }
        if value.hasPrefix("sqlite://") { return .sqlite(String(value.dropFirst("sqlite://".count))) }
        if value.contains("://") {
            throw StreakdError.usage(
                "--store: \"\(value)\" is not a store; use a SQLite file path or a postgres:// or postgresql:// URL")
        }
        return .sqlite(value)
    }
}

extension CommonOptions {
    /// `config check`: the users of the store, when the configuration names desktop users (which
    /// must be among them), or when it is nil (a file that did not load); nil, with a warning
    /// (for a configuration that loaded), when the store does not exist yet. Opened to read only:
    /// nothing is created.
    func storeUsers(for config: Config?) throws -> Set<String>? {
        if let config, config.desktopUsers.isEmpty { return nil }
        let name = namedStore(ProcessInfo.processInfo.environment)
        do {
            let store = try openStore(name, .read, anyVersion: true, logger: logger())
            return Set(try store.read { try $0.users().map(\.id) })
        } catch let error as StoreError where error.kind == .missing {
            if config != nil {
                Printer.standard(format: .short).warn(
                    "[desktop] users are not checked against a store: \(error.description)")
            }
            return nil
        }
    }
}
