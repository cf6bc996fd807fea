import Foundation
import StreakDelivery
import Synchronization
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// What one program run did.
public struct Outcome: CustomStringConvertible, Sendable {
    public var code: Int32
    public var out: String
    public var err: String
    public var timedOut = false

    public init(code: Int32, out: String, err: String, timedOut: Bool = false) {
        self.code = code
        self.out = out
        self.err = err
        self.timedOut = timedOut
    }

    public var description: String {
        "exit \(code)\(timedOut ? " (killed: time-out)" : "")\n--- stdout\n\(out)--- stderr\n\(err)"
    }
}

/// The package root: the first folder above this file that holds Package.swift.
public let packageRoot: String = {
    var url = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
    while url.path != "/" {
        if FileManager.default.fileExists(atPath: url.appendingPathComponent("Package.swift").path) {
            return url.path
        }
        url = url.deletingLastPathComponent()
    }
    return FileManager.default.currentDirectoryPath
}()

/// The streakd that `swift build` made (`swift test` builds it first: it is a product).
public let builtStreakd = packageRoot + "/.build/debug/streakd"

/// The test process's PATH, with the toolchain and the usual system folders.
public let searchPath: String = {
    let inherited = ProcessInfo.processInfo.environment["PATH"] ?? ""
    return ([inherited, "/opt/swift/usr/bin", "/usr/local/bin", "/usr/bin", "/bin", "/usr/sbin", "/sbin"])
        .filter { !$0.isEmpty }.joined(separator: ":")
}()

/// Runs `argv` (never through a shell) with exactly `env`, in `cwd`, killing its process group
/// after `timeout`. Output goes to files, so no pipe fills up. (posix_spawn and waitpid, not
/// Foundation's Process: a Process whose child hands its descriptors on, as systemctl and a
/// systemd manager may, is never seen to end.)
public func run(
    _ argv: [String], env: [String: String]? = nil, cwd: String? = nil, stdin: String? = nil,
    timeout: Duration = .seconds(120)
) -> Outcome {
    let scratch = NSTemporaryDirectory() + "streakd-test-run.\(UUID().uuidString)"
    defer { try? FileManager.default.removeItem(atPath: scratch) }
    do {
        try FileManager.default.createDirectory(atPath: scratch, withIntermediateDirectories: true)
        var input = "/dev/null"
        if let stdin {
            input = scratch + "/in"
            try stdin.write(toFile: input, atomically: false, encoding: .utf8)
        }
        let environment = env ?? ["PATH": searchPath, "LANG": "C.UTF-8", "HOME": NSHomeDirectory()]
        let pid = try spawn(
            argv, env: environment, cwd: cwd, stdin: input, stdout: scratch + "/out", stderr: scratch + "/err")
        var (code, timedOut) = (Int32(-1), false)
        if let status = waitForExit(pid, timeout: timeout) {
            code = status
        } else {
            timedOut = true
            kill(-pid, SIGKILL)
            kill(pid, SIGKILL)
            code = waitForExit(pid, timeout: .seconds(30)) ?? -1
        }
        let out = (try? String(contentsOfFile: scratch + "/out", encoding: .utf8)) ?? ""
        let err = (try? String(contentsOfFile: scratch + "/err", encoding: .utf8)) ?? ""
        return Outcome(code: code, out: out, err: err, timedOut: timedOut)
    } catch {
        return Outcome(code: -1, out: "", err: "cannot run \(argv): \(error)\n")
    }
}

public struct SpawnFailure: Error, CustomStringConvertible {
    public var description: String
}

/// Starts `argv[0]` (a full path) in a process group of its own, with default signal handling
/// and an empty signal mask, standard input, output and error from and to these files.
public func spawn(_ argv: [String], env: [String: String], cwd: String?, stdin: String, stdout: String, stderr: String)
    throws -> pid_t
{
    // In `cwd` through env -C (glibc's posix_spawn_file_actions_addchdir_np is not visible to Swift).
    let argv = cwd.map { ["/usr/bin/env", "-C", $0] + argv } ?? argv
    return try withSpawnSetup(argv: argv, environment: env.map { "\($0.key)=\($0.value)" }, ownGroup: true) {
        actions, attributes, cArgs, cEnv in
        posix_spawn_file_actions_addopen(&actions, 0, stdin, O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, stdout, O_WRONLY | O_CREAT | O_TRUNC | O_APPEND, 0o644)
        posix_spawn_file_actions_addopen(&actions, 2, stderr, O_WRONLY | O_CREAT | O_TRUNC | O_APPEND, 0o644)
        var pid: pid_t = 0
        let result = posix_spawn(&pid, argv[0], &actions, &attributes, cArgs, cEnv)
        guard result == 0 else {
            throw SpawnFailure(description: "posix_spawn \(argv[0]): \(String(cString: strerror(result)))")
        }
        return pid
    }
}

