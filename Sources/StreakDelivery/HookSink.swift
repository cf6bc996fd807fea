import Foundation
import StreakCore

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// One configured hook (SPEC §5): an argv array, never a shell string.
public struct HookCommand: Equatable, Sendable {
    public var name: String
    /// `argv[0]` is an absolute path, or a bare name looked up in `PATH`.
    public var argv: [String]
    /// Seconds the hook may run before it is terminated.
    public var timeout: Double
    /// The kinds this hook wants; `nil` means all of them.
    public var kinds: Set<NotificationKind>?

    public init(name: String, argv: [String], timeout: Double = 10, kinds: Set<NotificationKind>? = nil) {
        self.name = name
        self.argv = argv
        self.timeout = timeout
        self.kinds = kinds
    }
}

/// Runs a hook once per notification: the JSON object and a newline on stdin, the `STREAKD_*` fields in the
/// environment. Exit 0 is delivered; anything else is a failure to retry on a later run.
public final class HookSink: Sink {
    public let command: HookCommand
    public var name: String { "hook:" + command.name }

    /// Seconds between SIGTERM and SIGKILL when a hook overstays its timeout.
    static let killGrace: Double = 1
    /// How long to keep reading output that a hook's leftover background children hold open after it exited.
    static let drainGrace: Double = 0.25
    /// Parent variables a hook inherits; everything else it gets comes from the notification.
    static let inherited = ["PATH", "HOME", "LANG"]

    public init(command: HookCommand) {
        self.command = command
    }

    public func deliver(_ notification: Notification) -> DeliveryOutcome {
        if let kinds = command.kinds, !kinds.contains(notification.kind) { return .delivered }
        let parent = ProcessInfo.processInfo.environment
        guard let program = command.argv.first, !program.isEmpty else {
            return .failed("cannot run hook \(command.name): empty argv")
        }
        let executable: String
        switch Self.resolve(program, path: parent["PATH"]) {
        case .success(let path): executable = path
        case .failure(let reason): return .failed("cannot run \(program): \(reason.text)")
        }

        var environment: [String: String] = [:]
        for key in Self.inherited { environment[key] = parent[key] }
        for (key, value) in notification.fields { environment[key] = value }
        environment["STREAKD_MESSAGE"] = notification.message

        let input: FileHandle
        do {
            input = try Self.stdinFile(notification.json.text + "\n")
        } catch {
            return .failed("cannot run \(program): stdin: \(error.localizedDescription)")
        }
        defer { try? input.close() }

        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = Array(command.argv.dropFirst())
        process.environment = environment
        process.standardInput = input
        let out = Pipe()
        let err = Pipe()
        process.standardOutput = out
        process.standardError = err
        let exited = DispatchSemaphore(value: 0)
        process.terminationHandler = { _ in exited.signal() }
        do {
            try process.run()
        } catch {
            return .failed("cannot run \(program): \(Self.reason(error))")
        }
        // Foundation starts the child in a process group of its own (POSIX_SPAWN_SETPGROUP), led by it.
        let group = process.processIdentifier

        let run = Self.supervise(
            group: group, exited: exited, output: [out.fileHandleForReading.fileDescriptor, err.fileHandleForReading.fileDescriptor],
            timeout: command.timeout)
        if run.timedOut { return .failed("timed out after \(Self.seconds(command.timeout))s") }
        guard run.exited else { return .failed("lost track of \(program) (pid \(group))") }
        let status = process.terminationStatus
        let detail = Self.firstLine(run.stderr).map { ": " + $0 } ?? ""
        switch process.terminationReason {
        case .exit: return status == 0 ? .delivered : .failed("exit \(status)\(detail)")
        case .uncaughtSignal: return .failed("killed by signal \(status)\(detail)")
        @unknown default: return .failed("ended with status \(status)\(detail)")
        }
    }

    // MARK: - Running

    struct Run {
        var exited = false
        var timedOut = false
        var stderr: [UInt8] = []
    }

