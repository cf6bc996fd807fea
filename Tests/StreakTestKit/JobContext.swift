import Foundation
import StreakCore
import StreakJobs
import StreakSQLite
import StreakStore
import Synchronization

/// Lines a job printed, kept for assertions (swift-log's in-memory handler, for output).
public final class Captured: Sendable {
    private let lines = Mutex<(out: [String], err: [String])>(([], []))
    public var out: [String] { lines.withLock { $0.out } }
    public var err: [String] { lines.withLock { $0.err } }
    public func addOut(_ s: String) { lines.withLock { $0.out.append(s) } }
    public func addErr(_ s: String) { lines.withLock { $0.err.append(s) } }
    public init() {}
}

/// A context over a fresh SQLite file (or `store`), printing into `captured`.
public func makeContext(
    now: String, config: Config = Config(), format: OutputFormat = .json, store: (any Store)? = nil
) throws -> (Context, Captured) {
    let captured = Captured()
    let printer = Printer(format: format, out: { captured.addOut($0) }, err: { captured.addErr($0) })
    let s = try store ?? SQLiteStore(path: TestFiles.path("jobs") + "/s.sqlite")
    let context = Context(store: s, config: config, now: RFC3339.parse(now)!, zones: ZoneBook(), printer: printer)
    return (context, captured)
}

/// The same store and output, at another instant.
public func at(_ context: Context, _ now: String) -> Context {
    Context(
        store: context.store, config: context.config, now: RFC3339.parse(now)!, zones: context.zones,
        printer: context.printer)
}

/// Every zone name of the system tzdata that ZoneBook should accept.
public func allTzdataZones() -> [String] { ZoneBook().names() }
