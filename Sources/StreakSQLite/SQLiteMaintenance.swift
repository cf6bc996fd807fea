import Foundation
import GRDB
import StreakStore

/// `store check` and `store backup` for a SQLite file.
extension SQLiteStore {
    /// `PRAGMA integrity_check` (every page, index and constraint) and `PRAGMA foreign_key_check`
    /// (some writes skip SQLite's reference checks: the caller checked), in one read transaction.
    public func check() throws -> StoreCheck {
        try wrap {
            try queue.read { db in
                var problems = try String.fetchAll(db, sql: "PRAGMA integrity_check(100)").filter { $0 != "ok" }
                for row in try Row.fetchAll(db, sql: "PRAGMA foreign_key_check") {
                    let table: String = row[0]
                    let rowid: Int64? = row[1]
                    let parent: String = row[2]
                    problems.append(
                        "\(table) row \(rowid.map(String.init) ?? "?") refers to a missing row of \(parent)")
                    if problems.count >= 100 { break }
                }
                // Only on pages SQLite found whole: a damaged one would throw instead of answering.
                if problems.isEmpty {
                    problems += try SQLiteAccess(db: db).packedCopyProblems(limit: 100)
                }
                let tables = try Int.fetchOne(db, sql: "SELECT count(*) FROM sqlite_schema WHERE type = 'table'") ?? 0
                let pages = try Int.fetchOne(db, sql: "PRAGMA page_count") ?? 0
                return StoreCheck(
                    problems: problems,
                    checked:
                        "integrity_check and foreign_key_check of \(tables) tables, \(pages) pages, "
                        + "and the packed histories")
            }
        }
    }

    /// SQLite's online backup into a new file beside `path`, made self-contained (not WAL, so no
    /// `-wal` file goes with it), given the store's mode and synced, then linked to `path`: `path`
    /// is never a half-made copy, and `link` refuses a file that appeared meanwhile. The copy is
    /// one read transaction: a snapshot as of its start, while ticks go on writing.
    ///
    /// The copy is made in a folder of its own beside `path` (`mkdtemp`: a random name, created
    /// exclusively, mode 0700), so in a shared folder nobody else can have made or open the file
    /// the copy goes into (a predictable `FILE.partial-PID` was theirs if they made it first, their
    /// owner and mode with it, issue 31). Its mode is the store's, never the umask's.
    public func backup(to path: String) throws {
        guard !path.isEmpty else { throw StoreError(.invalid, "backup: the file name is empty") }
        var existing = stat()
        if lstat(path, &existing) == 0 {
            throw StoreError(
                .invalid,
                "backup: \(path) exists already; name a new file (to keep one copy, back up to a new name, then mv it over the old one)"
            )
        }
        let folder = (path as NSString).deletingLastPathComponent
        var isFolder: ObjCBool = false
        guard FileManager.default.fileExists(atPath: folder.isEmpty ? "." : folder, isDirectory: &isFolder),
            isFolder.boolValue
        else { throw StoreError(.unavailable, "backup: no folder \(folder) to write \(path) in") }
        var store = stat()
        guard stat(self.path, &store) == 0 else {
            throw StoreError(.unavailable, "backup: cannot look at the store \(self.path): \(String(cString: strerror(errno)))")
        }
        let mode = store.st_mode & 0o777
        var template = Array(((folder.isEmpty ? "." : folder) + "/.streakd-backup-XXXXXX").utf8CString)
        guard let made = mkdtemp(&template) else {
            let reason = String(cString: strerror(errno))
            throw StoreError(
                errno == ENOSPC ? .full : .unavailable, "backup: cannot make a private folder beside \(path): \(reason)")
        }
        let privateFolder = String(cString: made)
        let partial = privateFolder + "/copy.sqlite"
        defer {
            for name in ["", "-journal", "-wal", "-shm"] { unlink(partial + name) }
            rmdir(privateFolder)
        }
        do {
            try {
                let copy = try DatabaseQueue(path: partial)
                try queue.backup(to: copy)
                try copy.writeWithoutTransaction { db in try db.execute(sql: "PRAGMA journal_mode = DELETE") }
                try copy.close()
            }()
        } catch let error as DatabaseError {
            // A full disk is the copy's; other errors are the store's (a damaged page, a lock).
            if error.resultCode == .SQLITE_FULL || error.resultCode == .SQLITE_IOERR {
                throw StoreError(.full, "backup: cannot write \(path): \(Self.reason(error)); the store is unchanged")
            }
            throw Self.storeError(error, path: self.path)
        }
        guard chmod(partial, mode) == 0 else {
            throw StoreError(.unavailable, "backup: cannot set the copy's mode: \(String(cString: strerror(errno)))")
        }
        try Self.sync(partial)
        guard link(partial, path) == 0 else {
            throw StoreError(.unavailable, "backup: cannot create \(path): \(String(cString: strerror(errno)))")
        }
        try? Self.sync(folder.isEmpty ? "." : folder)
    }

    /// fsync of a file or folder.
    static func sync(_ path: String) throws {
        let fd = open(path, O_RDONLY)
        guard fd >= 0, fsync(fd) == 0 else {
            let reason = String(cString: strerror(errno))
            if fd >= 0 { close(fd) }
            throw StoreError(.unavailable, "backup: cannot sync \(path): \(reason)")
        }
        close(fd)
    }
}

/// The write-ahead log's checkpoints around a run of many commits (`Store.holdUpkeep`, `upkeep`;
/// docs/ARCHITECTURE.md, "Checkpoints beside the lanes").
extension SQLiteStore {
    /// SQLite's automatic checkpoint, in the connection whose commit leaves this many pages or
    /// more in the log (SQLite's default), off on the store's connection while `hold`.
    static let autocheckpoint = 1000

    public func holdUpkeep(_ hold: Bool) throws {
        guard access == .write else { return }
        try wrap {
            try queue.writeWithoutTransaction { db in
                try db.execute(sql: "PRAGMA wal_autocheckpoint = \(hold ? 0 : Self.autocheckpoint)")
            }
        }
    }

    /// A passive checkpoint on a connection of its own: copies into the file what the log holds,
    /// as far as no reader still needs older pages, without the write lock, so the store's own
    /// connection goes on committing meanwhile. What is committed after it waits for the next
    /// checkpoint (the first commit after `holdUpkeep(false)` that finds the log long).
    public func upkeep() throws {
        guard access == .write else { return }
        var config = Configuration()
        config.busyMode = busy.mode
        config.prepareDatabase { db in try db.execute(sql: "PRAGMA synchronous = NORMAL") }
        try wrap {
            let connection = try DatabaseQueue(path: path, configuration: config)
            try connection.writeWithoutTransaction { db in
                _ = try Row.fetchOne(db, sql: "PRAGMA wal_checkpoint(PASSIVE)")
            }
        }
    }
}