    /// Reads the hook's stdout (discarded) and stderr (the head kept) until it has exited and its output is closed,
    /// terminating its whole process group when it runs past `timeout`.
    static func supervise(group: pid_t, exited: DispatchSemaphore, output: [Int32], timeout: Double) -> Run {
        let clock = ContinuousClock()
        let start = clock.now
        let deadline = start + .seconds(timeout)
        var run = Run()
        var open = output  // [stdout, stderr]; -1 once at EOF
        var exitedAt: ContinuousClock.Instant?
        var terminatedAt: ContinuousClock.Instant?
        var buffer = [UInt8](repeating: 0, count: 65536)

        while true {
            if !run.exited, exited.wait(timeout: .now()) == .success {
                run.exited = true
                exitedAt = clock.now
            }
            let now = clock.now
            if let terminatedAt {
                if run.exited, !groupAlive(group) { break }
                if now >= terminatedAt + .seconds(killGrace) {
                    _ = killpg(group, SIGKILL)
                    if !run.exited { run.exited = exited.wait(timeout: .now() + 5) == .success }
                    break
                }
            } else if let exitedAt {
                if open.allSatisfy({ $0 < 0 }) || now >= exitedAt + .seconds(drainGrace) { break }
            } else if now >= deadline {
                run.timedOut = true
                terminatedAt = now
                _ = killpg(group, SIGTERM)
                continue
            }

            var fds = open.filter { $0 >= 0 }.map { pollfd(fd: $0, events: Int16(POLLIN), revents: 0) }
            if fds.isEmpty {
                // Output closed; only the exit (or the clock) is left to wait for.
                usleep(10_000)
                continue
            }
            let ready = poll(&fds, nfds_t(fds.count), 20)
            guard ready > 0 else { continue }
            for entry in fds where entry.revents != 0 {
                let count = buffer.withUnsafeMutableBytes { read(entry.fd, $0.baseAddress, $0.count) }
                if count > 0 {
                    if entry.fd == output[1], run.stderr.count < 4096 {
                        run.stderr += buffer[0..<min(count, 4096 - run.stderr.count)]
                    }
                } else if count == 0 || (errno != EINTR && errno != EAGAIN) {
                    if let index = open.firstIndex(of: entry.fd) { open[index] = -1 }
                }
            }
        }
        return run
    }

    /// Whether any process is left in the group.
    static func groupAlive(_ group: pid_t) -> Bool {
        killpg(group, 0) == 0 || errno == EPERM
    }

    /// The notification's JSON in an unlinked temporary file, at offset 0: a hook may read it or not, and no
    /// writer can block or take a SIGPIPE.
    static func stdinFile(_ text: String) throws -> FileHandle {
        var template = Array((NSTemporaryDirectory() + "/streakd-hook-XXXXXX").utf8CString)
        let fd = template.withUnsafeMutableBufferPointer { buffer in
            let fd = mkstemp(buffer.baseAddress!)
            if fd >= 0 { unlink(buffer.baseAddress!) }
            return fd
        }
        guard fd >= 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
        let handle = FileHandle(fileDescriptor: fd, closeOnDealloc: true)
        try handle.write(contentsOf: Data(text.utf8))
        try handle.seek(toOffset: 0)
        return handle
    }

    // MARK: - Finding the program

    struct Reason: Error, Equatable {
        var text: String
    }

    /// `argv[0]` as a path to execute: taken as it is when it contains a slash, else looked up in `path`.
    static func resolve(_ program: String, path: String?) -> Result<String, Reason> {
        if program.contains("/") {
            if access(program, X_OK) == 0, !isDirectory(program) { return .success(program) }
            let code = isDirectory(program) ? EISDIR : errno
            return .failure(Reason(text: String(cString: strerror(code))))
        }
        let directories = (path ?? "/usr/local/bin:/usr/bin:/bin").split(separator: ":", omittingEmptySubsequences: false)
        for directory in directories {
            let candidate = (directory.isEmpty ? "." : String(directory)) + "/" + program
            if access(candidate, X_OK) == 0, !isDirectory(candidate) { return .success(candidate) }
        }
        return .failure(Reason(text: "not found in PATH"))
    }

    static func isDirectory(_ path: String) -> Bool {
        var isDirectory: ObjCBool = false
        return FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) && isDirectory.boolValue
    }

    // MARK: - Wording

    static func reason(_ error: any Error) -> String {
        let error = error as NSError
        if error.domain == NSPOSIXErrorDomain { return String(cString: strerror(Int32(error.code))) }
        if let underlying = error.userInfo[NSUnderlyingErrorKey] as? NSError, underlying.domain == NSPOSIXErrorDomain {
            return String(cString: strerror(Int32(underlying.code)))
        }
        return error.localizedDescription
    }

    /// The first non-blank line of what a hook wrote to stderr, cut to 200 characters.
    static func firstLine(_ bytes: [UInt8]) -> String? {
        let text = String(decoding: bytes, as: UTF8.self)
        let line = text.split(whereSeparator: \.isNewline).lazy
            .map { $0.trimmingCharacters(in: .whitespaces) }
            .first { !$0.isEmpty }
        return line.map { String($0.prefix(200)) }
    }

    /// `10`, `1.5`: seconds as configured, without a needless fraction.
    static func seconds(_ value: Double) -> String {
        value == value.rounded() && abs(value) < 1e15 ? String(Int64(value)) : String(value)
    }
}
