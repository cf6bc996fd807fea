import ArgumentParser
import Foundation
import Logging
import StreakJobs
import StreakStore

struct Log: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "log",
        abstract: "Show the notification log, read from the journal.",
        discussion: """
            Notifications, and deliveries a sink gave up on, oldest first. Each is one line: \
            LOGGED KIND USER/STREAK DATE: MESSAGE, or LOGGED DEAD SINK KIND USER/STREAK DATE after N attempts: ERROR \
            (LOGGED is when the journal received it, in UTC; with -o json, the keys of preview -o json plus \
            message, key and logged, and delivery, sink, attempts and error for a dead one). \
            Times for --since and --until: an RFC 3339 instant, a date YYYY-MM-DD (midnight UTC), now, today, \
            yesterday, tomorrow (midnights UTC), or relative to now: -90m, 2h ago, +1d (units m, h, d, w). Both \
            bounds are inclusive, to the second. log reads neither the store nor the configuration.
            """)
    @OptionGroup var global: GlobalOptions
    @Flag(name: .shortAndLong, help: "Print new entries as they arrive, until interrupted.") var follow = false
    @Option(
        name: [.customShort("n"), .customLong("lines")],
        parsing: .unconditional,
        help: ArgumentHelp("Show the last N entries, or all (default: all; 10 with -f).", valueName: "n|all"))
    var lines: String?
    @Option(parsing: .unconditional, help: ArgumentHelp("Entries logged at or after this time.", valueName: "time"))
    var since: String?
    @Option(parsing: .unconditional, help: ArgumentHelp("Entries logged at or before this time.", valueName: "time"))
    var until: String?
    @Option(help: ArgumentHelp("One user's entries.", valueName: "id")) var user: String?
    @Option(
        help: ArgumentHelp("One kind: at_risk, freeze_used, streak_broken or freeze_refilled.", valueName: "kind"))
    var kind: String?

    func run() throws {
        let context = try journalContext()
        try context.log(follow: follow, lines: lines, since: since, until: until, user: user, kind: kind)
    }

    /// A context without a store or configuration: `log` reads only the journal, so whoever may
    /// read the journal may run it (the store and its folder may belong to the service's user).
    func journalContext() throws -> Context {
        var logger = Logger(label: "streakd") { StreamLogHandler.standardError(label: $0) }
        logger.logLevel = global.verbose ? .debug : .warning
        return Context(
            store: NoStore(), config: Config(), now: try global.nowInstant(ProcessInfo.processInfo.environment),
            zones: ZoneBook(), printer: .standard(format: global.output), logger: logger)
    }
}

/// The store of a job that needs none (`log`, `config check`): any use is a mistake.
struct NoStore: Store {
    func read<T>(_ body: (any StoreReader) throws -> T) throws -> T {
        throw StoreError(.unavailable, "this command opens no store")
    }
    func write<T>(_ mode: WriteMode, _ body: (any StoreWriter) throws -> T) throws -> T {
        throw StoreError(.unavailable, "this command opens no store")
    }
    func check() throws -> StoreCheck { throw StoreError(.unavailable, "this command opens no store") }
    func backup(to path: String) throws { throw StoreError(.unavailable, "this command opens no store") }
}
