import Foundation
import StreakTestKit
import Testing

#if canImport(Glibc)
    import Glibc
#endif

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

extension Prerequisite {
    /// A `systemd --user` manager for nobody, its session bus (dbus-user-session's dbus.socket),
    /// and a desktop on it (Xvfb, dunst).
    static let userManager = all([
        program("/lib/systemd/systemd", package: "systemd"), program("/usr/bin/setpriv", package: "util-linux"),
        program("/usr/bin/dbus-daemon", package: "dbus"), program("/usr/bin/Xvfb", package: "xvfb"),
        program("/usr/bin/dunst", package: "dunst"), program("/usr/bin/unshare", package: "util-linux"),
        Prerequisite(
            missing: FileManager.default.fileExists(atPath: "/usr/lib/systemd/user/dbus.socket")
                ? nil : "/usr/lib/systemd/user/dbus.socket (Debian package dbus-user-session)"),
    ])
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
    return run(argv, env: base.merging(env) { $1 }, timeout: .seconds(300))
}

/// The man pages and the completions, made once per test process (`make man completions`).
let madeArtifacts: Outcome = make(["man", "completions"])

/// The unit files of a kind ("system" or "user"), as in the repository.
let unitNames = [
    "streakd-tick.service", "streakd-tick.timer", "streakd-refill.service", "streakd-refill.timer",
    "streakd-check.service", "streakd-check.timer",
]
let serviceNames = unitNames.filter { $0.hasSuffix(".service") }
/// The HTTP API's units (`streakd serve`, socket-activated).
let apiUnitNames = ["streakd.socket", "streakd.service"]

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

/// The version in Sources/streakd/Streakd.swift, as the Makefile reads it.
var madeVersion: String {
    let text = (try? read(packageRoot + "/Sources/streakd/Streakd.swift")) ?? ""
    return text.firstMatch(of: #/static let version = "([^"]+)"/#).map { String($0.1) } ?? "?"
}
