import Foundation
import StreakTestKit

#if canImport(Glibc)
    import Glibc
#endif

/// A journald to write to and journalctl to read it back. PID 1 is not systemd on the test
/// machines: when nothing answers on the socket, a systemd-journald is started and left running
/// (as Tests/StreakDeliveryTests does).
enum Journal {
    static func ensureRunning() throws { try JournaldProcess.ensureRunning() }

    /// journalctl's output for these arguments, retried (journald writes asynchronously) until
    /// `done` accepts it or `timeout` has passed.
    static func read(
        _ arguments: [String], timeout: Duration = .seconds(20), until done: (String) -> Bool = { !$0.isEmpty }
    ) -> String {
        let deadline = ContinuousClock.now + timeout
        while true {
            _ = run(["/usr/bin/journalctl", "--sync"], timeout: .seconds(30))
            let result = run(["/usr/bin/journalctl", "--no-pager"] + arguments, timeout: .seconds(60))
            if done(result.out) || ContinuousClock.now >= deadline { return result.out }
            usleep(300_000)
        }
    }
}

/// journalctl with streakd's catalog from a staging root (`make install-catalog DESTDIR=`):
/// the staged database is bind-mounted over /var/lib/systemd/catalog in a mount namespace of
/// its own, so the host's catalog is never changed. Needs root; nil otherwise.
func journalctlWithCatalog(_ stagingRoot: String, _ arguments: [String]) -> Outcome? {
    guard getuid() == 0, FileManager.default.fileExists(atPath: "/var/lib/systemd/catalog"),
        let unshare = which("unshare")
    else { return nil }
    let script = """
        mount --bind "$1/var/lib/systemd/catalog" /var/lib/systemd/catalog && shift && exec journalctl --no-pager "$@"
        """
    return run(
        [unshare, "--mount", "--propagation", "private", "/bin/sh", "-c", script, "sh", stagingRoot] + arguments)
}
