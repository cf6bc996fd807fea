import StreakCore

/// Reads that see one consistent snapshot of the store.
public protocol StoreReader {
    func user(_ id: String) throws -> User?
    func users() throws -> [User]
    func zoneHistory(of user: String) throws -> [StoredZoneChange]
    /// The streak ids a user has check-ins or freeze events for, sorted.
    func streaks(of user: String) throws -> [String]
    func checkins(of user: String, streak: String) throws -> [StoredCheckin]
    func freezeEvents(of user: String, streak: String) throws -> [FreezeEvent]
    func settingsEpochs(of streak: String) throws -> [SettingsEpoch]
}

/// Writes inside one transaction: all of them land, or none.
public protocol StoreWriter: StoreReader {
    /// Adds a user; answers false when the id is taken.
    func addUser(_ user: User, at: Instant) throws -> Bool
    /// Replaces a user's settings; a new zone is recorded in the zone history from `at`.
    func updateUser(_ user: User, at: Instant) throws
    /// Deletes a user and everything stored for them; answers false when unknown.
    func removeUser(_ id: String) throws -> Bool
    /// Stores check-ins; one whose (user, event id) is stored already is a no-op.
    func insertCheckins(_ checkins: [NewCheckin], storedAt: Instant) throws -> InsertResult
    func addFreezeEvent(_ event: FreezeEvent, user: String, streak: String) throws
    /// Records the goal and leeway seen for a streak id, when they differ from the last record.
    func recordSettings(_ epoch: SettingsEpoch, streak: String) throws
}

/// A place streakd keeps its data. SQLite now; PostgreSQL later, with the
/// same guarantees: serializable write transactions and unique keys on
/// (user), (user, event id) and, for notifications, their keys.
public protocol Store: Sendable {
    func read<T>(_ body: (any StoreReader) throws -> T) throws -> T
    func write<T>(_ body: (any StoreWriter) throws -> T) throws -> T
}

/// A store that could not be opened or used.
public struct StoreError: Error, CustomStringConvertible, Sendable {
    public var description: String
    public init(_ description: String) { self.description = description }
}
