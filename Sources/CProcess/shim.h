// Process calls Swift cannot make on its own: prctl is variadic, glibc declares pipe2 only under
// _GNU_SOURCE, which Swift's Glibc module is not built with, and a forked child may make only
// async-signal-safe calls until execve, which Swift code cannot promise. For the hook runner
// (StreakDelivery's HookProcess).
#include <sys/prctl.h>
#include <sys/xattr.h>  // getxattr: whether a cgroup is delegated (HookCgroup)

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
#include <time.h>
#include <unistd.h>

/// Starts `path` with `argv` and `envp` if it can before `until`, an instant on CLOCK_BOOTTIME
/// in nanoseconds: the child (`vfork`: it borrows this process's memory, nothing is copied, and
/// this thread waits until it has called `execve` or ended) goes into a process group of its own,
/// into the cgroup whose `cgroup.procs` is open as `cgroup_procs` (unless it is -1; `*joined`
/// says whether it did: a child that could not join runs all the same),
/// takes `in`, `out` and `err` as standard input, output and error and no other descriptor,
/// default signal handling, then reads the clock: at or past `until` it ends unstarted (exit 127,
/// `*failure` -1); else it unblocks every signal and calls `execve` (its errno in `*failure` if
/// that fails, exit 127). So a run stopped (SIGSTOP) anywhere before that last look at the clock
/// and resumed past `until` starts nothing. Between vfork and exec the child calls only
/// async-signal-safe functions and writes no memory but `result`, `inside` and errno. Answers the pid (reap it when
/// `*failure` is not 0), or -1 when there is no child (errno set).
static inline pid_t streakd_spawn_into(
    const char *path, char *const argv[], char *const envp[], int in, int out, int err, long long until, int *failure,
    int cgroup_procs, int *joined)
{
    sigset_t all, old;
    sigfillset(&all);
    // No handler of this process may run in the child: every signal blocked across the vfork.
    pthread_sigmask(SIG_BLOCK, &all, &old);
    volatile int result = 0;
    volatile int inside = 0;
    pid_t pid = vfork();
    if (pid == 0) {
        setpgid(0, 0);
        // "0" moves the writer: the child, before it can start anything of its own.
        if (cgroup_procs >= 0 && write(cgroup_procs, "0", 1) == 1) inside = 1;
        int e = 0;
        if (dup2(in, 0) < 0 || dup2(out, 1) < 0 || dup2(err, 2) < 0) e = errno;
        if (e == 0) {
            // Every descriptor above 2 goes (the store's files, the journal's socket), whatever
            // its close-on-exec flag: the child's table is its own.
            syscall(SYS_close_range, 3, ~0U, 0);
            struct sigaction dfl;
            dfl.sa_handler = SIG_DFL;
            dfl.sa_flags = 0;
            sigemptyset(&dfl.sa_mask);
            for (int s = 1; s < NSIG; s++) sigaction(s, &dfl, 0);
            struct timespec now;
            clock_gettime(CLOCK_BOOTTIME, &now);
            if ((long long)now.tv_sec * 1000000000LL + now.tv_nsec >= until) {
                result = -1;
                _exit(127);
            }
            sigset_t none;
            sigemptyset(&none);
            sigprocmask(SIG_SETMASK, &none, 0);
            execve(path, argv, envp);
            e = errno;
        }
        result = e;
        _exit(127);
    }
    int saved = errno;
    pthread_sigmask(SIG_SETMASK, &old, 0);
    if (pid < 0) {
        errno = saved;
        return -1;
    }
    setpgid(pid, pid);  // as the child does (it may have run its program already: then refused, harmless)
    *failure = result;
    if (joined) *joined = inside;
    return pid;
}

/// `streakd_spawn_into` without a cgroup.
static inline pid_t streakd_spawn_before(
    const char *path, char *const argv[], char *const envp[], int in, int out, int err, long long until, int *failure)
{
    return streakd_spawn_into(path, argv, envp, in, out, err, until, failure, -1, 0);
}

/// Now on CLOCK_BOOTTIME, in nanoseconds (the clock `streakd_spawn_before` reads).
static inline long long streakd_boot_nanoseconds(void)
{
    struct timespec now;
    clock_gettime(CLOCK_BOOTTIME, &now);
    return (long long)now.tv_sec * 1000000000LL + now.tv_nsec;
}
