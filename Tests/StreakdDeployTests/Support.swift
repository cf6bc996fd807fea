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

/// Runs `argv` (never through a shell) with exactly `env`, in `cwd`, killing it after `timeout`.
/// Output goes to files, so no pipe fills up.
func run(
    _ argv: [String], env: [String: String]? = nil, cwd: String? = nil, stdin: String? = nil,
    timeout: Duration = .seconds(120)
) -> Outcome {
    let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("streakd-deploy-\(UUID().uuidString)")
    defer { try? FileManager.default.removeItem(at: scratch) }
    do {
        try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
        let outURL = scratch.appendingPathComponent("out")
        let errURL = scratch.appendingPathComponent("err")
        _ = FileManager.default.createFile(atPath: outURL.path, contents: nil)
        _ = FileManager.default.createFile(atPath: errURL.path, contents: nil)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: argv[0])
        process.arguments = Array(argv.dropFirst())
        process.environment = env ?? ["PATH": searchPath, "LANG": "C.UTF-8", "HOME": NSHomeDirectory()]
        if let cwd { process.currentDirectoryURL = URL(fileURLWithPath: cwd) }
        process.standardOutput = try FileHandle(forWritingTo: outURL)
        process.standardError = try FileHandle(forWritingTo: errURL)
        if let stdin {
            let inURL = scratch.appendingPathComponent("in")
            try Data(stdin.utf8).write(to: inURL)
            process.standardInput = try FileHandle(forReadingFrom: inURL)
        } else {
            process.standardInput = FileHandle.nullDevice
        }
        let done = DispatchSemaphore(value: 0)
        process.terminationHandler = { _ in done.signal() }
        try process.run()
        var timedOut = false
        if done.wait(timeout: .now() + timeout.seconds) == .timedOut {
            timedOut = true
            kill(process.processIdentifier, SIGKILL)
            done.wait()
        }
        let out = (try? String(contentsOf: outURL, encoding: .utf8)) ?? ""
        let err = (try? String(contentsOf: errURL, encoding: .utf8)) ?? ""
        return Outcome(code: process.terminationStatus, out: out, err: err, timedOut: timedOut)
    } catch {
        return Outcome(code: -1, out: "", err: "cannot run \(argv): \(error)\n")
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

/// `make` in the package root with these arguments, the built streakd as STREAKD.
func make(_ targets: [String], _ variables: [String: String] = [:], env: [String: String] = [:]) -> Outcome {
    let vars = ["STREAKD": builtStreakd].merging(variables) { $1 }
    let argv =
        ["/usr/bin/make", "--no-print-directory", "-C", packageRoot] + targets
        + vars.keys.sorted().map { "\($0)=\(vars[$0]!)" }
    let base = ["PATH": searchPath, "LANG": "C.UTF-8", "HOME": NSHomeDirectory()]
    return run(argv, env: base.merging(env) { $1 }, timeout: .seconds(600))
}

/// The man page and the completions, made once per test process (the man page plugin
/// builds the package in debug mode, which `swift test` has just done: a no-op build).
let madeArtifacts: Outcome = make(["man", "completions"])

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
