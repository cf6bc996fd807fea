import Foundation
import StreakPostgres
import StreakSQLite
import StreakStore

/// The engines a store test runs on alike (SPEC §7: same behaviour, same tests): a SQLite file of
/// its own, or a fresh PostgreSQL database on the test kit's cluster.
public enum StoreEngine: String, CaseIterable, CustomStringConvertible, Sendable {
    case sqlite
    case postgres

    public var description: String { rawValue }

    public func open() throws -> any Store {
        switch self {
        case .sqlite: try SQLiteStore(path: TestFiles.path("store") + "/s.sqlite")
        case .postgres: try PostgresStore(url: try TestPostgres.freshDatabase())
        }
    }
}
