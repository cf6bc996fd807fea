import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// SIGINT and SIGTERM turned into a flag, for jobs that run until stopped (`log -f`): they
/// finish what they are doing and return, and streakd exits 0.
public enum StopSignals {
    /// Catches SIGINT and SIGTERM from now on (SA_RESTART: writes are not cut short), and
    /// unblocks them in this thread: a parent may have started streakd with them blocked.
    public static func install() {
        flag.store(false, ordering: .relaxed)  // initialised here, never first in the handler
        var action = sigaction()
        action.__sigaction_handler.sa_handler = { _ in flag.store(true, ordering: .relaxed) }
        action.sa_flags = SA_RESTART
        sigemptyset(&action.sa_mask)
        sigaction(SIGINT, &action, nil)
        sigaction(SIGTERM, &action, nil)
        var set = sigset_t()
        sigemptyset(&set)
        sigaddset(&set, SIGINT)
        sigaddset(&set, SIGTERM)
        pthread_sigmask(SIG_UNBLOCK, &set, nil)
    }

    /// Whether a stop signal has arrived since `install()`.
    public static var requested: Bool { flag.load(ordering: .relaxed) }
}

private let flag = Atomic<Bool>(false)
