import Foundation
import StreakTestKit
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// The defects an operator found running streakd from timers (issue 34, "Defects to fix"); each
/// test failed before its fix.
@Suite(.fastTier) struct OperatorDefectTests {
    /// `store backup -` trapped (SIGILL, exit 132): it writes the copy to standard output, for
    /// `restic backup --stdin`, and nothing else there; a PostgreSQL store says how pg_dump does.
    @Test func backupToStandardOutputIsTheStore() throws {
        let s = try Sandbox()
        s.addUser()
        let copy = s.dir.appendingPathComponent("piped.sqlite").path
        let r = StreakTestKit.run(
            ["/bin/sh", "-c", "exec \"$0\" store backup - --store \"$1\" >\"$2\"", streakdBinary, s.store, copy],
            env: s.environment.merging(["PATH": "/usr/bin:/bin"]) { $1 })
        if TestStore.postgres {
            #expect(r.code == 64 && r.err.contains("pg_dump --format=custom '"), "\(r)")
            #expect(!r.err.contains("--file="), "\(r)")
            return
        }
        #expect(r.code == 0 && r.err.isEmpty, "\(r)")
        let header = try #require(FileManager.default.contents(atPath: copy)).prefix(16)
        #expect(header == Data("SQLite format 3\u{0}".utf8))
        let listed = streakd(["user", "list", "--store", copy], env: s.environment)
        #expect(listed.code == 0 && listed.out.contains("u1"), "\(listed)")
        // Nothing is left behind in TMPDIR.
        let tmp = s.dir.appendingPathComponent("tmp").path
        try FileManager.default.createDirectory(atPath: tmp, withIntermediateDirectories: true)
        let again = StreakTestKit.run(
            ["/bin/sh", "-c", "exec \"$0\" store backup - --store \"$1\" >/dev/null", streakdBinary, s.store],
            env: s.environment.merging(["PATH": "/usr/bin:/bin", "TMPDIR": tmp]) { $1 })
        #expect(again.code == 0, "\(again)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: tmp).isEmpty)
    }

    /// On a terminal, `store backup -` is refused (64): a SQLite file is no text for a screen.
    @Test func backupToATerminalIsRefused() throws {
        let s = try Sandbox()
        s.addUser()
        let r = StreakTestKit.run(
            [
                "/usr/bin/script", "-qec",
                "'\(streakdBinary)' store backup - --store '\(s.store)'; echo \"exit=$?\"", "/dev/null",
            ], env: s.environment.merging(["PATH": "/usr/bin:/bin", "TERM": "xterm"]) { $1 })
        #expect(r.out.contains("exit=64") && r.out.contains("restic backup --stdin"), "\(r)")
    }

    /// streakd.toml(5) and the example said a bare program name is looked up in PATH, which
    /// `config check` refuses (78): SPEC §5 says an absolute path, and the docs now say so.
    @Test func aHookIsAnAbsolutePathInTheDocsAsInConfigCheck() throws {
        let s = try Sandbox()
        let config = try s.file("c.toml", "[[hooks]]\nname = \"n\"\ncommand = [\"notify-send\"]\n")
        let r = s.runBare(["config", "check", "--config", config])
        #expect(r.code == 78 && r.err.contains("is not an absolute path"), "\(r)")
        for doc in ["deploy/streakd.toml.example", "deploy/streakd.toml.5"] {
            let text = try String(contentsOfFile: packageRoot + "/" + doc, encoding: .utf8)
            #expect(!text.contains("looked up in PATH") || text.contains("nothing is"), "\(doc)")
            #expect(!text.lowercased().contains("a bare program name is looked up"), "\(doc)")
        }
    }

    /// A command that changes what a store holds makes no store at a mistyped path: 66, as a
    /// read (`deliveries retry` made an empty store and said "0 dead deliveries are pending
    /// again"); one that adds (`user add`) still makes it.
    @Test(.enabled(if: !TestStore.postgres)) func aChangeMakesNoStoreAtAMistypedPath() throws {
        let s = try Sandbox()
        let typo = s.dir.appendingPathComponent("typo/streakd.sqlite").path
        for args in [
            ["deliveries", "retry"], ["checkin", "ana"], ["user", "remove", "ana"], ["token", "remove", "app"],
            ["freeze", "add", "ana"], ["repair", "ana"],
        ] {
            let r = s.runBare(args + ["--store", typo])
            #expect(r.code == 66 && r.err.contains("no store at \(typo)"), "\(args): \(r)")
        }
        #expect(!FileManager.default.fileExists(atPath: s.dir.appendingPathComponent("typo").path))
        #expect(s.runBare(["user", "add", "ana", "--tz", "UTC", "--store", typo]).code == 0)
    }

