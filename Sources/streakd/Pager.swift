import Foundation
import StreakDelivery
import Synchronization

/// A pager for `log` on a terminal, as journalctl has one (systemd's pager rules): `$SYSTEMD_PAGER`,
/// else `$PAGER`, else `less`, else `more`; an empty value or `cat` means none. A pager named in a
/// variable runs through `/bin/sh -c` (it may carry options). `less` gets `LESS=$SYSTEMD_LESS`,
/// else `FRXMK` (quit if one screen, raw colours, keep the screen, long prompt, quit on Ctrl-C;
/// long lines wrap, where journalctl's `S` chops them: a message is read whole), and
/// `LESSCHARSET=utf-8` unless `$SYSTEMD_LESSCHARSET` says otherwise.
///
/// The pager reads our standard output through a pipe. Ctrl-C goes to the pager (streakd ignores
/// it while the pager runs); when the pager quits, a write finds the pipe closed and streakd stops
/// reading (`broken`), never dies of SIGPIPE.
final class Pager {
    let pid: pid_t

    private init(pid: pid_t) { self.pid = pid }

    /// Whether output went to a pager that has quit: stop producing it.
    static var broken: Bool { quit.load(ordering: .relaxed) }
    private static let quit = Atomic<Bool>(false)

    /// Starts a pager when standard output is a terminal and the environment asks for one.
    static func start(environment: [String: String]) -> Pager? {
        guard isatty(STDOUT_FILENO) == 1 else { return nil }
        let named = environment["SYSTEMD_PAGER"] ?? environment["PAGER"]
        if let named, named.isEmpty || named == "cat" { return nil }
        var env = environment
        env["LESS"] = environment["SYSTEMD_LESS"] ?? "FRXMK"
        env["LESSCHARSET"] = environment["SYSTEMD_LESSCHARSET"] ?? "utf-8"
        let candidates = named.map { [["/bin/sh", "-c", $0]] } ?? [["less"], ["more"]]
        var fds: [Int32] = [0, 0]
        guard pipe(&fds) == 0 else { return nil }
        for argv in candidates {
            if let pid = spawn(argv, input: fds[0], closing: fds[1], env: env) {
                // From here on what we print goes to the pager.
                dup2(fds[1], STDOUT_FILENO)
                close(fds[0])
                close(fds[1])
                signal(SIGPIPE, SIG_IGN)
                signal(SIGINT, SIG_IGN)
                return Pager(pid: pid)
            }
        }
        close(fds[0])
        close(fds[1])
        return nil
    }

    /// Ends our side of the pipe and waits until the user has quit the pager.
    func finish() {
        close(STDOUT_FILENO)
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        signal(SIGINT, SIG_DFL)
    }

    /// Writes a line to standard output; after the pager has gone (EPIPE), writes nothing more and
    /// notes it in `broken`.
    static func write(_ line: String) {
        guard !broken else { return }
        var bytes = Array((line + "\n").utf8)
        var offset = 0
        while offset < bytes.count {
            let n = bytes.withUnsafeMutableBytes {
                Glibc.write(STDOUT_FILENO, $0.baseAddress! + offset, $0.count - offset)
            }
            if n < 0 {
                if errno == EINTR { continue }
                quit.store(true, ordering: .relaxed)
                return
            }
            offset += n
        }
    }

    /// `argv` with `input` as its standard input (and `unused`, our write end, closed in it),
    /// default signal handling and no signal blocked; `argv[0]` looked up in `PATH`.
    private static func spawn(_ argv: [String], input: Int32, closing unused: Int32, env: [String: String]) -> pid_t? {
        withSpawnSetup(argv: argv, environment: env.map { "\($0.key)=\($0.value)" }, ownGroup: false) {
            actions, attributes, cArgs, cEnv in
            posix_spawn_file_actions_adddup2(&actions, input, STDIN_FILENO)
            posix_spawn_file_actions_addclose(&actions, input)
            posix_spawn_file_actions_addclose(&actions, unused)
            var pid: pid_t = 0
            guard posix_spawnp(&pid, argv[0], &actions, &attributes, cArgs, cEnv) == 0 else { return nil }
            return pid
        }
    }
}
