import ArgumentParser
import Foundation
import Logging
import StreakCore
import StreakDelivery
import StreakJobs
import StreakSQLite
import StreakStore

struct Log: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "log",
        abstract: "Show the notification log, read from the journal.",
        discussion: """
            Notifications, and deliveries that failed or were given up, oldest first, of one store: the one \
            --store (or STREAKD_STORE, or the default) names, whose identity every entry carries as STREAKD_STORE. \
            On a terminal the output goes through a pager ($SYSTEMD_PAGER, $PAGER or less), failed deliveries \
            yellow and dead ones red (NO_COLOR, SYSTEMD_COLORS=0: none). Times are local \
            (--utc: UTC), shown and read as journalctl does: "2026-11-23 20:00", "21:00", today, yesterday, \
            "2 hours ago", -2h. See streakd(1) for the line formats.
            """)
    @OptionGroup var global: CommonOptions<LogFormat>
    @Flag(name: .shortAndLong, help: "Print new entries as they arrive, until interrupted.") var follow = false
    @Option(
        name: [.customShort("n", allowingJoined: true), .customLong("lines")],
        parsing: .unconditional,
        help: ArgumentHelp(
            "The last N entries, +N the first N, or all (default: all; 10 with -f; -n alone: 10).",
            valueName: "n|+n|all"))
    var lines: String?
    @Flag(name: .shortAndLong, help: "Newest first.") var reverse = false
    @Option(
        name: [.customShort("S"), .long], parsing: .unconditional,
        help: ArgumentHelp("Entries logged at or after this time.", valueName: "time"))
    var since: String?
    @Option(
        name: [.customShort("U"), .long], parsing: .unconditional,
        help: ArgumentHelp("Entries logged at or before this time.", valueName: "time"))
    var until: String?
    @Flag(help: "Show and read times in UTC rather than the local zone.") var utc = false
    @Option(help: ArgumentHelp("One user's entries.", valueName: "id"), completion: Completions.users)
    var user: String?
    @Option(
        help: ArgumentHelp("One kind: \(NotificationKind.names).", valueName: "kind"),
        completion: .list(NotificationKind.allCases.map(\.rawValue)))
    var kind: String?
    @Option(
        name: [.customShort("p"), .long],
        help: ArgumentHelp(
            "Entries of this priority or a more urgent one (emerg 0 to debug 7: a dead delivery is err, a failed "
                + "one warning), or of a range FROM..TO.", valueName: "level|from..to"),
        completion: .list(["emerg", "alert", "crit", "err", "warning", "notice", "info", "debug"]))
    var priority: String?
    @Option(
        name: [.customShort("g"), .long],
        help: ArgumentHelp(
            "Entries whose message matches this regular expression (case-insensitive unless it has a capital).",
            valueName: "pattern"))
    var grep: String?
    @Option(
        help: ArgumentHelp(
            "Entries the machine of this name logged (_HOSTNAME), as in a fleet's journal (-D).", valueName: "name"))
    var host: String?
    @Flag(help: "Only deliveries that failed (and are tried again) or were given up.") var failed = false
    @Flag(help: "Only deliveries that were given up.") var dead = false
    @Option(
        name: [.customShort("D"), .customLong("directory")],
        help: ArgumentHelp("Read the journal files in this folder (as journalctl -D).", valueName: "dir"),
        completion: .directory)
    var directory: String?
    @Option(
        name: .customLong("file"),
        help: ArgumentHelp("Read this journal file (repeatable; as journalctl --file).", valueName: "path"),
        completion: .file(extensions: ["journal", "journal~"]))
    var files: [String] = []
    @Flag(name: [.customShort("m"), .customLong("merge")], help: "Read other machines' journals kept here too.")
    var merge = false
    @Option(
        name: .customLong("store-id"),
        help: ArgumentHelp(
            "The store's identity (32 hex digits, as in STREAKD_STORE), instead of opening the store.",
            valueName: "id"))
    var storeID: String?
    @Flag(help: "Every store's entries.") var allStores = false
    @Flag(
        help: ArgumentHelp(
            "Also show entries that streakd did not write (another user's or program's, under its name), marked UNTRUSTED."
        ))
    var untrusted = false
    @Flag(help: "Do not pipe the output into a pager.") var noPager = false
    @Flag(name: .shortAndLong, help: "No \"-- No entries --\" when nothing matched.") var quiet = false

    func run() throws {
        let env = ProcessInfo.processInfo.environment
        var request = LogRequest()
        request.follow = follow
        request.lines = lines
        request.since = since
        request.until = until
        request.user = user
        request.kind = kind
        request.reverse = reverse
        request.utc = utc
        request.quiet = quiet
        request.format = LogRequest.Format(rawValue: global.output.rawValue) ?? .short
        request.priority = priority
        request.grep = grep
        request.host = host
        // As journalctl: colour on a terminal (a pager's included), unless NO_COLOR or SYSTEMD_COLORS say no.
        request.color = LogColor.enabled(environment: env, isTerminal: isatty(STDOUT_FILENO) == 1)
        request.deliveries = dead ? .dead : failed ? .failedOrDead : .all
        request.source = try source()
        request.stores = try stores(env)
        request.untrusted = untrusted
        // streakd's own entries: root's, this user's, and the store file's owner's (the user the
        // units or a desktop run it as); and those of its system units (JournalTrust).
        request.trust = JournalTrust(uids: Set([0, getuid()] + (storeOwner(env).map { [$0] } ?? [])))
        let context = try journalContext(env)
        // journalctl pages on a terminal, never when following.
        let pager = follow || noPager ? nil : Pager.start(environment: env)
        defer { pager?.finish() }
        // Followed until SIGINT or SIGTERM, which then end it quietly (exit 0).
        if follow { StopSignals.install() }
        try context.log(
            request, localZone: LocalZone.current(environment: env, zones: context.zones),
            stopped: { Pager.broken })
    }

    func source() throws -> JournalReader.Source {
        let chosen = [directory != nil, !files.isEmpty, merge].filter { $0 }.count
        if chosen > 1 {
            throw StreakdError.usage("-D, --file and -m each choose the journals to read; give one of them")
        }
        // What is not there is 66 (SPEC §6: an input file missing), as journalctl's own -D; what
        // is there but cannot be read stays 69 (JournalReader).
        for (path, folder) in (directory.map { [($0, true)] } ?? []) + files.map({ ($0, false) }) {
            var info = stat()
            if stat(path, &info) != 0 {
                guard errno == ENOENT || errno == ENOTDIR else { continue }
                throw StreakdError(
                    .noInput, "\(folder ? "-D" : "--file"): no \(folder ? "folder" : "journal file") \(path)")
            }
            if folder && info.st_mode & S_IFMT != S_IFDIR {
                throw StreakdError(
                    .usage, "-D: \(path) is not a folder; name the folder that holds the *.journal files")
            }
        }
        if let directory { return .directory(directory) }
        if !files.isEmpty { return .files(files) }
        return merge ? .merged : .local
    }

    /// Whose entries: `--all-stores`, `--store-id`, or the store's own identity, read from it
    /// without creating, migrating or writing it. A missing store is exit 66 (SPEC §6).
    func stores(_ env: [String: String]) throws -> LogRequest.Stores {
        if allStores && storeID != nil {
            throw StreakdError.usage("--all-stores and --store-id cannot be combined; give one of them")
        }
        if allStores { return .all }
        if let storeID {
            let id = storeID.lowercased()
            guard id.count == 32, id.allSatisfy({ $0.isHexDigit }) else {
                throw StreakdError.usage(
                    "--store-id: \"\(storeID)\" is not a store's identity; use its 32 hex digits, as journal entries "
                        + "carry it in STREAKD_STORE (journalctl -F STREAKD_STORE lists them)")
            }
            return .one(id)
        }
        let named = global.namedStore(env)
        let hint =
            "log shows one store's entries: name the store with --store, give its identity with --store-id "
            + "(journalctl -F STREAKD_STORE lists those in the journal), or read every store's with --all-stores"
        // Missing is 66 (SPEC §6); out of reach (a folder of the service's user) is 69, not "missing".
        if case .sqlite(let location) = try global.storeLocation(named) {
            var info = stat()
            if stat(location, &info) != 0 {
                if errno == ENOENT || errno == ENOTDIR {
                    throw StreakdError(.noInput, "no store at \(location); \(hint)")
                }
                throw StreakdError(
                    .unavailable, "cannot read the store \(location): \(String(cString: strerror(errno))); \(hint)")
            }
        }
        do {
            let store = try global.openStore(named, .read, anyVersion: true, logger: global.logger())
            guard let id = try store.read({ try $0.storeID() }) else {
                // A store no streakd with identities has opened yet: its entries carry none either.
                return .withoutIdentity
            }
            return .one(id)
        } catch let error as StoreError where error.kind == .missing {
            throw StreakdError(.noInput, "\(error.description); \(hint)")
        } catch let error as StoreError {
            throw StreakdError(.unavailable, "\(error.description); \(hint)")
        }
    }

    /// The owner of the SQLite file the store names (nil for `--store-id`, `--all-stores` and a
    /// database server's store).
    func storeOwner(_ env: [String: String]) -> uid_t? {
        guard !allStores, storeID == nil, case .sqlite(let path)? = try? global.storeLocation(global.namedStore(env))
        else { return nil }
        var info = stat()
        return stat(path, &info) == 0 ? info.st_uid : nil
    }

    /// A context without a store or configuration: `log` reads only the journal (and the store's
    /// identity, above), so whoever may read the journal may run it. Output goes line by line
    /// through `Pager.write`, which stops quietly when a pager has quit.
    func journalContext(_ env: [String: String]) throws -> Context {
        let printer = Printer(
            format: global.output == .json || global.output == .jsonPretty ? .json : .short, out: { Pager.write($0) },
            err: { FileHandle.standardError.write(Data(($0 + "\n").utf8)) })
        return Context(
            store: NoStore(), config: Config(), now: try global.nowInstant(env), zones: ZoneBook(), printer: printer,
            logger: global.logger(), stop: StopSignals.token)
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
    func readBeside<T>(_ body: (any StoreReader) throws -> T) throws -> T { try read(body) }
    func check() throws -> StoreCheck { throw StoreError(.unavailable, "this command opens no store") }
    func backup(to path: String) throws { throw StoreError(.unavailable, "this command opens no store") }
    func clock() throws -> Instant? { nil }
    func openConnections(_ count: Int) -> (open: Int, short: String?)? { nil }
    func holdUpkeep(_ hold: Bool) throws {}
    func upkeep() throws {}
    var concurrentClaims: Bool { false }
    var location: String { "no store" }
}
