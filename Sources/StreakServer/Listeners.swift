import Hummingbird
import HummingbirdCore
import Logging
import NIOCore
import NIOExtras
import NIOHTTPTypes
import NIOPosix
import ServiceLifecycle
import StreakJobs

#if canImport(Glibc)
    import Glibc
#endif

/// A socket `streakd serve` listens on: an address it binds (`--listen`), or one the service
/// manager bound for it (socket activation).
public enum ListenSocket: Sendable, CustomStringConvertible {
    case address(ListenAddress)
    case inherited(Systemd.Socket)

    public var description: String {
        switch self {
        case .address(let address): address.description
        case .inherited(let socket): "the socket \(socket.name) (descriptor \(socket.descriptor))"
        }
    }
}

/// Hummingbird's HTTP/1.1 child channel on several listening sockets at once, some of them
/// inherited: Hummingbird's `Application` binds one address and cannot take a socket it did not
/// bind, so this is its server loop (NIO's `ServerBootstrap`, NIOExtras' quiescing) over each
/// socket, with the limits of `[api]` (docs/ARCHITECTURE.md, "The HTTP server").
struct Listeners<Responder: HTTPResponder>: Service where Responder.Context == BasicRequestContext {
    let sockets: [ListenSocket]
    let responder: Responder
    let settings: APISettings
    let logger: Logger
    /// Told each socket's address once every socket listens (the port the system chose for port 0).
    let listening: @Sendable (String) -> Void

    /// Headers: at most 100 fields, 8 KiB each (the request line too), 16 KiB in all; past
    /// them the request is answered 400 and the connection closed.
    static var decoder: HTTP1Channel.Configuration.DecoderConfiguration {
        .init(maxHeaderFieldSize: 8 * 1024, maxHeaderListSize: 16 * 1024, maxHeaderFieldCount: 100)
    }

    struct Bound {
        let channel: NIOAsyncChannel<HTTP1Channel.Value, Never>
        let http: HTTP1Channel
        let quiescing: ServerQuiescingHelper
    }

    func run() async throws {
        let limit = Self.connectionLimit(settings.maxConnections, sockets: sockets.count)
        var binding: [Bound] = []
        do {
            for socket in sockets { binding.append(try await bind(socket, limit: limit)) }
        } catch {
            for b in binding { try? await b.channel.channel.close() }
            throw error
        }
        let bound = binding
        for b in bound { listening(Self.describe(b.channel.channel)) }
        Systemd.notify(
            "READY=1\nSTATUS=serving on " + bound.map { Self.describe($0.channel.channel) }.joined(separator: ", "))
        let logger = self.logger
        await withGracefulShutdownHandler {
            await withDiscardingTaskGroup { group in
                if let interval = Systemd.watchdogInterval() {
                    group.addTask { await Self.watchdog(every: interval) }
                }
                await withDiscardingTaskGroup { servers in
                    for b in bound {
                        servers.addTask {
                            do {
                                try await b.channel.executeThenClose { inbound in
                                    await withDiscardingTaskGroup { connections in
                                        do {
                                            for try await connection in inbound {
                                                connections.addTask {
                                                    await b.http.handle(value: connection, logger: logger)
                                                }
                                            }
                                        } catch {
                                            logger.error(
                                                "accepting connections failed", metadata: ["error": "\(error)"])
                                        }
                                    }
                                }
                            } catch {
                                logger.error("a listening socket failed", metadata: ["error": "\(error)"])
                            }
                        }
                    }
                }
                group.cancelAll()
            }
        } onGracefulShutdown: {
            // Stop accepting; each connection closes once its requests are answered.
            Systemd.notify("STOPPING=1")
            for b in bound { b.quiescing.initiateShutdown(promise: nil) }
        }
        for case .address(.unix(let path)) in sockets { APIServer.removeStaleSocket(path) }
    }

