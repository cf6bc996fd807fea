import Foundation
import StreakTestKit
import Testing

/// What one run of the built `streakd` binary did.
typealias RunResult = Outcome

/// The built binary (`swift test` builds it: it is a product of the package).
let streakdBinary = builtStreakd

/// Runs the built binary with `args` (an argv array, never a shell) and a
/// minimal environment plus `env`; `stdin` is fed to standard input (else /dev/null).
func streakd(_ args: [String], stdin: String? = nil, env: [String: String] = [:]) -> RunResult {
    guard FileManager.default.isExecutableFile(atPath: streakdBinary) else {
        Issue.record("streakd is not built at \(streakdBinary); run `swift build` in \(packageRoot) first")
        return RunResult(code: -1, out: "", err: "")
    }
    let process = Process()
    process.executableURL = URL(fileURLWithPath: streakdBinary)
    process.arguments = args
    process.environment = ["PATH": "/usr/bin:/bin", "LANG": "C.UTF-8"].merging(env) { $1 }
    let started = try! Spawned(process, stdin: stdin)
    return started.wait()
}

/// The instant every test runs at unless it says otherwise: Saturday
/// 2026-11-21, 12:00 in Europe/Berlin.
let fixedNow = "2026-11-21T11:00:00Z"

/// Which store the command tests run on: a SQLite file, or with `STREAKD_TEST_STORE=postgres`
/// (scripts/test's second pass) a fresh PostgreSQL database per sandbox (SPEC §7: same behaviour,
/// same tests).
enum TestStore {
    static let postgres = ProcessInfo.processInfo.environment["STREAKD_TEST_STORE"] == "postgres"
}

/// A fresh temporary directory with its own store, HOME and XDG folders.
final class Sandbox {
    let dir: URL
    let store: String
    var now = fixedNow

    init() throws {
        dir = FileManager.default.temporaryDirectory.appendingPathComponent("streakd-cli-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        store = TestStore.postgres ? try TestPostgres.freshDatabase() : dir.appendingPathComponent("s.sqlite").path
    }

    deinit { try? FileManager.default.removeItem(at: dir) }

    /// The child's environment: every default path inside the sandbox, so a
    /// missing default configuration means the defaults.
    var environment: [String: String] {
        [
            "HOME": dir.path, "XDG_STATE_HOME": dir.path + "/state", "XDG_CONFIG_HOME": dir.path + "/config",
            "STREAKD_NOW": now,
        ]
    }

    /// A tmpfs of `size` (mount's `size=`, such as `16m`) mounted at DIR/NAME, for a small or
    /// read-only file system; the caller unmounts it (`umount -l`). Needs root.
    func tmpfs(_ name: String, size: String, sourceLocation: SourceLocation = #_sourceLocation) throws -> String {
        let mount = dir.appendingPathComponent(name).path
        try FileManager.default.createDirectory(atPath: mount, withIntermediateDirectories: true)
        try #require(
            StreakTestKit.run(["/bin/mount", "-t", "tmpfs", "-o", "size=\(size)", "tmpfs", mount]).code == 0,
            sourceLocation: sourceLocation)
        return mount
    }

    /// Runs `streakd ARGS --store DIR/s.sqlite` at `now`.
    @discardableResult
    func run(_ args: [String], stdin: String? = nil, env: [String: String] = [:]) -> RunResult {
        streakd(args + ["--store", store], stdin: stdin, env: environment.merging(env) { $1 })
    }

