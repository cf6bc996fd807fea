import Foundation
import StreakTestKit

#if canImport(Glibc)
    import Glibc
#endif

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
