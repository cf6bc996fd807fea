import CProcess
import Foundation
import StreakCore

#if canImport(Glibc)
    import Glibc
#endif

/// One configured hook (SPEC §5): an argv array, never a shell string.
public struct HookCommand: Equatable, Sendable {
    public var name: String
    /// `argv[0]` is an absolute path (SPEC §5; the configuration refuses anything else).
    public var argv: [String]
    /// Seconds the hook may run before it is terminated.
    public var timeout: Double
    /// The kinds this hook wants; `nil` means all of them.
    public var kinds: Set<NotificationKind>?
    /// Processes at once (SPEC §12).
    public var concurrency: Int
    /// Notifications one process takes at most, as JSON lines; above 1 it prints each key it
    /// delivered (SPEC §12).
    public var batch: Int

    public init(
        name: String, argv: [String], timeout: Double = 10, kinds: Set<NotificationKind>? = nil, concurrency: Int = 1,
        batch: Int = 1
    ) {
        self.name = name
        self.argv = argv
        self.timeout = timeout
        self.kinds = kinds
        self.concurrency = concurrency
        self.batch = batch
    }
}

/// Runs a hook once per notification: the JSON object and a newline on stdin, the `STREAKD_*` fields in the
/// environment. Exit 0 is delivered; anything else is a failure to retry on a later run. Whatever the hook
/// starts is ended when it exits or times out (`HookProcess`).
public final class HookSink: Sink {
    public let command: HookCommand
    public var name: String { "hook:" + command.name }
    /// Whether the run was asked to stop (SIGTERM): a hook in flight then gets `stopGrace` to finish
    /// before its process group is terminated, and is recorded `interrupted`.
    let stopRequested: @Sendable () -> Bool

    /// Seconds a hook in flight may still take once the run is asked to stop.
    static let stopGrace: Double = 2
    /// How long to keep reading output that a hook's leftover background children hold open after it exited.
    static let drainGrace: Double = 0.25
    /// Parent variables a hook inherits; everything else it gets comes from the notification.
    static let inherited = ["PATH", "HOME", "LANG"]
    /// The longest value of a hook's environment, in bytes.
    static let valueBytesAtMost = 8192

    public init(command: HookCommand, stopRequested: @escaping @Sendable () -> Bool = { false }) {
        self.command = command
        self.stopRequested = stopRequested
    }

    public func accepts(_ notification: Notification) -> Bool {
        command.kinds?.contains(notification.kind) ?? true
    }

    public var timeLimit: Double { command.timeout + 2 * HookProcess.killGrace + Self.drainGrace }
    public var width: Int { command.concurrency }
    public var batch: Int { command.batch }

    public func deliver(_ notification: Notification) -> DeliveryOutcome {
        deliver(notification, startingBefore: { Int64.max }) ?? .delivered
    }

    public func deliver(_ notification: Notification, startingBefore limit: () -> Int64?) -> DeliveryOutcome? {
        if !accepts(notification) { return .delivered }
        var environment: [String: String] = [:]
        for (key, value) in notification.fields { environment[key] = value }
        environment["STREAKD_MESSAGE"] = notification.message
        guard let run = run(stdin: notification.json.text + "\n", environment: environment, startingBefore: limit)
        else { return nil }
        switch run {
        case .cannotRun(let outcome): return outcome
        case .ran(let run): return outcome(of: run)
        }
    }

    /// What a process's run means for the notification it was given (or, with a batch, for
    /// those whose keys it did not print).
    func outcome(of run: Run) -> DeliveryOutcome {
        let detail = Self.lastLines(run.stderr).map { ": " + $0 } ?? ""
        if run.stopped {
            return .interrupted("stopped by a signal to streakd after \(Self.seconds(Self.stopGrace))s more\(detail)")
        }
        if run.timedOut { return .failed("timed out after \(Self.seconds(command.timeout))s\(detail)") }
        switch run.ending {
        case .exit(0): return .delivered
        case .exit(let status): return .failed("exit \(status)\(detail)")
        case .signal(let signal): return .failed("killed by signal \(signal)\(detail)")
        case nil: return .failed("lost track of \(command.argv.first ?? "") (pid \(run.pid))")
        }
    }

