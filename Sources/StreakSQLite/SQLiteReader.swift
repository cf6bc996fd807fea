import Foundation
import GRDB
import StreakCore
import StreakStore

/// A store file opened to read only, for what must never create, migrate or write a store: `log`
/// learning the store's identity, shell completion listing users. It opens nothing that is not
/// there already, and never waits for a writer (a WAL reader sees the last commit).
public final class SQLiteReader: Store {
    public let path: String
    let queue: DatabaseQueue

    public init(path: String) throws {
        self.path = path
        guard FileManager.default.fileExists(atPath: path) else {
            throw StoreError(.unavailable, "no store at \(path)")
        }
        var config = Configuration()
        config.readonly = true
        config.busyMode = .timeout(5)
        do {
            queue = try DatabaseQueue(path: path, configuration: config)
        } catch {
            throw StoreError(.unavailable, "cannot read the store \(path): \(SQLiteStore.reason(error))")
        }
    }

    public func read<T>(_ body: (any StoreReader) throws -> T) throws -> T {
        do {
            return try queue.read { db in try body(SQLiteAccess(db: db)) }
        } catch let error as DatabaseError {
            throw StoreError(.unavailable, "cannot read the store \(path): \(SQLiteStore.reason(error))")
        }
    }

    public func write<T>(_ mode: WriteMode, _ body: (any StoreWriter) throws -> T) throws -> T {
        throw StoreError(.unavailable, "the store \(path) is open for reading only")
    }
}
