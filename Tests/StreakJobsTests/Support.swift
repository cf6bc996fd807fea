import Foundation
import StreakCore
import StreakStore

@testable import StreakJobs

/// Lines a job printed, kept for assertions (swift-log's in-memory handler, for output).
final class Captured: @unchecked Sendable {
    private let lock = NSLock()
    private var outLines: [String] = []
    private var errLines: [String] = []
    var out: [String] { lock.withLock { outLines } }
    var err: [String] { lock.withLock { errLines } }
    func addOut(_ s: String) { lock.withLock { outLines.append(s) } }
    func addErr(_ s: String) { lock.withLock { errLines.append(s) } }
}

/// A context over a fresh SQLite file, printing into `captured`.
func makeContext(
    now: String, config: Config = Config(), format: OutputFormat = .json, store: SQLiteStore? = nil
) throws -> (Context, Captured) {
    let captured = Captured()
    let printer = Printer(format: format, out: { captured.addOut($0) }, err: { captured.addErr($0) })
    let s = try store ?? SQLiteStore(path: NSTemporaryDirectory() + "streakd-jobs-\(UUID().uuidString)/s.sqlite")
    let context = Context(store: s, config: config, now: RFC3339.parse(now)!, zones: ZoneBook(), printer: printer)
    return (context, captured)
}

/// The same store and output, at another instant.
func at(_ context: Context, _ now: String) -> Context {
    Context(
        store: context.store, config: context.config, now: RFC3339.parse(now)!, zones: context.zones,
        printer: context.printer)
}

/// Every zone name of the system tzdata that ZoneBook should accept.
func allTzdataZones() -> [String] { ZoneBook().names() }
