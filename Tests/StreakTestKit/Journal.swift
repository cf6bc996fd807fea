import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// The journal as the tests read and write it: a running journald (`JournaldProcess`),
/// journalctl to read it back, and entries sent as streakd's sinks send them.
public enum Journal {
    public static func ensureRunning() throws { try JournaldProcess.ensureRunning() }

    /// What `journalctl --no-pager ARGUMENTS` prints (never through a shell); an error when it fails.
    public static func journalctl(_ arguments: [String]) throws -> String {
        let result = run(["/usr/bin/journalctl", "--no-pager"] + arguments, timeout: .seconds(60))
        guard result.code == 0 else {
            throw JournaldProcess.Unavailable(description: "journalctl \(arguments) exited with \(result.code)")
        }
        return result.out
    }

    /// Asks journald to write out what it has received (pending datagrams are processed first).
    public static func sync() { _ = try? journalctl(["--sync"]) }

    /// journalctl's output for these arguments, read again (journald writes asynchronously) until
    /// `done` accepts it or `timeout` has passed.
    public static func read(
        _ arguments: [String], timeout: Duration = .seconds(20), until done: (String) -> Bool = { !$0.isEmpty }
    ) -> String {
        let deadline = ContinuousClock.now + timeout
        while true {
            sync()
            let text = (try? journalctl(arguments)) ?? ""
            if done(text) || ContinuousClock.now >= deadline { return text }
            usleep(200_000)
        }
    }

    /// The entries matching journalctl `matches`, as JSON objects, read again until there are
    /// `count` of them or `timeout` has passed. Matches of one field are alternatives (journalctl's
    /// OR); keep them narrow: the journal outlives test runs.
    public static func entries(_ matches: [String], count: Int, timeout: Duration = .seconds(20)) throws
        -> [[String: Any]]
    {
        var entries: [[String: Any]] = []
        _ = read(["-o", "json"] + matches, timeout: timeout) { text in
            entries = text.split(separator: "\n").compactMap {
                (try? JSONSerialization.jsonObject(with: Data($0.utf8))) as? [String: Any]
            }
            return entries.count >= count
        }
        return entries
    }

    /// The distinct values of `field` over the entries matching `match`, read again likewise.
    public static func distinctValues(
        of field: String, _ match: String, expected: Int, timeout: Duration = .seconds(60)
    )
        -> Set<Substring>
    {
        var values = Set<Substring>()
        _ = read(["-o", "cat", "--output-fields=\(field)", match], timeout: timeout) { text in
            values = Set(text.split(separator: "\n"))
            return values.count >= expected
        }
        return values
    }

    /// Sends one entry (`NAME=value` fields) as one datagram of journald's native protocol, as
    /// streakd's sinks do; values with line breaks use its length-prefixed form. Answers whether
    /// it was sent.
    @discardableResult
    public static func send(_ fields: [String]) -> Bool {
        var payload: [UInt8] = []
        for field in fields {
            let equals = field.firstIndex(of: "=")!
            let value = Array(field[field.index(after: equals)...].utf8)
            if value.contains(10) {
                payload += Array(field[..<equals].utf8) + [10]
                withUnsafeBytes(of: UInt64(value.count).littleEndian) { payload += $0 }
                payload += value + [10]
            } else {
                payload += Array(field.utf8) + [10]
            }
        }
        return JournaldProcess.withSocket { fd, address in
            sendto(fd, payload, payload.count, 0, address, socklen_t(MemoryLayout<sockaddr_un>.size)) == payload.count
        }
    }
}
