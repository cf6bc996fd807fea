import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// A journald to write to and journalctl to read it back. PID 1 is not systemd on the test
/// machines: when nothing answers on the socket, a systemd-journald is started and left running
/// (as Tests/StreakDeliveryTests does).
enum Journal {
    static let socketPath = "/run/systemd/journal/socket"
    static let daemon = "/lib/systemd/systemd-journald"

    struct Unavailable: Error, CustomStringConvertible { var description: String }

    static let ready: Result<Void, Unavailable> = {
        if answers() { return .success(()) }
        do {
            try FileManager.default.createDirectory(atPath: "/run/systemd/journal", withIntermediateDirectories: true)
            let process = Process()
            process.executableURL = URL(fileURLWithPath: daemon)
            process.standardInput = FileHandle.nullDevice
            process.standardOutput = FileHandle.nullDevice
            process.standardError = FileHandle.nullDevice
            try process.run()
            for _ in 0..<100 {
                if answers() { return .success(()) }
                usleep(100_000)
            }
            return .failure(Unavailable(description: "\(daemon) does not answer on \(socketPath) after 10 s"))
        } catch {
            return .failure(Unavailable(description: "cannot start \(daemon): \(error)"))
        }
    }()

    static func ensureRunning() throws { try ready.get() }

    /// Does something receive datagrams on the socket? (A socket file outlives its journald.)
    static func answers() -> Bool {
        let fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue), 0)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: Array(socketPath.utf8)) }
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        } == 0
    }

    /// journalctl's output for these arguments, retried (journald writes asynchronously) until
    /// `done` accepts it or `timeout` has passed.
    static func read(
        _ arguments: [String], timeout: Duration = .seconds(20), until done: (String) -> Bool = { !$0.isEmpty }
    ) -> String {
        let deadline = ContinuousClock.now + timeout
        while true {
            _ = run(["/usr/bin/journalctl", "--sync"], timeout: .seconds(30))
            let result = run(["/usr/bin/journalctl", "--no-pager"] + arguments, timeout: .seconds(60))
            if done(result.out) || ContinuousClock.now >= deadline { return result.out }
            usleep(300_000)
        }
    }
}

/// journalctl with streakd's catalog from a staging root (`make install-catalog DESTDIR=`):
/// the staged database is bind-mounted over /var/lib/systemd/catalog in a mount namespace of
/// its own, so the host's catalog is never changed. Needs root; nil otherwise.
func journalctlWithCatalog(_ stagingRoot: String, _ arguments: [String]) -> Outcome? {
    guard getuid() == 0, FileManager.default.fileExists(atPath: "/var/lib/systemd/catalog"),
        let unshare = which("unshare")
    else { return nil }
    let script = """
        mount --bind "$1/var/lib/systemd/catalog" /var/lib/systemd/catalog && shift && exec journalctl --no-pager "$@"
        """
    return run(
        [unshare, "--mount", "--propagation", "private", "/bin/sh", "-c", script, "sh", stagingRoot] + arguments)
}
