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

    static func run(_ argv: [String], stdout: String? = nil) throws -> Child {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        if let stdout {
            posix_spawn_file_actions_addopen(&actions, 1, stdout, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        }
        var pid: pid_t = 0
        let cArgs = argv.map { strdup($0) } + [nil]
        defer { cArgs.forEach { free($0) } }
        let start = ContinuousClock.now
        let spawned = posix_spawn(&pid, argv[0], &actions, nil, cArgs, environ)
        guard spawned == 0 else { throw BenchError("cannot run \(argv[0]): \(String(cString: strerror(spawned)))") }
        var status: Int32 = 0
        var usage = rusage()
        while wait4(pid, &status, 0, &usage) < 0 && errno == EINTR {}
        let d = ContinuousClock.now - start
        var c = Child()
        c.seconds = Double(d.components.seconds) + Double(d.components.attoseconds) / 1e18
        c.user = Double(usage.ru_utime.tv_sec) + Double(usage.ru_utime.tv_usec) / 1e6
        c.system = Double(usage.ru_stime.tv_sec) + Double(usage.ru_stime.tv_usec) / 1e6
        c.maxRSSBytes = usage.ru_maxrss * 1024
        c.status = (status & 0x7f) == 0 ? (status >> 8) & 0xff : 128 + (status & 0x7f)
        return c
    }

    var fields: [String: Any] {
        [
            "seconds": seconds, "cpu_seconds": user + system, "max_rss_mb": Double(maxRSSBytes) / 1_048_576,
            "exit": Int(status),
        ]
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
