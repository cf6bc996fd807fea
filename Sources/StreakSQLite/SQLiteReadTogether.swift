import Foundation
import GRDB
import StreakStore
import Synchronization

/// `readTogether` on SQLite: several connections at one snapshot. Debian's SQLite has no
/// `sqlite3_snapshot_open`, so the snapshots are checked rather than shared: the last connection
/// notes `PRAGMA data_version` before the others begin and again once it has begun itself. The
/// number moves on whenever another connection commits, so equal numbers mean nothing was
/// committed while they began: every connection sees the same store. Read-only, no lock taken:
/// it works on a read-only file, and never waits for a writer.
extension SQLiteStore {
    /// Tries to line the snapshots up this many times (a commit landed while they began) before
    /// reading on one connection.
    static let togetherTries = 5

    public func readTogether(_ count: Int, _ body: @escaping @Sendable (Int, Int, any StoreReader) throws -> Void)
        throws
    {
        guard count > 1 else { return try read { try body(0, 1, $0) } }
        let connections = [queue] + (try wrap { try together.first(count - 1, path: path, busy: busy) })
        for _ in 0..<Self.togetherTries {
            if try wrap({ try lined(up: connections, body) }) { return }
        }
        try read { try body(0, 1, $0) }
    }

    /// One try: every connection begins its read on a thread of its own and waits; all go on into
    /// `body` when the snapshots are one, else all end their reads. Answers whether they went on.
    private func lined(up connections: [DatabaseQueue], _ body: @escaping @Sendable (Int, Int, any StoreReader) throws -> Void)
        throws -> Bool
    {
        let last = connections.count - 1
        let before = try connections[last].read { try SQLiteAccess(db: $0).dataVersion() }
        let gate = TogetherGate(connections.count)
        func start(_ i: Int) {
            let connection = connections[i]
            Thread.detachNewThread {
                var arrived = false
                let outcome = Result {
                    try connection.read { db in
                        let access = SQLiteAccess(db: db)
                        let version = try access.dataVersion()  // begins the read: its snapshot is taken
                        arrived = true
                        guard gate.arrive(i, version: version) else { return }
                        try body(i, connections.count, access)
                    }
                }
                if !arrived { gate.arriveFailed() }
                gate.end(outcome)
            }
        }
        for i in 0..<last { start(i) }
        gate.waitArrived(last)
        start(last)
        gate.waitArrived(1)
        let lined = !gate.failed && gate.versionOfLast == before
        gate.decide(lined)
        try gate.waitEnded()
        return lined
    }
}

/// The connections `readTogether` reads on besides the store's own, read-only, opened on first
/// use and kept.
final class TogetherConnections: Sendable {
    private let opened = Mutex<[DatabaseQueue]>([])

    /// The first `count`, opening what is missing.
    func first(_ count: Int, path: String, busy: BusyWait) throws -> [DatabaseQueue] {
        try opened.withLock { list in
            while list.count < count {
                list.append(try SQLiteStore.openForReading(path: path, configuration: SQLiteStore.besideConfiguration(busy)))
            }
            return Array(list.prefix(count))
        }
    }
}

/// Where `readTogether`'s threads meet: each says its snapshot has begun, the caller decides
/// whether they go on, and collects how each ended.
final class TogetherGate: Sendable {
    private let state: Mutex<(lastVersion: Int64?, failed: Bool, go: Bool?, error: (any Error)?)>
    private let arrivals = DispatchSemaphore(value: 0)
    private let decided = DispatchSemaphore(value: 0)
    private let endings = DispatchSemaphore(value: 0)
    private let count: Int

    init(_ count: Int) {
        self.count = count
        state = Mutex((nil, false, nil, nil))
    }

    /// Thread `i`'s snapshot has begun (the last one's at data version `version`); answers whether
    /// to go on, once the caller has decided.
    func arrive(_ i: Int, version: Int64) -> Bool {
        if i == count - 1 { state.withLock { $0.lastVersion = version } }
        arrivals.signal()
        decided.wait()
        decided.signal()
        return state.withLock { $0.go! }
    }

    /// A thread that could not begin its read: it counts as arrived, and the caller's decision
    /// is not waited for (its error comes from `waitEnded`).
    func arriveFailed() {
        state.withLock { $0.failed = true }
        arrivals.signal()
    }

    func waitArrived(_ n: Int) { for _ in 0..<n { arrivals.wait() } }

    var failed: Bool { state.withLock { $0.failed } }

    var versionOfLast: Int64? { state.withLock { $0.lastVersion } }

    func decide(_ go: Bool) {
        state.withLock { $0.go = go }
        decided.signal()
    }

    /// A thread is done, with what its read answered; the first error is kept.
    func end(_ outcome: Result<Void, any Error>) {
        state.withLock { s in
            if case .failure(let error) = outcome, s.error == nil { s.error = error }
        }
        endings.signal()
    }

    /// Waits for every thread; rethrows the first error.
    func waitEnded() throws {
        for _ in 0..<count { endings.wait() }
        if let error = state.withLock({ $0.error }) { throw error }
    }
}