    /// `config check` passed `[desktop] users` naming a user the store does not have (78 now,
    /// naming the line); without a store yet it says it could not look.
    @Test func desktopUsersMustBeTheStoresUsers() throws {
        let s = try Sandbox()
        let config = try s.file("c.toml", "[desktop]\nusers = [\"u1\", \"ghost\"]\n")
        if !TestStore.postgres {
            let early = s.run(["config", "check", "--config", config])
            #expect(early.code == 0 && early.err.contains("not checked"), "\(early)")
            #expect(!FileManager.default.fileExists(atPath: s.store), "config check made a store")
        }
        s.addUser("u1")
        let r = s.run(["config", "check", "--config", config])
        #expect(r.code == 78, "\(r)")
        #expect(r.err.contains("c.toml:2: desktop.users: \"ghost\" is not a user of the store"), "\(r)")
        #expect(!r.err.contains("\"u1\""), "\(r)")
        s.addUser("ghost")
        #expect(s.run(["config", "check", "--config", config]).code == 0)
    }

    /// A hook entry with several errors reported only the first.
    @Test func everyErrorOfAHookEntryIsReported() throws {
        let s = try Sandbox()
        let config = try s.file(
            "c.toml",
            "[[hooks]]\nname = \"Bad Name\"\ncommand = [\"notify-send\"]\ntimeout_seconds = 0\nkinds = [\"atrisk\"]\n")
        let r = s.runBare(["config", "check", "--config", config])
        #expect(r.code == 78, "\(r)")
        for part in [
            "c.toml:2: hooks[1].name:", "c.toml:3: hooks[1].command:", "c.toml:4: hooks[1].timeout_seconds:",
            "c.toml:5: hooks[1].kinds:", "4 problems in",
        ] {
            #expect(r.err.contains(part), "\(part): \(r.err)")
        }
    }

    /// `--now ''` ran as if no --now were given (exit 0): an explicit empty value is a usage error;
    /// an empty STREAKD_NOW still counts as unset.
    @Test func anEmptyNowIsAUsageError() throws {
        let s = try Sandbox()
        s.addUser()
        for args in [["status", "u1", "--now", ""], ["status", "u1", "--now="], ["--now", "", "status", "u1"]] {
            let r = s.run(args)
            #expect(r.code == 64 && r.err.contains("--now"), "\(args): \(r)")
        }
        #expect(s.run(["status", "u1"], env: ["STREAKD_NOW": ""]).code == 0)
    }

    /// A new store file is 0600 in folders made 0700, under the usual umask too (issue 31 fixed
    /// it for umask 000; the operator's report was a 0644 file in a 0755 folder).
    @Test(.enabled(if: !TestStore.postgres)) func aNewStoreIsPrivate() throws {
        let s = try Sandbox()
        let top = s.dir.appendingPathComponent("state").path
        let r = StreakTestKit.run(
            ["/bin/sh", "-c", "umask 022; exec \"$0\" user add u1 --tz UTC", streakdBinary],
            env: s.environment.merging(["PATH": "/usr/bin:/bin", "XDG_STATE_HOME": top]) { $1 })
        #expect(r.code == 0, "\(r)")
        var info = stat()
        #expect(stat(top + "/streakd", &info) == 0 && info.st_mode & 0o777 == 0o700)
        #expect(stat(top + "/streakd/streakd.sqlite", &info) == 0 && info.st_mode & 0o777 == 0o600)
        // A folder that is there already keeps its mode; the file is still 0600.
        let shared = s.dir.appendingPathComponent("shared").path
        try FileManager.default.createDirectory(atPath: shared, withIntermediateDirectories: true)
        chmod(shared, 0o755)
        let named = StreakTestKit.run(
            [
                "/bin/sh", "-c", "umask 022; exec \"$0\" user add u1 --tz UTC --store \"$1\"", streakdBinary,
                shared + "/s.sqlite",
            ],
            env: s.environment.merging(["PATH": "/usr/bin:/bin"]) { $1 })
        #expect(named.code == 0, "\(named)")
        #expect(stat(shared + "/s.sqlite", &info) == 0 && info.st_mode & 0o777 == 0o600)
    }
}
