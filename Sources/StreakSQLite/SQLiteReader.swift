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
        // A reader of a WAL database makes a -shm file beside it when there is none: made by root
        // (`sudo streakd log`), it would stay root's, and the service could not open its store
        // again. With no -wal file, every commit is in the file itself (the last writer
        // checkpointed it when it closed), and `immutable` reads it without any file beside it.
        let name = FileManager.default.fileExists(atPath: path + "-wal") ? path : Self.immutableURI(path)
        do {
            queue = try DatabaseQueue(path: name, configuration: config)
        } catch {
            throw StoreError(.unavailable, "cannot read the store \(path): \(SQLiteStore.reason(error))")
        }
    }

    /// `file:PATH?immutable=1`, with what a URI would take otherwise escaped.
    static func immutableURI(_ path: String) -> String {
        var escaped = ""
        for c in path.unicodeScalars {
            switch c {
            case "%": escaped += "%25"
            case "?": escaped += "%3f"
            case "#": escaped += "%23"
            default: escaped.unicodeScalars.append(c)
            }
        }
        return "file:" + escaped + "?immutable=1"
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
