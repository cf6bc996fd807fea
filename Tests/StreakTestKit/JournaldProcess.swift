import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// A real systemd-journald for the test targets. PID 1 is not systemd on the test machines: when
/// nothing answers on the socket, one is started standalone and left running for later tests.
public enum JournaldProcess {
    public static let socketPath = "/run/systemd/journal/socket"
    public static let daemon = "/lib/systemd/systemd-journald"

    public struct Unavailable: Error, CustomStringConvertible {
        public var description: String
        public init(description: String) { self.description = description }
    }

    /// Started at most once per test process; every journal test awaits this first.
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
                if !process.isRunning {
                    return .failure(
                        Unavailable(description: "\(daemon) exited with status \(process.terminationStatus)"))
                }
                usleep(100_000)
            }
            return .failure(Unavailable(description: "\(daemon) started but \(socketPath) does not answer after 10 s"))
        } catch {
            return .failure(Unavailable(description: "cannot start \(daemon): \(error)"))
        }
    }()

    /// Goes on once a journald answers. Without systemd-journald on the machine the test is
    /// skipped, saying so (a failure when strict); one that cannot start is a failure.
    public static func ensureRunning() throws {
        try Prerequisite.journald.require()
        try ready.get()
    }

    /// Does something receive datagrams on the socket? (A socket file outlives its journald.)
    public static func answers() -> Bool {
        withSocket { fd, address in connect(fd, address, socklen_t(MemoryLayout<sockaddr_un>.size)) == 0 }
    }

    /// Runs `body` with a datagram socket and journald's address.
    public static func withSocket(_ body: (Int32, UnsafePointer<sockaddr>) -> Bool) -> Bool {
        let fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue), 0)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: Array(socketPath.utf8)) }
        return withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { body(fd, $0) } }
    }
}