    /// Runs the hook's program once with `stdin` as its input and `environment` (beside the
    /// inherited variables): nil when it could not start before `limit`, a failure when it could
    /// not be run at all.
    func run(stdin text: String, environment extra: [String: String], startingBefore limit: () -> Int64?)
        -> Started?
    {
        let parent = ProcessInfo.processInfo.environment
        guard let program = command.argv.first, !program.isEmpty else {
            return .cannotRun(.failed("cannot run hook \(command.name): empty argv"))
        }
        if let reason = Self.check(program) { return .cannotRun(.failed("cannot run \(program): \(reason)")) }

        var environment: [String: String] = [:]
        for key in Self.inherited { environment[key] = parent[key] }
        for (key, value) in extra { environment[key] = value }
        // Each value within what the kernel takes (128 KiB a string, E2BIG past it): cut at 8 KiB
        // on a character's edge. Templates are limited to 4 KiB, so only a value from elsewhere is.
        for (key, value) in environment where value.utf8.count > Self.valueBytesAtMost {
            var cut = ""
            var bytes = 3  // the "…"
            for c in value {
                bytes += c.utf8.count
                if bytes > Self.valueBytesAtMost { break }
                cut.append(c)
            }
            environment[key] = cut + "…"
        }
        let marker = HookProcess.nextMarker()

        let input: FileHandle
        do {
            input = try Self.stdinFile(text)
        } catch {
            return .cannotRun(.failed("cannot run \(program): stdin: \(error.localizedDescription)"))
        }
        defer { try? input.close() }
        var out: [Int32] = [-1, -1]
        var err: [Int32] = [-1, -1]
        guard streakd_pipe(&out) == 0 else {
            return .cannotRun(.failed("cannot run \(program): \(String(cString: strerror(errno)))"))
        }
        guard streakd_pipe(&err) == 0 else {
            let reason = String(cString: strerror(errno))
            out.forEach { close($0) }
            return .cannotRun(.failed("cannot run \(program): \(reason)"))
        }
        defer { [out[0], err[0]].forEach { close($0) } }
        let process: HookProcess
        do {
            guard
                let started = try HookProcess.start(
                    program, argv: command.argv, environment: environment.map { "\($0.key)=\($0.value)" } + [marker],
                    marker: marker, stdin: input.fileDescriptor, stdout: out[1], stderr: err[1], startingBefore: limit)
            else {
                [out[1], err[1]].forEach { close($0) }
                return nil
            }
            process = started
        } catch {
            [out[1], err[1]].forEach { close($0) }
            return .cannotRun(.failed("cannot run \(program): \(Self.reason(error))"))
        }
        [out[1], err[1]].forEach { close($0) }
        return .ran(supervise(process, output: [out[0], err[0]]))
    }

    /// Why `program` cannot run, or nil. Only an absolute path (SPEC §5): a relative one would run
    /// whatever is there in the folder of whoever runs `tick`, a bare name whatever their PATH finds.
    static func check(_ program: String) -> String? {
        guard program.hasPrefix("/") else { return "not an absolute path; name the program by its full path" }
        if isDirectory(program) { return String(cString: strerror(EISDIR)) }
        guard access(program, X_OK) == 0 else { return String(cString: strerror(errno)) }
        return nil
    }

    // MARK: - Running

    /// A run of the hook's program, or why it could not run at all.
    enum Started {
        case ran(Run)
        case cannotRun(DeliveryOutcome)
    }

    struct Run {
        var pid: Int32 = 0
        var ending: HookProcess.Ending?
        var timedOut = false
        /// Terminated because the run was asked to stop.
        var stopped = false
        var stderr: [UInt8] = []
        /// What it printed on stdout, up to `stdoutKept` bytes (a batch hook's keys).
        var stdout: [UInt8] = []
    }

    /// How much of a hook's standard output is kept: a batch's keys (a key is at most a few
    /// hundred bytes).
    static let stdoutKept = 4 << 20

    /// Reads the hook's stdout (discarded) and stderr (the head kept) until it has exited and its output is
    /// closed (or `drainGrace` after its exit), terminating its process group when it runs past its
    /// time-out, or `stopGrace` after a stop was asked for; then ends whatever it left behind.
    func supervise(_ process: HookProcess, output: [Int32]) -> Run {
        let clock = ContinuousClock()
        let deadline = clock.now + .seconds(max(command.timeout, 0))
        var run = Run(pid: process.pid)
        var open = output  // [stdout, stderr]; -1 once at EOF
        var exitedAt: ContinuousClock.Instant?
        var terminatedAt: ContinuousClock.Instant?
        var stopAt: ContinuousClock.Instant?
        var buffer = [UInt8](repeating: 0, count: 65536)

        while true {
            if run.ending == nil, let ending = process.peek() {
                run.ending = ending
                exitedAt = clock.now
            }
            let now = clock.now
            if stopAt == nil && stopRequested() { stopAt = now }
            if let exitedAt {
                if open.allSatisfy({ $0 < 0 }) || now >= exitedAt + .seconds(Self.drainGrace) { break }
            } else if let terminatedAt {
                if now >= terminatedAt + .seconds(HookProcess.killGrace) {
                    process.terminate(SIGKILL)
                    run.ending = process.peek(wait: true)
                    break
                }
            } else if now >= deadline || stopAt.map({ now >= $0 + .seconds(Self.stopGrace) }) == true {
                if now >= deadline { run.timedOut = true } else { run.stopped = true }
                terminatedAt = now
                process.terminate(SIGTERM)
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
                    if entry.fd == output[0] && command.batch > 1 && run.stdout.count < Self.stdoutKept {
                        run.stdout += buffer[0..<min(count, Self.stdoutKept - run.stdout.count)]
                    }
                    if entry.fd == output[1] {
                        run.stderr += buffer[0..<count]
                        if run.stderr.count > Self.stderrKept {
                            run.stderr.removeFirst(run.stderr.count - Self.stderrKept)
                        }
                    }
                } else if count == 0 || (errno != EINTR && errno != EAGAIN) {
                    if let index = open.firstIndex(of: entry.fd) { open[index] = -1 }
                }
            }
        }
        process.endLeftovers()
        if run.ending != nil { process.reap() }
        return run
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
