import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// Runs a command as a child process (argv, no shell) and measures it: wall seconds from
/// spawn to exit, CPU seconds (user + system) and peak resident memory from `wait4`.
struct Child {
    var seconds = 0.0
    var user = 0.0
    var system = 0.0
    var maxRSSBytes = 0
    var status: Int32 = 0
    /// With `firstLine`: from spawn to the first line break read from its output, and the lines.
    var firstLineSeconds: Double?
    var lines = 0

    /// `firstLine`: standard output goes to a pipe this process reads to the end (as a terminal or
    /// a pager would), noting when the first line arrived; else to the file `stdout`.
    static func run(_ argv: [String], stdout: String? = nil, firstLine: Bool = false) throws -> Child {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        var pipeEnds: [Int32] = [-1, -1]
        if firstLine {
            guard pipe(&pipeEnds) == 0 else { throw BenchError("pipe: \(String(cString: strerror(errno)))") }
            posix_spawn_file_actions_adddup2(&actions, pipeEnds[1], 1)
            posix_spawn_file_actions_addclose(&actions, pipeEnds[0])
            posix_spawn_file_actions_addclose(&actions, pipeEnds[1])
        } else if let stdout {
            posix_spawn_file_actions_addopen(&actions, 1, stdout, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        }
        var pid: pid_t = 0
        let cArgs = argv.map { strdup($0) } + [nil]
        defer { cArgs.forEach { free($0) } }
        let start = ContinuousClock.now
        let spawned = posix_spawn(&pid, argv[0], &actions, nil, cArgs, environ)
        guard spawned == 0 else { throw BenchError("cannot run \(argv[0]): \(String(cString: strerror(spawned)))") }
        var c = Child()
        if firstLine {
            close(pipeEnds[1])
            var buffer = [UInt8](repeating: 0, count: 1 << 16)
            while true {
                let n = buffer.withUnsafeMutableBytes { read(pipeEnds[0], $0.baseAddress, $0.count) }
                if n < 0 && errno == EINTR { continue }
                guard n > 0 else { break }
                // Counted as `wc -l` would, in a loop the compiler vectorizes: the reader shares the
                // machine's cores with what it measures.
                let breaks = buffer.withUnsafeBufferPointer { bytes in
                    var count = 0
                    for i in 0..<n { count &+= bytes[i] == 10 ? 1 : 0 }
                    return count
                }
                if breaks > 0 && c.firstLineSeconds == nil { c.firstLineSeconds = seconds(ContinuousClock.now - start) }
                c.lines += breaks
            }
            close(pipeEnds[0])
        }
        var status: Int32 = 0
        var usage = rusage()
        while wait4(pid, &status, 0, &usage) < 0 && errno == EINTR {}
        let d = ContinuousClock.now - start
        c.seconds = seconds(d)
        c.user = Double(usage.ru_utime.tv_sec) + Double(usage.ru_utime.tv_usec) / 1e6
        c.system = Double(usage.ru_stime.tv_sec) + Double(usage.ru_stime.tv_usec) / 1e6
        c.maxRSSBytes = usage.ru_maxrss * 1024
        c.status = (status & 0x7f) == 0 ? (status >> 8) & 0xff : 128 + (status & 0x7f)
        return c
    }

    var fields: [String: Any] {
        var f: [String: Any] = [
            "seconds": seconds, "cpu_seconds": user + system, "max_rss_mb": Double(maxRSSBytes) / 1_048_576,
            "exit": Int(status),
        ]
        if let firstLineSeconds {
            f["first_line_seconds"] = firstLineSeconds
            f["lines"] = lines
        }
        return f
    }

    static func seconds(_ d: Duration) -> Double {
        Double(d.components.seconds) + Double(d.components.attoseconds) / 1e18
    }
}

struct BenchError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

enum Stores {
    /// A fresh copy of a SQLite store (its WAL checkpointed into it beforehand by the driver),
    /// on disk before the run: the run measured does not compete with the write-back of a
    /// 1.4 GB copy it did not make.
    static func copy(_ from: String, to: String) throws {
        for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: to + suffix) }
        try FileManager.default.copyItem(atPath: from, toPath: to)
        sync()
    }
}
