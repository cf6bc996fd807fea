import ArgumentParser
import Foundation
import StreakCore
import StreakJobs
import StreakServer
import StreakStore
import Synchronization

struct Serve: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve", abstract: "Serve the HTTP API that apps push check-ins to.",
        discussion: """
            Listens on Unix sockets and TCP addresses (--listen; default $RUNTIME_DIRECTORY/streakd.sock, else \
            $XDG_RUNTIME_DIR/streakd.sock), or on the sockets systemd passes (socket activation), until SIGTERM \
            or SIGINT: then it answers the requests already received (at most 10 s) and exits 0. Every request \
            but GET /v1/health carries Authorization: Bearer TOKEN (streakd token add).
            """)
    @OptionGroup var global: GlobalOptions
    @Option(
        help: ArgumentHelp(
            "Where to listen: unix:PATH, HOST:PORT or [V6]:PORT; repeat it for several.", valueName: "address"))
    var listen: [String] = []

    func run() throws {
        let env = ProcessInfo.processInfo.environment
        var sockets = try listen.map { ListenSocket.address(try ListenAddress.parse($0)) }
        // Socket activation: the sockets systemd bound, and those --listen names besides.
        sockets = Systemd.inheritedSockets().map(ListenSocket.inherited) + sockets
        if sockets.isEmpty { sockets = [.address(try ListenAddress.standard(env))] }
        let (store, contexts, config) = try global.requestContexts()
        let server = APIServer(
            sockets: sockets, settings: config.api, logger: global.logger(requests: true),
            writes: WriteGroups(store: store),
            context: contexts)
        // A connection for each request thread, opened before serve listens (and tells systemd it
        // is ready): the first requests find them rather than all opening theirs at once.
        if let opened = store.openConnections(server.threads) {
            let short = opened.short.map { " (\($0))" } ?? ""
            FileHandle.standardError.write(
                Data("streakd: \(opened.open) of \(server.threads) connections to the store open\(short)\n".utf8))
        }
        let outcome = Mutex<Result<Void, any Error>?>(nil)
        let done = DispatchSemaphore(value: 0)
        Task {
            let result = await Result {
                try await server.run { FileHandle.standardError.write(Data("streakd: listening on \($0)\n".utf8)) }
            }
            outcome.withLock { $0 = result }
            done.signal()
        }
        done.wait()
        if case .failure(let error) = outcome.withLock({ $0 }) {
            throw StreakdError(
                .unavailable, "serve: cannot listen on \(sockets.map(\.description).joined(separator: ", ")): \(error)")
        }
    }
}

extension Result where Failure == any Error {
    init(catching body: () async throws -> Success) async {
        do {
            self = .success(try await body())
        } catch {
            self = .failure(error)
        }
    }
}

extension GlobalOptions {
    /// What `serve` answers with: the store opened once (for writing: check-ins and tokens'
    /// last use; durable: a commit waits for the disk, SPEC §11), the configuration read once, and
    /// a context per request whose "now" is the
    /// request's (`--now` or `STREAKD_NOW` pins it, as for every command).
    func requestContexts() throws -> (any Store, @Sendable () throws -> Context, Config) {
        let env = ProcessInfo.processInfo.environment
        let logger = logger()
        let printer = try printer()
        let pinned = try pinnedNow(env)
        let config = try loadConfig(Paths(environment: env))
        // Requests read side by side on a few connections (SQLite; PostgreSQL pools its own).
        let store = try openStore(
            namedStore(env), .write, durable: true, readers: APIServer.sqliteReaders, serving: true, logger: logger)
        let zones = ZoneBook(logger: logger)
        let clock = ServeClock(options: self, store: store)
        let contexts: @Sendable () throws -> Context = {
            Context(
                store: store, config: config, now: try pinned ?? clock.now(), zones: zones, printer: printer,
                logger: logger)
        }
        return (store, contexts, config)
    }
}

/// "Now" for serve's requests: the store's clock (`storeNow`, SPEC §7), asked once every
/// `remeasure` and otherwise this host's clock plus the offset found then, so a request makes no
/// round trip for it (it was one per request on PostgreSQL). An offset of a second or less is a
/// host in step with the store (both clocks count whole seconds): its own clock is used.
final class ServeClock: Sendable {
    static let remeasure = Duration.seconds(10)
    let options: GlobalOptions
    let store: any Store
    private let offset = Mutex<(seconds: Int64, at: ContinuousClock.Instant)?>(nil)

    init(options: GlobalOptions, store: any Store) {
        self.options = options
        self.store = store
    }

    func now() throws -> Instant {
        let host = options.hostNow()
        if let known = offset.withLock({ $0 }), ContinuousClock.now - known.at < Self.remeasure {
            return Instant(seconds: host.seconds + known.seconds)
        }
        let shared = try options.storeNow(store)
        let off = shared.seconds - host.seconds
        offset.withLock { $0 = (abs(off) <= 1 ? 0 : off, ContinuousClock.now) }
        return shared
    }
}
