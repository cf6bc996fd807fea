// Process calls Swift cannot make on its own: prctl is variadic, glibc declares pipe2 only under
// _GNU_SOURCE, which Swift's Glibc module is not built with, and a forked child may make only
// async-signal-safe calls until execve, which Swift code cannot promise. For the hook runner
// (StreakDelivery's HookProcess).
#include <sys/prctl.h>

int pipe2(int fds[2], int flags);

/// Orphaned descendants (a hook's double-forked daemon) are re-parented to this process rather
/// than to init, so it can find and end them.
static inline int streakd_become_subreaper(void) { return prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); }

/// A pipe whose two ends close on exec: another hook started at the same moment by another lane
/// does not inherit them.
static inline int streakd_pipe(int fds[2]) { return pipe2(fds, 02000000 /* O_CLOEXEC */); }

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

/// Starts `path` with `argv` and `envp` (forked, not spawned: the program starts only when the
/// caller lets it). The child goes into a process group of its own, then waits on a pipe: the
/// caller writes one byte to `*gate` to let it start (standard input, output and error from `in`,
/// `out`, `err`, no other descriptor, default signal handling, no signal blocked, then `execve`),
/// or closes `*gate` unwritten to end it before anything of the program runs (exit 127). `*report`
/// reads end of file once the program runs, or the errno of a failed `execve`. Between fork and
/// exec the child calls only async-signal-safe functions. Answers the pid, or -1 (errno set).
static inline pid_t streakd_fork_gated(
    const char *path, char *const argv[], char *const envp[], int in, int out, int err, int *gate, int *report)
{
    int go[2], said[2];
    if (pipe2(go, O_CLOEXEC) != 0) return -1;
    if (pipe2(said, O_CLOEXEC) != 0) {
        close(go[0]);
        close(go[1]);
        return -1;
    }
    sigset_t all, old;
    sigfillset(&all);
    // No handler of this process may run in the child: every signal blocked across the fork.
    pthread_sigmask(SIG_BLOCK, &all, &old);
    pid_t pid = fork();
    if (pid == 0) {
        setpgid(0, 0);
        close(go[1]);
        close(said[0]);
        char byte = 0;
        ssize_t n;
        do { n = read(go[0], &byte, 1); } while (n < 0 && errno == EINTR);
        if (n != 1) _exit(127);
        int e = 0;
        if (dup2(in, 0) < 0 || dup2(out, 1) < 0 || dup2(err, 2) < 0) e = errno;
        if (e == 0) {
            // Every descriptor above 2 goes (the store's files, the journal's socket), whatever
            // its close-on-exec flag, but the report's, which closes on exec.
            int keep = said[1];
            if (keep > 3) syscall(SYS_close_range, 3, keep - 1, 0);
            syscall(SYS_close_range, keep + 1, ~0U, 0);
            struct sigaction dfl;
            dfl.sa_handler = SIG_DFL;
            dfl.sa_flags = 0;
            sigemptyset(&dfl.sa_mask);
            for (int s = 1; s < NSIG; s++) sigaction(s, &dfl, 0);
            sigset_t none;
            sigemptyset(&none);
            sigprocmask(SIG_SETMASK, &none, 0);
            execve(path, argv, envp);
            e = errno;
        }
        while (write(said[1], &e, sizeof e) < 0 && errno == EINTR) {}
        _exit(127);
    }
    int saved = errno;
    pthread_sigmask(SIG_SETMASK, &old, 0);
    close(go[0]);
    close(said[1]);
    if (pid < 0) {
        close(go[1]);
        close(said[0]);
        errno = saved;
        return -1;
    }
    setpgid(pid, pid);  // as the child does: either may come first
    *gate = go[1];
    *report = said[0];
    return pid;
}
