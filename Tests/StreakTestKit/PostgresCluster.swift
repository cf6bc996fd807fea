import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// A throwaway PostgreSQL cluster (scripts/pg-cluster) reachable on a Unix socket only.
public final class PostgresCluster: Sendable {
    public let directory: String
    /// `postgresql:///postgres?host=DIR/sock&user=…`
    public let url: String

    /// The package's root, where scripts/pg-cluster lives.
    static let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent().path
    public static let binDirectory = ProcessInfo.processInfo.environment["PG_BIN"] ?? "/usr/lib/postgresql/15/bin"

    /// Clusters still running, stopped when the test process exits.
    private static let running = Mutex<[String]>([])
    private static let exitHook: Void = { atexit { PostgresCluster.stopAll() } }()

    private init(directory: String, url: String) {
        self.directory = directory
        self.url = url
    }

    /// Starts a new cluster in a fresh directory under /tmp (about a second).
    public static func start() throws -> PostgresCluster {
        _ = exitHook
        var template = Array("/tmp/streakd-pg.XXXXXX".utf8CString)
        guard let made = mkdtemp(&template) else { throw TestPostgresError("mkdtemp failed: errno \(errno)") }
        let directory = String(cString: made)
        running.withLock { $0.append(directory) }
        let url = try runScript(["start", directory])
        return PostgresCluster(directory: directory, url: url)
    }

    /// Starts the stopped cluster again (same directory, same URL).
    public func restart() throws { _ = try Self.runScript(["start", directory]) }

    /// Fast shutdown (SIGINT), waiting until the server has exited.
    public func stop() throws { _ = try Self.runScript(["stop", directory]) }

    /// Stops the cluster and deletes its directory.
    public func discard() {
        _ = try? stop()
        try? FileManager.default.removeItem(atPath: directory)
        Self.running.withLock { $0.removeAll { $0 == directory } }
    }

    /// The postmaster's PID, from postmaster.pid.
    public var postmasterPID: pid_t? {
        guard let text = try? String(contentsOfFile: directory + "/data/postmaster.pid", encoding: .utf8),
            let line = text.split(separator: "\n").first
        else { return nil }
        return pid_t(line)
    }

    /// The postmaster and every process it started (the backends).
    public var serverPIDs: [pid_t] {
        guard let postmaster = postmasterPID else { return [] }
        var pids = [postmaster]
        for entry in (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? [] {
            guard let pid = pid_t(entry),
                let stat = try? String(contentsOfFile: "/proc/\(entry)/stat", encoding: .utf8),
                let close = stat.lastIndex(of: ")")
            else { continue }
            // "pid (comm) state ppid …": the comm may hold spaces, so read after its ")".
            let fields = stat[stat.index(after: close)...].split(separator: " ")
            if fields.count > 1, pid_t(fields[1]) == postmaster { pids.append(pid) }
        }
        return pids
    }

    /// Sends `signal` to the postmaster and all its children.
    public func signalAll(_ signal: Int32) {
        for pid in serverPIDs { kill(pid, signal) }
    }

    static func stopAll() {
        let directories = running.withLock { list in
            defer { list.removeAll() }
            return list
        }
        for directory in directories {
            _ = try? runScript(["stop", directory])
            try? FileManager.default.removeItem(atPath: directory)
        }
    }

    @discardableResult
    static func runScript(_ arguments: [String]) throws -> String {
        try runTool(packageRoot + "/scripts/pg-cluster", arguments)
    }
}

/// Runs a program to its end (two minutes at most); returns its standard output, trimmed, or
/// throws with its errors.
func runTool(_ path: String, _ arguments: [String], environment: [String: String]? = nil) throws -> String {
    let limit = Duration.seconds(120)
    let result = run([path] + arguments, env: environment ?? ProcessInfo.processInfo.environment, timeout: limit)
    guard result.code == 0, !result.timedOut else {
        throw TestPostgresError(
            "\(path) \(arguments.joined(separator: " ")) "
                + (result.timedOut ? "was still running after \(limit) (killed)" : "exited with \(result.code)")
                + ": " + result.err)
    }
    return result.out.trimmingCharacters(in: .whitespacesAndNewlines)
}

public struct TestPostgresError: Error, CustomStringConvertible, Sendable {
    public var description: String
    public init(_ description: String) { self.description = description }
}
