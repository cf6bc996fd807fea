import Foundation
import StreakTestKit
import Testing

/// libpq is opened at the first PostgreSQL URL, not when streakd starts (docs/POSTGRES.md): on a
/// machine without it, streakd on SQLite works, and a PostgreSQL store says what to install.
@Suite("libpq opened on demand", .fastTier)
struct LibpqTests {
    /// Runs the built streakd with libpq hidden: /dev/null mounted over libpq.so.5 in a mount
    /// namespace of the test's own.
    func withoutLibpq(_ arguments: [String], env: [String: String]) -> Outcome {
        let script = """
            set -e
            mount --bind /dev/null "$(readlink -f /usr/lib/x86_64-linux-gnu/libpq.so.5)"
            exec "$@"
            """
        return run(
            ["/usr/bin/unshare", "--mount", "--propagation", "private", "/bin/sh", "-c", script, "sh", builtStreakd]
                + arguments, env: env)
    }

    @Test(.requires(.root, .unshare))
    func sqliteRunsAndPostgresSaysWhatToInstall() throws {
        let dir = try ScratchDir()
        let env = ["PATH": searchPath, "LANG": "C.UTF-8", "HOME": dir.path, "STREAKD_NOW": "2026-11-21T11:00:00Z"]
        let store = dir.path + "/s.sqlite"
        let added = withoutLibpq(["--store", store, "user", "add", "ana", "--tz", "Europe/Berlin"], env: env)
        #expect(added.code == 0, "\(added)")
        let checked = withoutLibpq(["--store", store, "checkin", "ana"], env: env)
        #expect(checked.code == 0, "\(checked)")
        let pg = withoutLibpq(["--store", "postgres:///streakd?host=/nonexistent", "status", "ana"], env: env)
        #expect(pg.code == 69, "\(pg)")
        #expect(pg.err.contains("a PostgreSQL store needs libpq, which cannot be loaded ("), "\(pg.err)")
        #expect(pg.err.contains("install it: apt install libpq5"), "\(pg.err)")
    }
}
