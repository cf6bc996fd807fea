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
                "the store is damaged (\(n) problem\(n == 1 ? "" : "s") found by \(result.checked)); restore a backup (README, Operator's guide)"
            )
        }
    }

    public func backupStore(to path: String) throws {
        try store.backup(to: path)
        printer.record(.object([("backup", .string(path))]), short: "backed up the store to \(path)")
    }
}
