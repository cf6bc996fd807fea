// Process calls Swift cannot make on its own: prctl is variadic, and glibc declares
// posix_spawn_file_actions_addclosefrom_np (2.34) and pipe2 only under _GNU_SOURCE, which Swift's Glibc
// module is not built with. For the hook runner (StreakDelivery's HookProcess).
#include <spawn.h>
#include <sys/prctl.h>

int posix_spawn_file_actions_addclosefrom_np(posix_spawn_file_actions_t *actions, int from);
int pipe2(int fds[2], int flags);

/// Orphaned descendants (a hook's double-forked daemon) are re-parented to this process rather
/// than to init, so it can find and end them.
static inline int streakd_become_subreaper(void) { return prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); }

/// The spawned program gets no descriptor of this process above `from` (the store's files, the
/// journal's socket), whatever their close-on-exec flag.
static inline int streakd_spawn_close_from(posix_spawn_file_actions_t *actions, int from) {
    return posix_spawn_file_actions_addclosefrom_np(actions, from);
}

/// A pipe whose two ends close on exec: another hook started at the same moment by another lane
/// does not inherit them.
static inline int streakd_pipe(int fds[2]) { return pipe2(fds, 02000000 /* O_CLOEXEC */); }
