import Foundation
import StreakTestKit

#if canImport(Glibc)
    import Glibc
#endif

/// A real systemd-journald for the journal sink's tests, and journalctl to read it back.
enum Journald {
    static func ensureRunning() throws { try JournaldProcess.ensureRunning() }

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
            throw JournaldProcess.Unavailable(
                description: "journalctl \(arguments) exited with \(process.terminationStatus)")
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
