import Foundation
import StreakTestKit
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// Issue 17, items 3–6: a damaged store, a store another process holds, a read-only store, and a
/// store named by mistake, as the built binary meets them.
@Suite(
    "damaged, locked, read-only and mistyped stores", .fastTier,
    .enabled(if: !TestStore.postgres, "the faults of a SQLite file"))
struct StoreFaultTests {
    /// The commands that only read (SPEC §6), with what each needs.
    static let readCommands: [[String]] = [
        ["status", "u1"], ["calendar", "u1"], ["preview"], ["user", "list"], ["tick", "--dry-run"],
        ["refill", "--dry-run"], ["store", "check"],
    ]

    /// A store with u1 and a week of check-ins.
    func stocked() throws -> Sandbox {
        let s = try Sandbox()
        s.addUser("u1")
        try s.importLines(sevenDays)
        return s
    }

    @Test func aDamagedStoreIsDamagedForEveryCommand() throws {
        let s = try stocked()
        for side in ["-wal", "-shm"] { try? FileManager.default.removeItem(atPath: s.store + side) }
        let bytes = try #require(FileManager.default.contents(atPath: s.store))
        // Every page but the first (the schema's) overwritten, as by a bad disk or a stray write.
        try Data(bytes.prefix(4096) + Data(repeating: 0xA5, count: bytes.count - 4096)).write(
            to: URL(fileURLWithPath: s.store))
        for args in [
            ["tick"], ["status", "u1"], ["checkin", "u1"], ["user", "list"], ["store", "check"], ["refill"],
        ] {
            let r = s.run(args)
            #expect(r.code == 74, "\(args): \(r)")
            #expect(r.err.contains("damaged"), "\(args): \(r.err)")
        }
        // The header too: not a database any more.
        try Data(repeating: 0xA5, count: bytes.count).write(to: URL(fileURLWithPath: s.store))
        #expect(s.run(["status", "u1"]).code == 74)
        #expect(s.run(["tick"]).code == 74)
    }

    @Test func storeCheckSaysOkAndBackupMakesARestorableCopy() throws {
        let s = try stocked()
        let check = s.run(["store", "check"])
        #expect(check.code == 0 && check.out.hasPrefix("ok: integrity_check and foreign_key_check of "), "\(check)")
        let copy = s.dir.appendingPathComponent("backup.sqlite").path
        let backup = s.run(["store", "backup", copy])
        #expect(backup.code == 0 && backup.out == "backed up the store to \(copy)\n", "\(backup)")
        #expect(s.run(["store", "backup", copy]).code == 64, "an existing file is never overwritten")
        // The restore of the README: the copy in place of the store (no -wal of the old one beside it).
        try FileManager.default.removeItem(atPath: s.store)
        for side in ["-wal", "-shm"] { try? FileManager.default.removeItem(atPath: s.store + side) }
        try FileManager.default.copyItem(atPath: copy, toPath: s.store)
        #expect(s.run(["store", "check"]).code == 0)
        #expect(try s.statusObject()["total_checkins"] as? Int == 7)
    }

