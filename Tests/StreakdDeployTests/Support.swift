import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// What one program run did.
struct Outcome: CustomStringConvertible {
    var code: Int32
    var out: String
    var err: String
    var timedOut = false

    var description: String {
        "exit \(code)\(timedOut ? " (killed: time-out)" : "")\n--- stdout\n\(out)--- stderr\n\(err)"
    }
}

/// The package root: the first folder above this file that holds Package.swift.
let packageRoot: String = {
    var url = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
    while url.path != "/" {
        if FileManager.default.fileExists(atPath: url.appendingPathComponent("Package.swift").path) {
            return url.path
        }
        url = url.deletingLastPathComponent()
    }
    return FileManager.default.currentDirectoryPath
}()

/// The streakd that `swift build` made (`swift test` builds it first: it is a product).
let builtStreakd = packageRoot + "/.build/debug/streakd"

/// The test process's PATH, with the toolchain and the usual system folders.
let searchPath: String = {
    let inherited = ProcessInfo.processInfo.environment["PATH"] ?? ""
    return ([inherited, "/opt/swift/usr/bin", "/usr/local/bin", "/usr/bin", "/bin", "/usr/sbin", "/sbin"])
        .filter { !$0.isEmpty }.joined(separator: ":")
}()

/// Runs `argv` (never through a shell) with exactly `env`, in `cwd`, killing its process group
/// after `timeout`. Output goes to files, so no pipe fills up. (posix_spawn and waitpid, not
/// Foundation's Process: a Process whose child hands its descriptors on, as systemctl and a
/// systemd manager may, is never seen to end.)
func run(
    _ argv: [String], env: [String: String]? = nil, cwd: String? = nil, stdin: String? = nil,
    timeout: Duration = .seconds(120)
) -> Outcome {
    let scratch = NSTemporaryDirectory() + "streakd-deploy-run.\(UUID().uuidString)"
    defer { try? FileManager.default.removeItem(atPath: scratch) }
    do {
        try FileManager.default.createDirectory(atPath: scratch, withIntermediateDirectories: true)
        var input = "/dev/null"
        if let stdin {
            input = scratch + "/in"
            try stdin.write(toFile: input, atomically: false, encoding: .utf8)
        }
        let environment = env ?? ["PATH": searchPath, "LANG": "C.UTF-8", "HOME": NSHomeDirectory()]
        let pid = try spawn(
            argv, env: environment, cwd: cwd, stdin: input, stdout: scratch + "/out", stderr: scratch + "/err")
        var (code, timedOut) = (Int32(-1), false)
        if let status = waitForExit(pid, timeout: timeout) {
            code = status
        } else {
            timedOut = true
            kill(-pid, SIGKILL)
            kill(pid, SIGKILL)
            code = waitForExit(pid, timeout: .seconds(30)) ?? -1
        }
        let out = (try? String(contentsOfFile: scratch + "/out", encoding: .utf8)) ?? ""
        let err = (try? String(contentsOfFile: scratch + "/err", encoding: .utf8)) ?? ""
        return Outcome(code: code, out: out, err: err, timedOut: timedOut)
    } catch {
        return Outcome(code: -1, out: "", err: "cannot run \(argv): \(error)\n")
    }
}

struct SpawnFailure: Error, CustomStringConvertible {
    var description: String
}

/// Starts `argv[0]` (a full path) in a process group of its own, with default signal handling
/// and an empty signal mask, standard input, output and error from and to these files.
func spawn(_ argv: [String], env: [String: String], cwd: String?, stdin: String, stdout: String, stderr: String)
    throws -> pid_t
{
    var actions = posix_spawn_file_actions_t()
    var attributes = posix_spawnattr_t()
    posix_spawn_file_actions_init(&actions)
    posix_spawnattr_init(&attributes)
    defer {
        posix_spawn_file_actions_destroy(&actions)
        posix_spawnattr_destroy(&attributes)
    }
    posix_spawn_file_actions_addopen(&actions, 0, stdin, O_RDONLY, 0)
    posix_spawn_file_actions_addopen(&actions, 1, stdout, O_WRONLY | O_CREAT | O_TRUNC | O_APPEND, 0o644)
    posix_spawn_file_actions_addopen(&actions, 2, stderr, O_WRONLY | O_CREAT | O_TRUNC | O_APPEND, 0o644)
    var all = sigset_t()
    var none = sigset_t()
    sigfillset(&all)
    sigemptyset(&none)
    posix_spawnattr_setsigdefault(&attributes, &all)
    posix_spawnattr_setsigmask(&attributes, &none)
    posix_spawnattr_setpgroup(&attributes, 0)
    posix_spawnattr_setflags(
        &attributes, Int16(POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETPGROUP))
    // In `cwd` through env -C (glibc's posix_spawn_file_actions_addchdir_np is not visible to Swift).
    let argv = cwd.map { ["/usr/bin/env", "-C", $0] + argv } ?? argv
    let cArgs = argv.map { strdup($0) } + [nil]
    let cEnv = env.map { strdup("\($0.key)=\($0.value)") } + [nil]
    defer {
        cArgs.forEach { free($0) }
        cEnv.forEach { free($0) }
    }
    var pid: pid_t = 0
    let result = posix_spawn(&pid, argv[0], &actions, &attributes, cArgs, cEnv)
    guard result == 0 else {
        throw SpawnFailure(description: "posix_spawn \(argv[0]): \(String(cString: strerror(result)))")
    }
    return pid
}