/// Waits for a child to end: its exit status (128 + N for signal N), or nil after `timeout`.
public func waitForExit(_ pid: pid_t, timeout: Duration) -> Int32? {
    let deadline = ContinuousClock.now + timeout
    var status: Int32 = 0
    while true {
        let r = waitpid(pid, &status, WNOHANG)
        if r == pid {
            return status & 0x7f == 0 ? (status >> 8) & 0xff : 128 + (status & 0x7f)
        }
        if r < 0 && errno != EINTR { return -1 }
        if ContinuousClock.now >= deadline { return nil }
        usleep(20_000)
    }
}

extension Duration {
    public var seconds: Double { Double(components.seconds) + Double(components.attoseconds) * 1e-18 }
}

/// The full path of a program on `searchPath`, or nil.
public func which(_ name: String) -> String? {
    for dir in searchPath.split(separator: ":") {
        let path = "\(dir)/\(name)"
        if FileManager.default.isExecutableFile(atPath: path) { return path }
    }
    return nil
}

/// A fresh folder, removed when this goes away.
public final class ScratchDir {
    public let path: String

    public init(under parent: String = NSTemporaryDirectory(), prefix: String = "streakd-test") throws {
        path = (parent as NSString).appendingPathComponent("\(prefix).\(UUID().uuidString.prefix(8).lowercased())")
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    }

    deinit { try? FileManager.default.removeItem(atPath: path) }

    public func sub(_ name: String) -> String { (path as NSString).appendingPathComponent(name) }

    public func write(_ name: String, _ text: String) throws -> String {
        let file = sub(name)
        try FileManager.default.createDirectory(
            atPath: (file as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        try text.write(toFile: file, atomically: true, encoding: .utf8)
        return file
    }
}

/// A started child whose output goes to temporary files (no pipe can fill up).
public final class Spawned {
    public let process: Process
    public let outURL: URL
    public let errURL: URL
    let scratch: URL

    public init(_ process: Process, stdin: String?) throws {
        self.process = process
        scratch = FileManager.default.temporaryDirectory.appendingPathComponent("streakd-run-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
        outURL = scratch.appendingPathComponent("out")
        errURL = scratch.appendingPathComponent("err")
        _ = FileManager.default.createFile(atPath: outURL.path, contents: nil)
        _ = FileManager.default.createFile(atPath: errURL.path, contents: nil)
        process.standardOutput = try FileHandle(forWritingTo: outURL)
        process.standardError = try FileHandle(forWritingTo: errURL)
        if let stdin {
            let inURL = scratch.appendingPathComponent("in")
            try Data(stdin.utf8).write(to: inURL)
            process.standardInput = try FileHandle(forReadingFrom: inURL)
        } else {
            process.standardInput = FileHandle.nullDevice
        }
        try process.run()
    }

    /// Waits for the child to end. One still running after `timeout` is killed, and the test
    /// fails, naming it: a hung child is a failure, never a hung test.
    public func wait(timeout: Duration = .seconds(600), sourceLocation: SourceLocation = #_sourceLocation) -> Outcome {
        let pid = process.processIdentifier
        let killed = Flag()
        let watchdog = DispatchWorkItem {
            killed.set()
            kill(pid, SIGKILL)
        }
        DispatchQueue.global().asyncAfter(deadline: .now() + timeout.seconds, execute: watchdog)
        process.waitUntilExit()
        watchdog.cancel()
        let timedOut = killed.isSet
        if timedOut {
            let command = ([process.executableURL?.path ?? "?"] + (process.arguments ?? [])).joined(separator: " ")
            Issue.record("\(command) was still running after \(timeout): killed", sourceLocation: sourceLocation)
        }
        let out = (try? String(contentsOf: outURL, encoding: .utf8)) ?? "<stdout not UTF-8>"
        let err = (try? String(contentsOf: errURL, encoding: .utf8)) ?? "<stderr not UTF-8>"
        try? FileManager.default.removeItem(at: scratch)
        return Outcome(code: process.terminationStatus, out: out, err: err, timedOut: timedOut)
    }
}

/// A flag one thread sets and another reads.
final class Flag: Sendable {
    private let value = Atomic<Bool>(false)
    func set() { value.store(true, ordering: .sequentiallyConsistent) }
    var isSet: Bool { value.load(ordering: .sequentiallyConsistent) }
}

/// Writes `bytes` to `path` (created as 0666 less the umask, or truncated; then `mode` when given,
/// else an existing file keeps its own) through a descriptor that no child
/// inherits (O_CLOEXEC). Foundation's writes open theirs without it, so a test's script could stay
/// open for writing in a long-lived child another test spawned meanwhile, and running the script
/// then fails with ETXTBSY ("text file busy") for as long as that child lives.
public func writeFile(_ path: String, _ bytes: [UInt8], mode: mode_t? = nil) throws {
    let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o666)
    guard fd >= 0 else { throw SpawnFailure(description: "open \(path): \(String(cString: strerror(errno)))") }
    defer { close(fd) }
    var written = 0
    while written < bytes.count {
        let n = bytes[written...].withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        if n < 0 && errno == EINTR { continue }
        guard n > 0 else { throw SpawnFailure(description: "write \(path): \(String(cString: strerror(errno)))") }
        written += n
    }
    if let mode { fchmod(fd, mode) }
}
