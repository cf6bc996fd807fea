import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// A real systemd-journald for the journal sink's tests, and journalctl to read it back.
enum Journald {
    static let socketPath = "/run/systemd/journal/socket"
    static let daemon = "/lib/systemd/systemd-journald"

    struct Unavailable: Error, CustomStringConvertible {
        var description: String
    }

    /// Started at most once per test process; every journal test awaits this first.
    static let ready: Result<Void, Unavailable> = {
        do throws(Unavailable) {
            try startIfNeeded()
            return .success(())
        } catch {
            return .failure(error)
        }
    }()

    static func ensureRunning() throws {
        try ready.get()
    }

    /// Does something receive datagrams on the socket? (A socket file outlives its journald.)
    static func answers() -> Bool {
        let fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue), 0)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let path = Array(socketPath.utf8)
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: path) }
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        return result == 0
    }

    private static func startIfNeeded() throws(Unavailable) {
        if answers() { return }
        do {
            try FileManager.default.createDirectory(atPath: "/run/systemd/journal", withIntermediateDirectories: true)
            let process = Process()
            process.executableURL = URL(fileURLWithPath: daemon)
            process.standardInput = FileHandle.nullDevice
            process.standardOutput = FileHandle.nullDevice
            process.standardError = FileHandle.nullDevice
            try process.run()
            // Left running for later test runs (PID 1 is not systemd here: nobody else starts it).
            for _ in 0..<100 {
                if answers() { return }
                if !process.isRunning {
                    throw Unavailable(description: "\(daemon) exited with status \(process.terminationStatus)")
                }
                usleep(100_000)
            }
            throw Unavailable(description: "\(daemon) started but \(socketPath) does not answer after 10 s")
        } catch let error as Unavailable {
            throw error
        } catch {
            throw Unavailable(description: "cannot start \(daemon): \(error)")
        }
    }

    /// Runs journalctl with these arguments (never through a shell) and returns its stdout.
    static func journalctl(_ arguments: [String]) throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/journalctl")
        process.arguments = arguments
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        process.standardInput = FileHandle.nullDevice
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw Unavailable(description: "journalctl \(arguments) exited with \(process.terminationStatus)")
        }
        return String(decoding: data, as: UTF8.self)
    }

    /// Asks journald to write out what it has received (pending datagrams are processed first).
    static func sync() {
        _ = try? journalctl(["--sync"])
    }

    /// The JSON entries matching `match` (e.g. `STREAKD_USER=u1`), retried until there are
    /// `expected` of them or `timeout` has passed.
    static func entries(_ match: String, expected: Int, timeout: Duration = .seconds(20)) throws -> [[String: Any]] {
        let deadline = ContinuousClock.now + timeout
        while true {
            sync()
            let text = try journalctl(["-o", "json", "--no-pager", match])
            let entries = text.split(separator: "\n").compactMap {
                (try? JSONSerialization.jsonObject(with: Data($0.utf8))) as? [String: Any]
            }
            if entries.count >= expected || ContinuousClock.now >= deadline { return entries }
            usleep(200_000)
        }
    }

    /// The distinct values of `field` over the entries matching `match`, retried likewise.
    static func distinctValues(of field: String, _ match: String, expected: Int, timeout: Duration = .seconds(60))
        throws -> Set<Substring>
    {
        let deadline = ContinuousClock.now + timeout
        while true {
            sync()
            let text = try journalctl(["-o", "cat", "--output-fields=\(field)", "--no-pager", match])
            let values = Set(text.split(separator: "\n"))
            if values.count >= expected || ContinuousClock.now >= deadline { return values }
            usleep(500_000)
        }
    }
}
