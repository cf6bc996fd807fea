import StreakCore
import TOMLKit

/// `[api]` of `streakd.toml`: what `streakd serve` (SPEC §11) takes beyond its command line.
public struct APISettings: Equatable, Sendable {
    /// The connections of a Unix socket act as admin without a token (its file mode decides who
    /// connects); TCP connections always need one.
    public var trustSocket = false
    /// A connection that sends nothing for this long is closed: between requests, and before a
    /// request's headers are complete (a stalled client).
    public var idleTimeoutSeconds = 30
    /// A request's body must have arrived this long after its headers, or the connection is
    /// closed (a slow or endless body never holds the server).
    public var requestTimeoutSeconds = 60
    /// At most this many open connections per listening socket; past it new ones wait in the
    /// socket's backlog (and are refused by the kernel once that is full).
    public var maxConnections = 16_384

    public init() {}

    var tomlLines: [String] {
        [
            "[api]", "trust_socket = \(trustSocket)", "idle_timeout_seconds = \(idleTimeoutSeconds)",
            "request_timeout_seconds = \(requestTimeoutSeconds)", "max_connections = \(maxConnections)",
        ]
    }

    var json: JSON {
        .object([
            ("trust_socket", .bool(trustSocket)), ("idle_timeout_seconds", .int(idleTimeoutSeconds)),
            ("request_timeout_seconds", .int(requestTimeoutSeconds)), ("max_connections", .int(maxConnections)),
        ])
    }
}

extension ConfigLoader {
    static func readAPI(_ table: TOMLTable, reader: TableReader, into config: inout Config) {
        reader.attempt {
            guard let t = try reader.table(table, "api", in: "") else { return }
            try reader.keys(
                t, in: "api",
                allowed: ["trust_socket", "idle_timeout_seconds", "request_timeout_seconds", "max_connections"])
            var api = config.api
            api.trustSocket = try reader.bool(t, "trust_socket", in: "api") ?? api.trustSocket
            api.idleTimeoutSeconds =
                try reader.int(t, "idle_timeout_seconds", in: "api", range: 1...3600) ?? api.idleTimeoutSeconds
            api.requestTimeoutSeconds =
                try reader.int(t, "request_timeout_seconds", in: "api", range: 1...3600) ?? api.requestTimeoutSeconds
            api.maxConnections =
                try reader.int(t, "max_connections", in: "api", range: 1...1_000_000) ?? api.maxConnections
            config.api = api
        }
    }
}
