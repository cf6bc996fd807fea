import Foundation
import StreakTestKit
import Testing

/// Issue 17: an import that fills the disk said only "database or disk is full",
/// not that nothing was stored. Tested for real: the store on a small tmpfs.
@Suite("disk full", .fastTier, .serialized, .enabled(if: !TestStore.postgres, "the faults of a SQLite file"))
struct DiskFullTests {
    /// Mounting a tmpfs needs root (and a sandbox that allows it): the test is skipped, saying
    /// why, where it cannot (a failure when strict).
    static let mountProblem: String? = {
        guard geteuid() == 0 else { return "mounting a tmpfs needs root" }
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("streakd-mount-\(UUID().uuidString)")
        try? FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        guard command("/bin/mount", ["-t", "tmpfs", "-o", "size=1m", "tmpfs", dir.path]) == 0 else {
            return "this sandbox does not allow mounting a tmpfs"
        }
        _ = command("/bin/umount", [dir.path])
        return nil
    }()

    @discardableResult
    static func command(_ path: String, _ args: [String]) -> Int32 {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: path)
        p.arguments = args
        p.standardOutput = FileHandle.nullDevice
        p.standardError = FileHandle.nullDevice
        guard (try? p.run()) != nil else { return -1 }
        p.waitUntilExit()
        return p.terminationStatus
    }

    /// What sqlite3 says of the store: its integrity check, then a query.
    static func sqlite(_ store: String, _ sql: String) -> String {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/usr/bin/sqlite3")
        p.arguments = [store, "PRAGMA integrity_check; \(sql)"]
        let out = Pipe()
        p.standardOutput = out
        guard (try? p.run()) != nil else { return "sqlite3 did not run" }
        let text = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        p.waitUntilExit()
        return text
    }

    /// Fills the file system at `dir` but for `free` bytes.
    static func fill(_ dir: String, leaving free: Int) throws -> String {
        var fs = statvfs()
        guard statvfs(dir, &fs) == 0 else { throw CocoaError(.fileReadUnknown) }
        let available = Int(fs.f_bavail) * Int(fs.f_frsize)
        let filler = dir + "/filler"
        try Data(count: max(0, available - free)).write(to: URL(fileURLWithPath: filler))
        return filler
    }

    @Test(.requires(Prerequisite(missing: mountProblem)))
    func importOnAFullDiskStoresNothingAndSaysSo() throws {
        let s = try Sandbox()
        let mount = s.dir.path + "/small"
        try FileManager.default.createDirectory(atPath: mount, withIntermediateDirectories: true)
        try #require(Self.command("/bin/mount", ["-t", "tmpfs", "-o", "size=8m", "tmpfs", mount]) == 0)
        defer {
            Self.command("/bin/umount", [mount])
            withExtendedLifetime(s) {}  // its folder holds the mount point
        }
        let store = mount + "/s.sqlite"
        func run(_ args: [String]) -> RunResult { s.runBare(args + ["--store", store]) }
        #expect(run(["user", "add", "u1", "--tz", "UTC"]).code == 0)
        let rows = (0..<8000).map { i in
            "u1,2026-11-\(10 + i % 10)T10:\(10 + i / 60 % 50):\(10 + i % 50)Z,e\(i)"
        }
        let checkins = try s.file("c.csv", "user,at,id\n" + rows.joined(separator: "\n") + "\n")
        let users = try s.file(
            "u.jsonl", (0..<20000).map { #"{"user":"user\#($0)","tz":"Europe/Berlin"}"# }.joined(separator: "\n"))

        let filler = try Self.fill(mount, leaving: 300 << 10)
        let full = run(["import", checkins])
        #expect(full.code == 69)
        #expect(full.out == "")
        #expect(
            full.err
                == error(
                    "store \(store): the disk (file system) holding the store is full: nothing was imported, and the store is as it was; free some space there and run the command again"
                ))
        let fullUsers = run(["user", "import", users])
        #expect(fullUsers.code == 69)
        #expect(
            fullUsers.err
                == error(
                    "store \(store): the disk (file system) holding the store is full: no user was added or changed, and the store is as it was; free some space there and run the command again"
                ))
        #expect(Self.sqlite(store, "SELECT count(*) FROM checkins; SELECT count(*) FROM users;") == "ok\n0\n1\n")

        // Room again: the same imports go through, into a sound store.
        try FileManager.default.removeItem(atPath: filler)
        let again = run(["import", checkins, "-o", "json"])
        #expect(again.code == 0, "\(again)")
        #expect(again.out == #"{"imported":8000,"duplicates":0,"skipped":0}"# + "\n")
        #expect(run(["user", "import", users]).code == 0)
        #expect(Self.sqlite(store, "SELECT count(*) FROM checkins; SELECT count(*) FROM users;") == "ok\n8000\n20001\n")
        let status = run(["status", "u1", "-o", "json"])
        #expect(try jsonObject(status.out)["total_checkins"] as? Int == 8000)
    }
}
