import StreakCore

/// Bulk imports: rows stored a batch at a time inside one write transaction (best opened with
/// `WriteMode.bulkImport`), all or nothing with it.
public protocol Importing {
    /// Starts storing check-ins in this transaction (`import`); how many are expected, when
    /// known, lets the store prepare for them. The rows may come in any order; every store takes
    /// them fastest sorted by (user, streak, at), bytes compared (`compareBytes`), which is
    /// how `import` hands them over.
    func checkinImport(storedAt: Instant, expectedRows: Int?) throws -> any CheckinImport
    /// Starts adding or updating users one at a time in this transaction (`user import`).
    func userImport(at: Instant) throws -> any UserImport
}

/// Check-ins stored a batch at a time inside one write transaction (`import`). Use it only
/// inside the `write` that made it.
public protocol CheckinImport: AnyObject {
    /// Stores the rows, in their order, perhaps later (with the next batch): a row whose
    /// (user, event id) is stored already, or comes earlier in the import, is a no-op.
    func insert(_ rows: CheckinRows) throws
    /// After the last insert: stores what waits, and makes every (user, streak) that got a
    /// new check-in due for the next run.
    /// Answers how many check-ins were stored, and how many were no-ops.
    func finish() throws -> InsertResult
    /// After `finish`: the ids of the users reminded at their usual hour (SPEC §14) among those
    /// this import stored a check-in for, by id (bytes compared), whose hour `import` works out
    /// again. Costs at most a lookup per user of the import, or per usual user, whichever are
    /// fewer: not one per usual user of the store for an import of a few users.
    func usualUsers() throws -> [String]
}

extension CheckinImport {
    /// Stores one check-in given as strings (a batch of one).
    public func insert(_ c: NewCheckin) throws { try insert(CheckinRows([c])) }
}

/// Users added or updated one at a time inside one write transaction (`user import`); each id
/// at most once.
public protocol UserImport: AnyObject {
    /// Adds the user, or updates them as `updateUser` does when the id is taken (perhaps later,
    /// in a batch).
    func put(_ user: User) throws
    /// After the last `put`: stores what waits; answers how many users were added, and how many
    /// were there already (changed or not).
    func finish() throws -> (added: Int, updated: Int)
}
