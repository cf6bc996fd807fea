import StreakJobs

#if canImport(Glibc)
    import Glibc
#endif

/// SIGINT and SIGTERM turned into the process's `StopToken`, which every context the command
/// line builds carries: a tick or refill then starts nothing new and exits 75, `log -f` returns
/// and streakd exits 0. Only commands that run until done or stopped catch them (`install`);
/// the others keep the default action.
enum StopSignals {
    /// The token the signal handler triggers.
    static let token = StopToken()

    /// Catches SIGINT and SIGTERM from now on (SA_RESTART: writes are not cut short), and
    /// unblocks them in this thread: a parent may have started streakd with them blocked.
    static func install() {
        _ = token  // initialised here, never first in the handler
        var action = sigaction()
        action.__sigaction_handler.sa_handler = { _ in StopSignals.token.trigger() }
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
}
