import Foundation
import StreakCore
import StreakStore

/// `streakd store check` and `streakd store backup`: the store's own answers (SQLite's
/// integrity_check and online backup; a database server's in its engine).
extension Context {
    /// Prints `ok` and what was looked at, or each problem; exit 74 when there is any.
    public func checkStore() throws {
        let result = try store.check()
        printer.record(
            .object([
                ("ok", .bool(result.ok)), ("checked", .string(result.checked)),
                ("problems", .array(result.problems.map { .string($0) })),
            ]),
            short: result.ok ? "ok: \(result.checked)" : result.problems.joined(separator: "\n"))
        guard result.ok else {
            let n = result.problems.count
            throw StreakdError(
                .damaged,
                "the store \(store.location) is damaged (\(n) problem\(n == 1 ? "" : "s") found by \(result.checked)); restore a backup (README, Operator's guide)"
            )
        }
    }

    /// `store backup`: first the check `store check` makes (unless `check` is false), so a backup
    /// of a damaged store is never a quiet success (issue 31: 39 of 40 damaged stores were copied
    /// with exit 0): a damaged store is 74, with its problems and no copy written.
    public func backupStore(to path: String, check: Bool = true) throws {
        if path == "-" && printer.outIsTerminal {
            throw StreakdError.usage(
                "store backup -: standard output is a terminal, not a place for a SQLite file; pipe it "
                    + "(streakd store backup - | restic backup --stdin --stdin-filename streakd.sqlite) or name a new file"
            )
        }
        if check {
            let result = try store.check()
            guard result.ok else {
                let n = result.problems.count
                for problem in result.problems.prefix(10) { printer.warn(problem) }
                throw StreakdError(
                    .damaged,
                    "the store \(store.location) is damaged (\(n) problem\(n == 1 ? "" : "s") found by "
                        + "\(result.checked)), so no backup was written to \(path); restore an earlier backup "
                        + "(README, Operator's guide), or copy it as it is with store backup --no-check")
            }
        }
        // After the check, as before: a damaged store is 74 whatever the file named.
        var existing = stat()
        if path != "-" && lstat(path, &existing) == 0 {
            throw StreakdError.usage(
                "store backup: \(path) exists already; name a new file (to keep one copy, back up to a new name, then "
                    + "mv it over the old one), or - for standard output")
        }
        if path == "-" { return try backupToStandardOutput() }
        try store.backup(to: path)
        printer.record(
            .object([("backup", .string(path)), ("checked", .bool(check))]),
            short: "backed up the store to \(path)"
                + (check ? "" : " (not checked: streakd store check --store \(path))"))
    }

    /// `store backup -`: the same copy, made in a private folder of its own under `$TMPDIR` (else
    /// /tmp), then written to standard output (for `restic backup --stdin`, a pipe to ssh) and
    /// removed. Nothing else goes to standard output; a write to it that fails is 69. A database
    /// server's store says how pg_dump writes its copy to standard output.
    func backupToStandardOutput() throws {
        let base = ProcessInfo.processInfo.environment["TMPDIR"].flatMap { $0.isEmpty ? nil : $0 } ?? "/tmp"
        var template = Array((base + "/streakd-backup-XXXXXX").utf8CString)
        guard let made = mkdtemp(&template) else {
            throw StreakdError(
                .unavailable,
                "store backup -: cannot make a private folder in \(base) for the copy: \(String(cString: strerror(errno))); "
                    + "set TMPDIR to a folder with room for the store")
        }
        let folder = String(cString: made)
        let copy = folder + "/streakd.sqlite"
        defer {
            unlink(copy)
            rmdir(folder)
        }
        do {
            try store.backup(to: copy)
        } catch let error as StoreError {
            throw StoreError(error.kind, error.description.replacingOccurrences(of: "--file=\(copy) ", with: ""))
        }
        let fd = open(copy, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else {
            throw StreakdError(
                .unavailable, "store backup -: cannot read the copy: \(String(cString: strerror(errno)))")
        }
        defer { close(fd) }
        var buffer = [UInt8](repeating: 0, count: 1 << 16)
        while true {
            let n = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if n < 0 && errno == EINTR { continue }
            guard n >= 0 else {
                throw StreakdError(
                    .unavailable, "store backup -: cannot read the copy: \(String(cString: strerror(errno)))")
            }
            if n == 0 { break }
            var done = 0
            while done < n {
                let w = buffer.withUnsafeBytes { write(STDOUT_FILENO, $0.baseAddress! + done, n - done) }
                if w < 0 && errno == EINTR { continue }
                guard w > 0 else {
                    throw StreakdError(
                        .unavailable,
                        "store backup -: cannot write to standard output: \(String(cString: strerror(errno)))")
                }
                done += w
            }
        }
    }
}
