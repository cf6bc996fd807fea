import CProcess
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// What `posix_spawn` needs for a child that handles every signal by default and blocks none
/// (this process's threads block most, and a child inherits the mask: a pager would ignore
/// Ctrl-C; hooks are started with `vfork` instead, `streakd_spawn_before`), in a process group of its own when
/// `ownGroup`: the file actions and attributes, and `argv` and `environment` (`NAME=value`) as
/// C strings, made for `body` (which adds its file actions and spawns) and freed after.
public func withSpawnSetup<T>(
    argv: [String], environment: [String], ownGroup: Bool,
    _ body: (
        _ actions: inout posix_spawn_file_actions_t, _ attributes: inout posix_spawnattr_t,
        _ argv: [UnsafeMutablePointer<CChar>?], _ environment: [UnsafeMutablePointer<CChar>?]
    ) throws -> T
) rethrows -> T {
    var actions = posix_spawn_file_actions_t()
    var attributes = posix_spawnattr_t()
    posix_spawn_file_actions_init(&actions)
    posix_spawnattr_init(&attributes)
    let cArgs = argv.map { strdup($0) } + [nil]
    let cEnv = environment.map { strdup($0) } + [nil]
    defer {
        posix_spawn_file_actions_destroy(&actions)
        posix_spawnattr_destroy(&attributes)
        cArgs.forEach { free($0) }
        cEnv.forEach { free($0) }
    }
    var all = sigset_t()
    var none = sigset_t()
    sigfillset(&all)
    sigemptyset(&none)
    posix_spawnattr_setsigdefault(&attributes, &all)
    posix_spawnattr_setsigmask(&attributes, &none)
    var flags = POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK
    if ownGroup {
        posix_spawnattr_setpgroup(&attributes, 0)
        flags |= POSIX_SPAWN_SETPGROUP
    }
    posix_spawnattr_setflags(&attributes, Int16(flags))
    return try body(&actions, &attributes, cArgs, cEnv)
}