    /// Runs `streakd ARGS --store …`, killing it after `limit`: a run that never ends is a failure, not a hung test.
    func run(_ args: [String], within limit: Duration, sourceLocation: SourceLocation = #_sourceLocation) throws
        -> RunResult
    {
        let child = try spawn(args)
        let deadline = ContinuousClock.now + limit
        while child.process.isRunning {
            guard ContinuousClock.now < deadline else {
                kill(child.process.processIdentifier, SIGKILL)
                Issue.record("streakd \(args) was still running after \(limit)", sourceLocation: sourceLocation)
                return child.wait()
            }
            Thread.sleep(forTimeInterval: 0.02)
        }
        return child.wait()
    }

    /// Runs without adding `--store`.
    func runBare(_ args: [String], stdin: String? = nil, env: [String: String] = [:]) -> RunResult {
        streakd(args, stdin: stdin, env: environment.merging(env) { $1 })
    }

    /// Starts `streakd ARGS --store …` without waiting for it.
    func spawn(_ args: [String], env: [String: String] = [:]) throws -> Spawned {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: streakdBinary)
        process.arguments = args + ["--store", store]
        process.environment = ["PATH": "/usr/bin:/bin", "LANG": "C.UTF-8"].merging(environment) { $1 }.merging(env) {
            $1
        }
        return try Spawned(process, stdin: nil)
    }

    /// Writes a text file in the sandbox and answers its path.
    @discardableResult
    func file(_ name: String, _ text: String) throws -> String {
        try file(name, bytes: Array(text.utf8))
    }

    @discardableResult
    func file(_ name: String, bytes: [UInt8]) throws -> String {
        let url = dir.appendingPathComponent(name)
        try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        try writeFile(url.path, bytes)
        return url.path
    }

    /// Adds a user, expecting success.
    func addUser(
        _ id: String = "u1", tz: String = "Europe/Berlin", _ extra: [String] = [],
        sourceLocation: SourceLocation = #_sourceLocation
    ) {
        let r = run(["user", "add", id, "--tz", tz] + extra)
        #expect(r.code == 0, "user add \(id): \(r)", sourceLocation: sourceLocation)
    }

    /// Imports JSON lines, expecting success.
    func importLines(_ lines: [String], name: String = "setup.jsonl", sourceLocation: SourceLocation = #_sourceLocation)
        throws
    {
        let path = try file(name, lines.joined(separator: "\n") + "\n")
        let r = run(["import", path])
        #expect(r.code == 0, "import: \(r)", sourceLocation: sourceLocation)
    }

    /// `status ID -o json` (one streak), expecting success.
    func status(_ user: String = "u1", streak: String = "daily", sourceLocation: SourceLocation = #_sourceLocation)
        -> String
    {
        let r = run(["status", user, "--streak", streak, "-o", "json"])
        #expect(r.code == 0 && r.err.isEmpty, "status: \(r)", sourceLocation: sourceLocation)
        return r.out
    }

    /// `status` parsed as one JSON object.
    func statusObject(
        _ user: String = "u1", streak: String = "daily",
        sourceLocation: SourceLocation = #_sourceLocation
    ) throws -> [String: Any] {
        try jsonObject(status(user, streak: streak, sourceLocation: sourceLocation))
    }
}

/// One JSON object from one line.
func jsonObject(_ line: String) throws -> [String: Any] {
    let data = Data(line.trimmingCharacters(in: .newlines).utf8)
    return try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any], "not a JSON object: \(line)")
}

/// Every line of `text` as a JSON object.
func jsonLines(_ text: String) throws -> [[String: Any]] {
    try text.split(separator: "\n").map { try jsonObject(String($0)) }
}

/// A JSON line for one check-in of `u1`.
func checkinLine(_ at: String, id: String? = nil, user: String = "u1", extra: String = "") -> String {
    var s = #"{"user":"\#(user)","at":"\#(at)""#
    if let id { s += #","id":"\#(id)""# }
    return s + extra + "}"
}

/// Seven consecutive days of check-ins ending yesterday (2026-11-14 … 2026-11-20), Berlin evenings.
let sevenDays = (14...20).map { checkinLine("2026-11-\($0)T18:00:00+01:00", id: "d\($0)") }

/// The error line streakd writes for a message.
func error(_ message: String) -> String { "streakd: error: \(message)\n" }

let zoneRule = "use an IANA zone name from the system's tzdata, such as Europe/Berlin or America/New_York"
