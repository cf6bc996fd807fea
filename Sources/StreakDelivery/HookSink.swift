import Foundation
import StreakCore

#if canImport(Glibc)
    import Glibc
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

    public func accepts(_ notification: Notification) -> Bool {
        command.kinds?.contains(notification.kind) ?? true
    }

    public var timeLimit: Double { command.timeout + Self.killGrace + Self.drainGrace }

    public func deliver(_ notification: Notification) -> DeliveryOutcome {
        if !accepts(notification) { return .delivered }
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
            try Self.launch(process)
        } catch {
            return .failed("cannot run \(program): \(Self.reason(error))")
        }
        let run = Self.supervise(
            process, exited: exited,
            output: [out.fileHandleForReading.fileDescriptor, err.fileHandleForReading.fileDescriptor],
            timeout: command.timeout)
        let detail = Self.lastLines(run.stderr).map { ": " + $0 } ?? ""
        if run.timedOut { return .failed("timed out after \(Self.seconds(command.timeout))s\(detail)") }
        switch run.ending {
        case .exit(0): return .delivered
        case .exit(let status): return .failed("exit \(status)\(detail)")
        case .signal(let signal): return .failed("killed by signal \(signal)\(detail)")
        case nil: return .failed("lost track of \(program) (pid \(process.processIdentifier))")
        }
    }

    // MARK: - Running

    enum Ending: Equatable {
        case exit(Int32)
        case signal(Int32)
    }

    struct Run {
        var ending: Ending?
        var timedOut = false
        var stderr: [UInt8] = []
    }

    /// Reads the hook's stdout (discarded) and stderr (the head kept) until it has exited and its output is closed,
    /// terminating its whole process group when it runs past `timeout`.
    ///
    /// Foundation starts the child in a process group of its own (POSIX_SPAWN_SETPGROUP), led by it, so the
    /// group id is its pid.
    static func supervise(_ process: Process, exited: DispatchSemaphore, output: [Int32], timeout: Double) -> Run {
        let group = process.processIdentifier
        let clock = ContinuousClock()
        let deadline = clock.now + .seconds(max(timeout, 0))
        var run = Run()
        var open = output  // [stdout, stderr]; -1 once at EOF
        var exitedAt: ContinuousClock.Instant?
        var terminatedAt: ContinuousClock.Instant?
        var buffer = [UInt8](repeating: 0, count: 65536)

        while true {
            if run.ending == nil, let ending = ending(of: process, exited: exited) {
                run.ending = ending
                exitedAt = clock.now
            }
            let now = clock.now
            if let terminatedAt {
                if run.ending != nil, !groupAlive(group) { break }
                if now >= terminatedAt + .seconds(killGrace) {
                    _ = killpg(group, SIGKILL)
                    if run.ending == nil, exited.wait(timeout: .now() + 5) == .success {
                        run.ending = foundationEnding(process)
                    }
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
                    // The tail is kept: a failing program says why last.
                    if entry.fd == output[1] {
                        run.stderr += buffer[0..<count]
                        if run.stderr.count > stderrKept { run.stderr.removeFirst(run.stderr.count - stderrKept) }
                    }
                } else if count == 0 || (errno != EINTR && errno != EAGAIN) {
                    if let index = open.firstIndex(of: entry.fd) { open[index] = -1 }
                }
            }
        }
        return run
    }

    /// How the hook ended, if it has. Foundation only reaps the child once every holder of the socket it watches
    /// has gone, which includes background children the hook left behind; so the exit is also peeked at with
    /// `waitid(WNOWAIT)`, which leaves the reaping to Foundation.
    static func ending(of process: Process, exited: DispatchSemaphore) -> Ending? {
        if exited.wait(timeout: .now()) == .success { return foundationEnding(process) }
        var info = siginfo_t()
        let result = waitid(P_PID, id_t(process.processIdentifier), &info, WEXITED | WNOHANG | WNOWAIT)
        if result == 0 {
            let child = info._sifields._sigchld
            guard child.si_pid == process.processIdentifier else { return nil }  // still running
            return info.si_code == Int32(CLD_EXITED) ? .exit(child.si_status) : .signal(child.si_status)
        }
        // ECHILD: Foundation has just reaped it; its termination handler is on its way.
        if errno == ECHILD, exited.wait(timeout: .now() + 2) == .success { return foundationEnding(process) }
        return nil
    }

    static func foundationEnding(_ process: Process) -> Ending {
        process.terminationReason == .exit ? .exit(process.terminationStatus) : .signal(process.terminationStatus)
    }

    /// Starts the process with no signal blocked. A child inherits the spawning thread's signal mask, Foundation does
    /// not reset it, and Dispatch and Swift concurrency threads block most signals: a hook started from one would
    /// ignore the SIGTERM of its time-out.
    static func launch(_ process: Process) throws {
        var none = sigset_t()
        var saved = sigset_t()
        sigemptyset(&none)
        pthread_sigmask(SIG_SETMASK, &none, &saved)
        defer { pthread_sigmask(SIG_SETMASK, &saved, nil) }
        try process.run()
    }

    /// Whether any live process is left in the group. Zombies do not count: in a container the init that inherits
    /// them may be slow to reap them, or never do.
    static func groupAlive(_ group: pid_t) -> Bool {
        guard let entries = try? FileManager.default.contentsOfDirectory(atPath: "/proc") else {
            return killpg(group, 0) == 0 || errno == EPERM
        }
        for entry in entries where entry.first?.isNumber == true {
            guard let stat = try? String(contentsOfFile: "/proc/\(entry)/stat", encoding: .utf8),
                let close = stat.lastIndex(of: ")")
            else { continue }
            // After "(comm)": state, ppid, pgrp, …
            let fields = stat[stat.index(after: close)...].split(separator: " ")
            guard fields.count > 2, let pgrp = pid_t(fields[2]), pgrp == group else { continue }
            if fields[0] != "Z" && fields[0] != "X" { return true }
        }
        return false
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

    public struct Reason: Error, Equatable {
        public var text: String
    }

    /// `argv[0]` as a path to execute: taken as it is when it contains a slash, else looked up in `path`.
    public static func resolve(_ program: String, path: String?) -> Result<String, Reason> {
        if program.contains("/") {
            if isDirectory(program) { return .failure(Reason(text: String(cString: strerror(EISDIR)))) }
            guard access(program, X_OK) == 0 else { return .failure(Reason(text: String(cString: strerror(errno)))) }
            return .success(program)
        }
        let directories = (path ?? "/usr/local/bin:/usr/bin:/bin").split(
            separator: ":", omittingEmptySubsequences: false)
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

    /// How much of the end of a hook's standard error is kept.
    static let stderrKept = 4096

    /// The last few non-blank lines of what a hook wrote to stderr (SPEC §5: its error), each cut
    /// to 200 characters, on one line: `a | b | c`.
    static func lastLines(_ bytes: [UInt8], count: Int = 3) -> String? {
        let text = String(decoding: bytes, as: UTF8.self)
        let lines = text.split(whereSeparator: \.isNewline)
            .map { $0.trimmingCharacters(in: .whitespaces) }
            .filter { !$0.isEmpty }
            .suffix(count)
            .map { String($0.prefix(200)) }
        return lines.isEmpty ? nil : lines.joined(separator: " | ")
    }

    /// `10`, `1.5`: seconds as configured, without a needless fraction.
    static func seconds(_ value: Double) -> String {
        value == value.rounded() && abs(value) < 1e15 ? String(Int64(value)) : String(value)
    }
}
