import Foundation
import GRDB
import StreakStore
import Synchronization

extension SQLiteStore {
    /// Refuses what cannot be a store file before SQLite sees it: SQLite would take `file:…` as a
    /// URI (Debian builds it so), open a device, or create a file where a reader only meant to
    /// look. Answers whether the file exists.
    static func checkPath(_ path: String, _ mode: StoreAccess) throws -> Bool {
        guard !path.isEmpty else {
            throw StoreError(
                .invalid, "the store's path is empty; name a SQLite file, such as /var/lib/streakd/streakd.sqlite")
        }
        if path.hasPrefix("file:") {
            throw StoreError(.invalid, "store \(path): SQLite URIs (file:…) are not taken; name the file by its path")
        }
        var info = stat()
        guard stat(path, &info) == 0 else {
            let error = errno
            if error == ENOENT {
                guard mode == .write else {
                    throw StoreError(
                        .missing,
                        "no store at \(path); it is created by the first command that writes (such as `streakd user add`); check --store"
                    )
                }
                return false
            }
            throw StoreError(.unavailable, "cannot look at the store \(path): \(String(cString: strerror(error)))")
        }
        switch info.st_mode & S_IFMT {
        case S_IFREG: return true
        case S_IFDIR:
            throw StoreError(
                .invalid, "store \(path) is a folder; name the SQLite file in it, such as \(path)/streakd.sqlite")
        default:
            throw StoreError(
                .invalid, "store \(path) is not a regular file (a device, a pipe or a socket); name a SQLite file")
        }
    }

    /// A read-only connection that creates nothing. In WAL mode a reader needs the `-shm` file; in
    /// a folder it may not write, with no `-shm` there, SQLite cannot make one, and the file is then
    /// opened `immutable` (no locks, no `-shm`). That is safe only while no process has the store
    /// open for writing, which a missing `-shm` and an empty `-wal` show: a writer keeps both.
    static func openForReading(path: String, configuration: Configuration) throws -> DatabaseQueue {
        var config = configuration
        config.readonly = true
        do {
            let queue = try DatabaseQueue(path: path, configuration: config)
            try queue.read { db in _ = try Int.fetchOne(db, sql: "SELECT count(*) FROM sqlite_schema") }
            return queue
        } catch let error as DatabaseError
            where error.resultCode == .SQLITE_CANTOPEN || error.resultCode == .SQLITE_READONLY
        {
            let folder = (path as NSString).deletingLastPathComponent
            let shm = path + "-shm"
            let walSize = (try? FileManager.default.attributesOfItem(atPath: path + "-wal")[.size] as? Int) ?? 0
            guard !FileManager.default.fileExists(atPath: shm), walSize == 0 else {
                throw StoreError(
                    .unavailable,
                    "cannot read the store \(path): \(reason(error)); streakd needs to read and write \(shm) beside it (a writer has it open)"
                )
            }
            guard !writable(folder.isEmpty ? "." : folder) || !writable(path) else { throw error }
            return try DatabaseQueue(path: immutableURI(path), configuration: config)
        }
    }

    static func writable(_ path: String) -> Bool { Glibc.access(path, W_OK) == 0 }

    /// The store's folders, those missing made 0700 (less where the umask is stricter): a store
    /// holds every user's check-ins. Under umask 000 they were 0777 (issue 31).
    static func makeFolders(_ folder: String) throws {
        var made = folder.hasPrefix("/") ? "" : "."
        for part in folder.split(separator: "/") {
            made += "/" + part
            if mkdir(made, 0o700) != 0 && errno != EEXIST {
                throw StoreError(
                    errno == ENOSPC ? .full : .unavailable,
                    "cannot create the store's folder \(made): \(String(cString: strerror(errno)))")
            }
        }
    }

    /// The store's file, made empty with mode 0600 (less where the umask is stricter) before
    /// SQLite opens it, which would make it 0644 less the umask, and its `-wal` and `-shm` alike.
    /// One made meanwhile by another process is theirs to have made.
    static func makeFile(_ path: String) throws {
        let fd = open(path, O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0o600)
        if fd >= 0 {
            close(fd)
        } else if errno != EEXIST {
            throw StoreError(
                errno == ENOSPC ? .full : errno == EROFS || errno == EACCES ? .readOnly : .unavailable,
                "cannot create the store \(path): \(String(cString: strerror(errno)))")
        }
    }

