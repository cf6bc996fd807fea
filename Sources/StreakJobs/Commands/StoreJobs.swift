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
        try store.backup(to: path)
        printer.record(
            .object([("backup", .string(path)), ("checked", .bool(check))]),
            short: "backed up the store to \(path)" + (check ? "" : " (not checked: streakd store check --store \(path))"))
    }
}
