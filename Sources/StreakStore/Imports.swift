import StreakCore

/// Bulk imports: rows stored one at a time inside one write transaction (best opened with
/// `WriteMode.bulkImport`), all or nothing with it.
public protocol Importing {
    /// Starts storing check-ins one at a time in this transaction (`import`); how many are
    /// expected, when known, lets the store prepare for them. `inIndexOrder`: the rows will come
    /// sorted by (user, streak, at), bytes compared, the order SQLite's check-ins table is
    /// clustered in, so each goes at or near its end.
    func checkinImport(storedAt: Instant, expectedRows: Int?, inIndexOrder: Bool) throws -> any CheckinImport
    /// Starts adding or updating users one at a time in this transaction (`user import`).
    func userImport(at: Instant) throws -> any UserImport
}

extension Importing {
    /// Rows in any order.
    public func checkinImport(storedAt: Instant, expectedRows: Int?) throws -> any CheckinImport {
        try checkinImport(storedAt: storedAt, expectedRows: expectedRows, inIndexOrder: false)
    }
}

/// Check-ins stored one at a time inside one write transaction (`import`).
/// Texts are UTF-8 bytes, read during the call only. Use it only inside the
/// `write` that made it.
public protocol CheckinImport: AnyObject {
    /// Stores a check-in, perhaps later (in a batch): one whose (user, event id) is
    /// stored already, or comes earlier in the import, is a no-op.
    func insert(
        user: UnsafeBufferPointer<UInt8>, streak: UnsafeBufferPointer<UInt8>, at: Instant,
        zone: UnsafeBufferPointer<UInt8>, eventID: UnsafeBufferPointer<UInt8>?, meta: String?
    ) throws
    /// After the last insert: stores what waits, and makes every (user, streak) that got a
    /// new check-in due for the next run.
    /// Answers how many check-ins were stored, and how many were no-ops.
    func finish() throws -> InsertResult
}

extension CheckinImport {
    /// Stores a check-in given as strings.
    public func insert(_ c: NewCheckin) throws {
        var (user, streak, zone, eventID) = (c.user, c.streak, c.zone, c.eventID)
        return try user.withUTF8 { u in
            try streak.withUTF8 { s in
                try zone.withUTF8 { z in
                    if eventID == nil {
                        return try insert(user: u, streak: s, at: c.instant, zone: z, eventID: nil, meta: c.meta)
                    }
                    return try eventID!.withUTF8 { e in
                        try insert(user: u, streak: s, at: c.instant, zone: z, eventID: e, meta: c.meta)
                    }
                }
            }
        }
    }
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