    /// Issue 31, item 5: a backup into a shared folder (sticky, world-writable) wrote a predictable
    /// `FILE.partial-PID` without O_EXCL; another user who made those names first got the backup
    /// (their owner, mode 0666). Now the copy is made in a private folder of a random name, with the
    /// store's mode whatever the umask.
    @Test(.requires(.root))
    func aBackupInASharedFolderIsNobodyElsesAndHasTheStoresMode() throws {
        let s = try stocked()
        chmod(s.dir.path, 0o755)
        chmod(s.store, 0o600)
        let shared = s.dir.appendingPathComponent("shared").path
        try FileManager.default.createDirectory(atPath: shared, withIntermediateDirectories: true)
        chmod(shared, 0o1777)
        let file = shared + "/backup.sqlite"
        // Another user makes FILE.partial-PID for the next few hundred process ids, readable and
        // writable by all.
        let last =
            Int(
                (try String(contentsOfFile: "/proc/sys/kernel/ns_last_pid", encoding: .utf8))
                    .trimmingCharacters(in: .whitespacesAndNewlines)) ?? 0
        let trap = run(
            [
                "/usr/bin/setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups", "/bin/sh", "-c",
                "umask 0; for i in $(seq \(last + 1) \(last + 400)); do : > '\(file).partial-'$i; done",
            ], env: ["PATH": "/usr/bin:/bin"])
        try #require(trap.code == 0, "\(trap)")
        let r = run(
            [
                "/bin/sh", "-c", "umask 0; exec \"$0\" \"$@\"", builtStreakd, "store", "backup", file, "--store",
                s.store,
            ],
            env: s.environment.merging(["PATH": "/usr/bin:/bin"]) { $1 })
        #expect(r.code == 0, "\(r)")
        var info = stat()
        try #require(stat(file, &info) == 0)
        #expect(info.st_uid == 0, "the backup belongs to uid \(info.st_uid)")
        #expect(info.st_mode & 0o777 == 0o600, "mode \(String(info.st_mode & 0o777, radix: 8))")
        let left = try FileManager.default.contentsOfDirectory(atPath: shared)
        #expect(
            left.filter { !$0.contains(".partial-") } == ["backup.sqlite"],
            "\(left.filter { !$0.contains(".partial-") })")
        for name in left where name.contains(".partial-") {
            #expect((try FileManager.default.attributesOfItem(atPath: shared + "/" + name)[.size] as? Int) == 0)
        }
        #expect(s.runBare(["store", "check", "--store", file]).code == 0)
    }

    /// Issue 31, item 13: under umask 000 the store's folders were made 0777 (and the file 0666):
    /// a store holds every user's check-ins. Folders 0700, the file and its companions 0600, less
    /// where the umask is stricter.
    @Test func aNewStoresFoldersAndFileArePrivateWhateverTheUmask() throws {
        let s = try Sandbox()
        for (umask, folderMode, fileMode) in [
            ("000", 0o700, 0o600), ("022", 0o700, 0o600), ("077", 0o700, 0o600), ("007", 0o700, 0o600),
        ] {
            let top = s.dir.appendingPathComponent("u\(umask)").path
            let store = top + "/state/streakd/s.sqlite"
            let r = run(
                [
                    "/bin/sh", "-c", "umask \(umask); exec \"$0\" \"$@\"", builtStreakd, "user", "add", "u1", "--tz",
                    "UTC", "--store", store,
                ],
                env: s.environment.merging(["PATH": "/usr/bin:/bin"]) { $1 })
            #expect(r.code == 0, "umask \(umask): \(r)")
            func mode(_ path: String) -> Int {
                var info = stat()
                return stat(path, &info) == 0 ? Int(info.st_mode & 0o777) : -1
            }
            for folder in [top, top + "/state", top + "/state/streakd"] {
                #expect(mode(folder) == folderMode, "umask \(umask): \(folder) is \(String(mode(folder), radix: 8))")
            }
            for file in [store, store + "-wal", store + "-shm"] where FileManager.default.fileExists(atPath: file) {
                #expect(mode(file) == fileMode, "umask \(umask): \(file) is \(String(mode(file), radix: 8))")
            }
        }
    }

    /// Issue 31, item 13: libpq's keyword/value form was taken for a SQLite path, and the error
    /// echoed it, password and all. It is refused (64), never echoed.
    @Test func aKeywordValueConninfoIsRefusedWithoutItsPassword() throws {
        let s = try Sandbox()
        for value in [
            "host=/run/postgresql dbname=streakd password=hunter2", "dbname=streakd user=x password=hunter2",
            " password=hunter2 host=db",
        ] {
            for args in [["user", "list"], ["tick"], ["log"]] {
                let r = s.runBare(args + ["--store", value])
                #expect(r.code == 64, "\(args) \(value): \(r)")
                #expect(!r.err.contains("hunter2") && !r.out.contains("hunter2"), "\(args): \(r.err)")
                #expect(r.err.contains("keyword/value"), "\(r.err)")
            }
            let env = s.runBare(["user", "list"], env: ["STREAKD_STORE": value])
            #expect(env.code == 64 && !env.err.contains("hunter2"), "\(env)")
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: s.dir.path).isEmpty)
    }

    @Test func readersNeverWaitForAWriterAndWritersGiveUpAsBusy() throws {
        let s = try stocked()
        let holder = try LockHolder(store: s.store)
        defer { holder.release() }
        // Writers wait the store's 30 s, then give up: temporary (75), never "unavailable" (69).
        let start = ContinuousClock.now
        let writers = try [["checkin", "u1"], ["tick"]].map { try s.spawn($0) }
        for args in Self.readCommands {
            let t = ContinuousClock.now
            let r = s.run(args)
            #expect(r.code == 0, "\(args) with the write lock held: \(r)")
            #expect(ContinuousClock.now - t < .seconds(5), "\(args) waited for the writer")
        }
        for w in writers {
            let r = w.wait()
            #expect(r.code == 75 && r.err.contains("database is locked"), "\(r)")
        }
        #expect(ContinuousClock.now - start >= .seconds(29))
    }

    @Test(.requires(.root))
    func readCommandsWorkOnAReadOnlyStoreAndFolder() throws {
        let s = try stocked()
        let mount = try s.tmpfs("ro", size: "8m")
        defer { _ = run(["/bin/umount", "-l", mount]) }
        let store = mount + "/s.sqlite"
        try FileManager.default.copyItem(atPath: s.store, toPath: store)
        try #require(run(["/bin/mount", "-o", "remount,ro", mount]).code == 0)
        for args in Self.readCommands {
            let r = s.runBare(args + ["--store", store])
            #expect(r.code == 0, "\(args) on a read-only store: \(r)")
        }
        let write = s.runBare(["checkin", "u1", "--store", store])
        #expect(write.code == 69 && write.err.contains("read-only"), "\(write)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: mount) == ["s.sqlite"])
    }

    @Test(.requires(.root))
    func readCommandsWorkOnAStoreTheUserMayOnlyRead() throws {
        let s = try stocked()
        // The sandbox folder is root's (0755) and the file 0644: nobody may read, not write.
        // (A new store is 0600, issue 31: an admin shares it for reading on purpose.)
        chmod(s.dir.path, 0o755)
        for name in ["", "-wal", "-shm"] { chmod(s.store + name, 0o644) }
        for args in Self.readCommands {
            let r = run(
                ["/usr/bin/setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups", builtStreakd]
                    + args + ["--store", s.store],
                env: s.environment.merging(["PATH": "/usr/bin:/bin"]) { $1 })
            #expect(r.code == 0, "\(args) as nobody: \(r)")
        }
    }

    @Test func readCommandsNeverCreateAStoreOrItsFolders() throws {
        let s = try Sandbox()
        let missing = s.dir.appendingPathComponent("no/such/dir/s.sqlite").path
        for args in Self.readCommands {
            let r = s.runBare(args + ["--store", missing])
            #expect(r.code == 66 && r.err.contains("no store at \(missing)"), "\(args): \(r)")
        }
        #expect(s.runBare(["config", "check", "--store", missing]).code == 0)
        #expect(!FileManager.default.fileExists(atPath: s.dir.appendingPathComponent("no").path))
        // The default store too.
        #expect(s.runBare(["status", "u1"]).code == 66)
        #expect(try FileManager.default.contentsOfDirectory(atPath: s.dir.path).isEmpty)
    }

    @Test func whatIsNotAStoreFileIsAUsageError() throws {
        let s = try Sandbox()
        let uri = "file:" + s.dir.appendingPathComponent("u/s.sqlite").path
        for store in ["", "/dev/null", s.dir.path, uri, "sqlite://"] {
            for args in [["user", "list"], ["user", "add", "u1", "--tz", "UTC"]] {
                let r = s.runBare(args + ["--store", store])
                #expect(r.code == 64, "\(args) --store \"\(store)\": \(r)")
            }
        }
        #expect(!FileManager.default.fileExists(atPath: "/dev/null-journal"))
        #expect(!FileManager.default.fileExists(atPath: "/dev/null-wal"))
        #expect(try FileManager.default.contentsOfDirectory(atPath: s.dir.path).isEmpty)
        #expect(!FileManager.default.fileExists(atPath: FileManager.default.currentDirectoryPath + "/file:"))
    }
}