    /// `file:/abs/path?immutable=1`, the path percent-encoded where a URI needs it.
    static func immutableURI(_ path: String) -> String {
        let absolute = path.hasPrefix("/") ? path : FileManager.default.currentDirectoryPath + "/" + path
        var allowed = CharacterSet.urlPathAllowed
        allowed.remove(charactersIn: "?#%")
        return "file:" + (absolute.addingPercentEncoding(withAllowedCharacters: allowed) ?? absolute) + "?immutable=1"
    }

    /// A reader may not migrate: a store from an older streakd waits for the next writing command.
    static func requireCurrentSchema(_ queue: DatabaseQueue, path: String) throws {
        let (complete, superseded, empty) = try queue.read { db in
            (
                try Schema.migrator.hasCompletedMigrations(db), try Schema.migrator.hasBeenSuperseded(db),
                try Int.fetchOne(db, sql: "SELECT count(*) FROM sqlite_schema") == 0
            )
        }
        if superseded {
            throw StoreError(
                .newer, "the store \(path) was written by a newer streakd; run that version, or restore a backup")
        }
        if empty {
            throw StoreError(
                .missing,
                "no store at \(path) yet (the file is empty); it is created by the first command that writes (such as `streakd user add`)"
            )
        }
        if !complete {
            throw StoreError(
                .outdated,
                "the store \(path) is from an older streakd; the next command that writes (the next `streakd tick`) upgrades it, then try again"
            )
        }
    }

    /// The store error for a SQLite error, by its result code (SPEC §6: damaged 74, busy 75, ...).
    static func storeError(_ error: DatabaseError, path: String) -> StoreError {
        let kind: StoreError.Kind
        var text = "store \(path): \(reason(error))"
        switch error.resultCode {
        case .SQLITE_BUSY, .SQLITE_LOCKED:
            kind = .busy
            text += " (another process holds it; the next run goes on)"
        case .SQLITE_CORRUPT, .SQLITE_NOTADB:
            kind = .damaged
            text += "; the store is damaged: see `streakd store check` and restore a backup (README, Operator's guide)"
        case .SQLITE_FULL:
            kind = .full
            text += "; what it was writing was not stored: free space on its file system, then run the command again"
        case .SQLITE_IOERR where error.extendedResultCode == .SQLITE_IOERR_SHMSIZE:
            // The -shm file cannot grow: its file system is full (SQLite writes its pages to
            // allocate them, so that a full disk is an error here, not a crash later).
            kind = .full
            text +=
                " (no space for \(path)-shm: the disk is full); what it was writing was not stored: free space on its file system, then run the command again"
        case .SQLITE_READONLY:
            kind = .readOnly
            text += "; this command writes: it needs write access to the file and its folder"
        default:
            kind = .unavailable
        }
        return StoreError(kind, text)
    }

    /// The store error for an error a job let out unwrapped, if it is SQLite's (a damaged page
    /// met on a path that did not wrap its error was exit 1, "SQLite error 11", issue 31): the
    /// command line's last net, so damage is 74 wherever it is met.
    public static func storeError(escaped error: any Error, path: String) -> StoreError? {
        (error as? DatabaseError).map { storeError($0, path: path) }
    }

    static func reason(_ error: any Error) -> String {
        if let e = error as? DatabaseError { return e.message ?? "\(e.resultCode)" }
        return "\(error)"
    }
}

/// How long a connection waits for another process's write lock: up to `limit`, but only a few
/// seconds more once the process is asked to stop (a SIGTERM from systemd wants an exit within a
/// few seconds, SPEC §5). SQLite calls `keepWaiting` with the tries so far for one lock.
final class BusyWait: Sendable {
    let limit: Duration
    let stopping: @Sendable () -> Bool
    static let whenStopping = Duration.seconds(3)
    private let since = Mutex(ContinuousClock.now)

    init(limit: Duration, stopping: @escaping @Sendable () -> Bool) {
        self.limit = limit
        self.stopping = stopping
    }

    func keepWaiting(_ tries: Int) -> Bool {
        let now = ContinuousClock.now
        if tries == 0 { since.withLock { $0 = now } }
        let waited = now - since.withLock { $0 }
        guard waited < (stopping() ? min(limit, Self.whenStopping) : limit) else { return false }
        // SQLite's own steps (1, 2, 5, 10, … ms), then 25 ms.
        let steps: [UInt32] = [1, 2, 5, 10, 15, 20]
        usleep(1000 * (tries < steps.count ? steps[tries] : 25))
        return true
    }

    var mode: Database.BusyMode { .callback { [self] in keepWaiting($0) } }
}
