import Foundation
import StreakJobs

/// Where `streakd serve` listens (SPEC §11): `unix:PATH`, `HOST:PORT` or `[V6]:PORT`.
public enum ListenAddress: Equatable, Sendable, CustomStringConvertible {
    case unix(String)
    case tcp(host: String, port: Int)

    /// The default: `unix:$RUNTIME_DIRECTORY/streakd.sock`, else `unix:$XDG_RUNTIME_DIR/streakd.sock`.
    public static func standard(_ env: [String: String]) throws -> ListenAddress {
        for name in ["RUNTIME_DIRECTORY", "XDG_RUNTIME_DIR"] {
            // systemd may name several runtime folders, separated by colons: the first is ours.
            if let folder = env[name]?.split(separator: ":").first, !folder.isEmpty {
                return .unix(folder + "/streakd.sock")
            }
        }
        throw StreakdError.usage(
            "--listen: neither RUNTIME_DIRECTORY nor XDG_RUNTIME_DIR is set, so there is no default socket; "
                + "give one, such as --listen unix:/run/streakd/streakd.sock or --listen 127.0.0.1:8080")
    }

    /// Parses `--listen`'s value; a usage error (64) says what would be valid.
    public static func parse(_ text: String) throws -> ListenAddress {
        let valid = "use unix:PATH, HOST:PORT or [V6]:PORT, such as 127.0.0.1:8080"
        if text.hasPrefix("unix:") {
            let path = String(text.dropFirst(5))
            guard !path.isEmpty, path.utf8.count < 108 else {
                throw StreakdError.usage(
                    "--listen: \"\(text)\" names no socket path, or one longer than 107 bytes; \(valid)")
            }
            // A socket file left by a server gone is replaced; any other file is never touched.
            var info = stat()
            if lstat(path, &info) == 0 && (info.st_mode & S_IFMT) != S_IFSOCK {
                throw StreakdError.usage(
                    "--listen: \(path) exists and is not a socket; remove it or name another path")
            }
            return .unix(path)
        }
        guard let colon = text.lastIndex(of: ":") else {
            throw StreakdError.usage("--listen: \"\(text)\" has no port; \(valid)")
        }
        var host = String(text[..<colon])
        let portText = text[text.index(after: colon)...]
        guard let port = Int(portText), (0...65535).contains(port), portText.allSatisfy(\.isASCII) else {
            throw StreakdError.usage("--listen: \"\(portText)\" is not a port (0 to 65535); \(valid)")
        }
        if host.hasPrefix("[") && host.hasSuffix("]") {
            host = String(host.dropFirst().dropLast())
        } else if host.contains(":") {
            throw StreakdError.usage("--listen: an IPv6 address goes in brackets, as [::1]:8080; \(valid)")
        }
        guard !host.isEmpty else { throw StreakdError.usage("--listen: \"\(text)\" has no host; \(valid)") }
        return .tcp(host: host, port: port)
    }

    public var description: String {
        switch self {
        case .unix(let path): "unix:" + path
        case .tcp(let host, let port): host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)"
        }
    }
}