    func bind(_ socket: ListenSocket, limit: Int) async throws -> Bound {
        let group = MultiThreadedEventLoopGroup.singleton
        let quiescing = ServerQuiescingHelper(group: group)
        let logger = self.logger
        let trusted = settings.trustSocket
        let responder = self.responder
        // A connection on a Unix socket acts as admin when `[api] trust_socket` says so.
        let http = HTTP1Channel(
            responder: { request, writer, channel in
                let context = BasicRequestContext(source: .init(channel: channel, logger: logger))
                let trust = trusted && channel.localAddress?.protocol == .unix
                let response = try await APIServer.$trustedConnection.withValue(trust) {
                    try await responder.respond(to: request, context: context)
                }
                try await writer.write(response: response.head, body: response.body)
            },
            configuration: .init(
                additionalChannelHandlers: [
                    RequestDeadlineHandler(timeout: .seconds(Int64(settings.requestTimeoutSeconds)))
                ],
                idleTimeout: .seconds(Int64(settings.idleTimeoutSeconds)), httpDecoderConfiguration: Self.decoder))
        let bootstrap = ServerBootstrap(group: group)
            .serverChannelOption(ChannelOptions.backlog, value: 256)
            .serverChannelOption(ChannelOptions.maxMessagesPerRead, value: 64)
            .serverChannelOption(ChannelOptions.socketOption(.so_reuseaddr), value: 1)
            .childChannelOption(ChannelOptions.allowRemoteHalfClosure, value: true)
            .serverChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    // Past the limit the socket is not read: new connections wait in its backlog.
                    try channel.pipeline.syncOperations.addHandler(
                        AvailableConnectionsChannelHandler(delegate: MaximumAvailableConnections(limit, logger: logger))
                    )
                    try channel.pipeline.syncOperations.addHandler(quiescing.makeServerChannelHandler(channel: channel))
                }
            }
        let setup: @Sendable (any Channel) -> EventLoopFuture<HTTP1Channel.Value> = {
            http.setup(channel: $0, logger: logger)
        }
        let channel: NIOAsyncChannel<HTTP1Channel.Value, Never>
        switch socket {
        case .address(.unix(let path)):
            APIServer.removeStaleSocket(path)
            channel = try await bootstrap.bind(unixDomainSocketPath: path, childChannelInitializer: setup)
            // Owner and group may connect (SPEC §11: the file's mode decides who does).
            chmod(path, 0o660)
        case .address(.tcp(let host, let port)):
            channel = try await bootstrap.bind(host: host, port: port, childChannelInitializer: setup)
        case .inherited(let inherited):
            channel = try await bootstrap.bind(inherited.descriptor, childChannelInitializer: setup)
        }
        return Bound(channel: channel, http: http, quiescing: quiescing)
    }

    /// The connections each socket takes: `[api] max_connections`, within what the process may
    /// open. Its limit of open files is raised to the most it may have first (systemd's default
    /// soft limit is 1024, its hard limit 524288).
    static func connectionLimit(_ configured: Int, sockets: Int) -> Int {
        var files = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &files) == 0 else { return configured }
        if files.rlim_cur < files.rlim_max {
            files.rlim_cur = files.rlim_max
            _ = setrlimit(Int32(RLIMIT_NOFILE.rawValue), &files)
            _ = getrlimit(Int32(RLIMIT_NOFILE.rawValue), &files)
        }
        // Descriptors for the store, the journal and the listening sockets themselves.
        let spare = Int(min(files.rlim_cur, 1 << 30)) - 128
        return max(1, min(configured, spare / max(1, sockets)))
    }

    static func describe(_ channel: any Channel) -> String {
        switch channel.localAddress {
        case .unixDomainSocket?: return "unix:" + (channel.localAddress?.pathname ?? "?")
        case let address?:
            return ListenAddress.tcp(host: address.ipAddress ?? "?", port: address.port ?? 0).description
        case nil: return "?"
        }
    }

    /// `WATCHDOG=1` as long as the event loops answer (`WatchdogSec=`: a hung server is restarted).
    static func watchdog(every interval: Duration) async {
        while !Task.isCancelled {
            if (try? await MultiThreadedEventLoopGroup.singleton.next().submit {}.get()) != nil {
                Systemd.notify("WATCHDOG=1")
            }
            try? await Task.sleep(for: interval)
        }
    }
}

/// Closes a connection whose request's body has not all arrived `timeout` after its headers: a
/// slow or endless body (after a 413 too, when the server would otherwise read it to its end)
/// never holds a connection. Hummingbird's idle time-out covers the headers and the time
/// between requests.
final class RequestDeadlineHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart

    let timeout: TimeAmount
    var deadline: Scheduled<Void>?

    init(timeout: TimeAmount) { self.timeout = timeout }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head:
            deadline?.cancel()
            let loopBound = NIOLoopBound(context, eventLoop: context.eventLoop)
            deadline = context.eventLoop.scheduleTask(in: timeout) { loopBound.value.close(promise: nil) }
        case .end:
            deadline?.cancel()
            deadline = nil
        case .body: break
        }
        context.fireChannelRead(data)
    }

    func channelInactive(context: ChannelHandlerContext) {
        deadline?.cancel()
        deadline = nil
        context.fireChannelInactive()
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        deadline?.cancel()
        deadline = nil
    }
}