struct Failure: Error, CustomStringConvertible {
    var description: String
}

/// Another process (sqlite3) holding the store's write lock until `release`.
final class LockHolder {
    let process = Process()
    let input = Pipe()
    let output = Pipe()

    init(store: String) throws {
        process.executableURL = URL(fileURLWithPath: "/usr/bin/sqlite3")
        process.arguments = [store]
        process.standardInput = input
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        input.fileHandleForWriting.write(
            Data("BEGIN IMMEDIATE;\nINSERT INTO meta (key, value) VALUES ('held', '1');\nSELECT 'locked';\n".utf8))
        var seen = Data()
        // A sqlite3 that has not said "locked" within 20 s is killed: its output then ends.
        let pid = process.processIdentifier
        let watchdog = DispatchWorkItem { kill(pid, SIGKILL) }
        DispatchQueue.global().asyncAfter(deadline: .now() + 20, execute: watchdog)
        defer { watchdog.cancel() }
        while !String(decoding: seen, as: UTF8.self).contains("locked") {
            let chunk = output.fileHandleForReading.availableData
            if chunk.isEmpty {
                throw Failure(description: "sqlite3 ended (or was killed after 20 s) before it held the lock")
            }
            seen += chunk
        }
    }

    /// Ends sqlite3 (its transaction rolls back).
    func release() {
        try? input.fileHandleForWriting.close()
        process.waitUntilExit()
    }
}
