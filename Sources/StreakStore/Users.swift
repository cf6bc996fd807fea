import StreakCore

/// Users, one per id (a unique key).
public protocol UserReading {
    func user(_ id: String) throws -> User?
    /// Every user, by id.
    func users() throws -> [User]
    /// Every user's id and current zone, a batch at a time (bulk imports check each row against
    /// them, in the transaction that stores the rows).
    func userZones(_ body: (UserZones) throws -> Void) throws
    /// The ids of the users reminded at their usual hour (SPEC §14), by id (a tick that finds the
    /// bounds changed). Read through an index of those users alone: a store where few are costs
    /// a few lookups.
    func usualUsers() throws -> [String]
}

/// Adding, changing and removing users. A change that decides notices (zone, reminder time or
/// its being the usual hour, reminders on or off) moves the version of each of the user's streaks on, in the same
/// transaction (see `ScheduleWriting`).
public protocol UserWriting {
    /// Adds a user; answers false when the id is taken.
    func addUser(_ user: User, at: Instant) throws -> Bool
    /// Replaces a user's settings; a new zone is recorded in the zone history from `at`.
    func updateUser(_ user: User, at: Instant) throws
    /// Deletes a user and everything stored for them, in one transaction; answers false when unknown.
    func removeUser(_ id: String) throws -> Bool
    /// Keeps every other writer that locks the same user off until this transaction ends, so that
    /// what it reads next (their usual hour's history) includes what those wrote: two check-ins of
    /// one usual user at once work the hour out one after the other. A store whose write
    /// transactions exclude each other already does nothing more.
    func lockUser(_ id: String) throws
    /// These users as stored (those that are), each locked as `lockUser` locks it, in id order:
    /// two writers that lock users so, each several, wait for each other rather than deadlock.
    func lockUsers(_ ids: [String]) throws -> [User]
}