/// Waits for a child to end: its exit status (128 + N for signal N), or nil after `timeout`.
func waitForExit(_ pid: pid_t, timeout: Duration) -> Int32? {
    let deadline = ContinuousClock.now + timeout
    var status: Int32 = 0
    while true {
        let r = waitpid(pid, &status, WNOHANG)
        if r == pid {
            return status & 0x7f == 0 ? (status >> 8) & 0xff : 128 + (status & 0x7f)
        }
        if r < 0 && errno != EINTR { return -1 }
        if ContinuousClock.now >= deadline { return nil }
        usleep(20_000)
    }
}

extension Duration {
    var seconds: Double { Double(components.seconds) + Double(components.attoseconds) * 1e-18 }
}

/// The full path of a program on `searchPath`, or nil.
func which(_ name: String) -> String? {
    for dir in searchPath.split(separator: ":") {
        let path = "\(dir)/\(name)"
        if FileManager.default.isExecutableFile(atPath: path) { return path }
    }
    return nil
}

/// A program the tests need; records an issue naming the package when it is missing.
func tool(_ name: String, package: String, sourceLocation: SourceLocation = #_sourceLocation) throws -> String {
    guard let path = which(name) else {
        Issue.record(
            "\(name) is missing: install the Debian package \(package) (scripts/install-deps does)",
            sourceLocation: sourceLocation)
        throw Missing(name: name)
    }
    return path
}

struct Missing: Error { var name: String }

/// A fresh folder, removed when this goes away.
final class ScratchDir {
    let path: String

    init(under parent: String = NSTemporaryDirectory(), prefix: String = "streakd-deploy") throws {
        path = (parent as NSString).appendingPathComponent("\(prefix).\(UUID().uuidString.prefix(8).lowercased())")
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    }

    deinit { try? FileManager.default.removeItem(atPath: path) }

    func sub(_ name: String) -> String { (path as NSString).appendingPathComponent(name) }

    func write(_ name: String, _ text: String) throws -> String {
        let file = sub(name)
        try FileManager.default.createDirectory(
            atPath: (file as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        try text.write(toFile: file, atomically: true, encoding: .utf8)
        return file
    }
}

func read(_ path: String) throws -> String { try String(contentsOfFile: path, encoding: .utf8) }

/// Every regular file under `root`, as paths relative to it, sorted.
func files(under root: String) -> [String] {
    guard let walker = FileManager.default.enumerator(atPath: root) else { return [] }
    var found: [String] = []
    while let item = walker.nextObject() as? String {
        var isDir: ObjCBool = false
        if FileManager.default.fileExists(atPath: root + "/" + item, isDirectory: &isDir), !isDir.boolValue {
            found.append(item)
        }
    }
    return found.sorted()
}

/// The man page `make man` made before the tests (scripts/test does, right after the build).
let manPage = packageRoot + "/.build/deploy/streakd.1"

/// `make` in the package root with these arguments, the built streakd as STREAKD. The man page
/// is never remade here (`-o`): its plugin runs `swift package`, which waits for the lock that
/// `swift test` holds until the tests end.
func make(_ targets: [String], _ variables: [String: String] = [:], env: [String: String] = [:]) -> Outcome {
    let vars = ["STREAKD": builtStreakd].merging(variables) { $1 }
    let argv =
        ["/usr/bin/make", "--no-print-directory", "-C", packageRoot, "-o", ".build/deploy/streakd.1"] + targets
        + vars.keys.sorted().map { "\($0)=\(vars[$0]!)" }
    let base = ["PATH": searchPath, "LANG": "C.UTF-8", "HOME": NSHomeDirectory()]
    return run(argv, env: base.merging(env) { $1 }, timeout: .seconds(300))
}

/// The completions, made once per test process; the man page must be there already.
let madeArtifacts: Outcome = {
    guard FileManager.default.fileExists(atPath: manPage) else {
        return Outcome(
            code: 1, out: "",
            err: "\(manPage) is missing: run `make man STREAKD=.build/debug/streakd` before `swift test` "
                + "(scripts/test does)\n")
    }
    return make(["completions"])
}()

/// The unit files of a kind ("system" or "user"), as in the repository.
let unitNames = ["streakd-tick.service", "streakd-tick.timer", "streakd-refill.service", "streakd-refill.timer"]
let serviceNames = unitNames.filter { $0.hasSuffix(".service") }

/// `systemd-analyze security --offline=true` on one unit file: the overall exposure it prints.
func exposure(of unitFile: String, user: Bool = false) throws -> (score: Double, report: Outcome) {
    let analyze = try tool("systemd-analyze", package: "systemd")
    let runtime = try ScratchDir()
    let report = run(
        [analyze] + (user ? ["--user"] : []) + ["security", "--offline=true", "--no-pager", unitFile],
        env: ["PATH": searchPath, "LANG": "C.UTF-8", "HOME": runtime.path, "XDG_RUNTIME_DIR": runtime.path])
    // "→ Overall exposure level for streakd-tick.service: 0.2 SAFE 😀"
    let name = (unitFile as NSString).lastPathComponent
    let marker = "Overall exposure level for \(name): "
    let score = report.out.split(separator: "\n").lazy.compactMap { line -> Double? in
        guard let range = line.range(of: marker) else { return nil }
        return line[range.upperBound...].split(separator: " ").first.flatMap { Double($0) }
    }.first
    return (try #require(score, "no overall exposure in: \(report)"), report)
}

/// The `Key=` values of a unit file (every occurrence, in order).
func values(_ key: String, in text: String) -> [String] {
    text.split(separator: "\n").compactMap { line in
        line.hasPrefix(key + "=") ? String(line.dropFirst(key.count + 1)) : nil
    }
}
