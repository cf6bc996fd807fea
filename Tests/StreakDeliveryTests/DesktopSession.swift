import Foundation
import StreakTestKit
import Testing

@testable import StreakDelivery

#if canImport(Glibc)
    import Glibc
#endif

/// A throwaway desktop for the desktop sink's tests: a private D-Bus session bus (dbus-run-session,
/// listening on `DIR/bus`, with no activatable services) and, with `server`, an Xvfb display and
/// dunst owning org.freedesktop.Notifications on that bus. Everything runs under one `sh` in a
/// process group of its own; `stop()` (or deinit) ends it, and so does the test process's death
/// (the script's stdin closes).
final class DesktopSession {
    struct Failed: Error, CustomStringConvertible {
        var description: String
    }

    let dir: URL
    private(set) var address = ""
    private let process: Process
    private let control = Pipe()
    private let ownsDir: Bool

    /// `dir`: reuse a directory (and so the bus address) of a stopped session.
    init(server: Bool, dir reused: URL? = nil) throws {
        try Prerequisite.desktop.require()  // without them: a visible skip (a failure when strict)
        ownsDir = reused == nil
        dir = reused ?? FileManager.default.temporaryDirectory.appendingPathComponent("streakd-desktop-\(UUID())")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        for name in ["address", "display", "dunst.pid", "dunst.out", "dunst.log"] {
            try? FileManager.default.removeItem(at: dir.appendingPathComponent(name))
        }
        try Self.busConfig(dir).write(to: dir.appendingPathComponent("bus.conf"), atomically: true, encoding: .utf8)
        try "[global]\n    monitor = 0\n".write(
            to: dir.appendingPathComponent("dunstrc"), atomically: true, encoding: .utf8)

        process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/dbus-run-session")
        process.arguments = [
            "--config-file=" + dir.appendingPathComponent("bus.conf").path, "--", "/bin/sh", "-c", Self.script, "sh",
            dir.path, server ? "server" : "bus",
        ]
        process.standardInput = control
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        // With no signal blocked (Swift's threads block most, and children inherit the mask), so that
        // dbus-run-session, Xvfb and dunst end on SIGTERM.
        try launchUnblocked(process)

        do {
            address = try wait("the bus address") { self.read("address").flatMap { $0.isEmpty ? nil : $0 } }
            if server {
                _ = try wait("dunst on org.freedesktop.Notifications") { self.serverIsUp() ? true : nil }
            }
        } catch {
            stop()
            throw error
        }
    }

    deinit {
        stop()
        if ownsDir { try? FileManager.default.removeItem(at: dir) }
    }

    /// The bus's socket as an address, without the daemon's guid (as a desktop's `DBUS_SESSION_BUS_ADDRESS` is).
    var socketAddress: String { "unix:path=" + dir.appendingPathComponent("bus").path }

    /// Ends the script (it stops dunst and Xvfb; dbus-run-session then stops the bus), waits for the
    /// whole process group to exit (the bus removes its socket after dbus-run-session has exited),
    /// then kills whatever is left. Safe to call twice.
    func stop() {
        try? control.fileHandleForWriting.close()
        let group = process.processIdentifier
        let end = Date().addingTimeInterval(5)
        while groupAlive(group) && Date() < end { usleep(20_000) }
        killpg(group, SIGKILL)
        process.waitUntilExit()
    }

    var dunstPID: pid_t? { read("dunst.pid").flatMap { pid_t($0) } }

    /// What `dunst -print` wrote, one dictionary per notification (`appname`, `summary`, `body`,
    /// `urgency`, `category`, ...; quotes removed).
    func printed() -> [[String: String]] {
        let text = (try? String(contentsOf: dir.appendingPathComponent("dunst.out"), encoding: .utf8)) ?? ""
        var blocks: [[String: String]] = []
        var current: [String: String]?
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            if line == "{" {
                current = [:]
            } else if line == "}" {
                if let current { blocks.append(current) }
                current = nil
            } else if line.hasPrefix("\t"), let colon = line.firstIndex(of: ":") {
                let key = line[line.index(after: line.startIndex)..<colon]
                var value = line[line.index(after: colon)...].dropFirst()
                if value.count >= 2 && value.first == "'" && value.last == "'" { value = value.dropFirst().dropLast() }
                if current?[String(key)] == nil { current?[String(key)] = String(value) }
            }
        }
        return blocks
    }

    /// `dunstctl history`, each entry's fields as strings (`appname`, `summary`, `body`, `category`, ...).
    func history() throws -> [[String: String]] {
        let json = try run("/usr/bin/dunstctl", ["history"])
        guard let object = try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any],
            let data = object["data"] as? [[[String: Any]]], let entries = data.first
        else { throw Failed(description: "unexpected dunstctl history: \(json)") }
        return entries.map { entry in
            entry.compactMapValues { field in ((field as? [String: Any])?["data"]).map { "\($0)" } }
        }
    }

    /// Runs a program with only `PATH` and this bus in its environment; returns its stdout.
    @discardableResult
    func run(_ program: String, _ arguments: [String]) throws -> String {
        let env = [
            "PATH": ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin", "DBUS_SESSION_BUS_ADDRESS": address,
        ]
        let result = StreakTestKit.run([program] + arguments, env: env, timeout: .seconds(30))
        guard result.code == 0 else {
            throw Failed(description: "\(program) \(arguments) exited with \(result.code)")
        }
        return result.out
    }

    /// The unique connection names on the bus whose process is `pid`.
    func connections(of pid: pid_t) throws -> [String] {
        let text = try run(
            "/usr/bin/busctl", ["--address=" + address, "list", "--unique", "--no-legend", "--no-pager"])
        return text.split(separator: "\n").compactMap { line in
            let columns = line.split(separator: " ", omittingEmptySubsequences: true)
            return columns.count > 1 && columns[1] == "\(pid)" ? String(columns[0]) : nil
        }
    }

    private func serverIsUp() -> Bool {
        let reply = try? run(
            "/usr/bin/busctl",
            [
                "--address=" + address, "call", "org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus",
                "NameHasOwner", "s", "org.freedesktop.Notifications",
            ])
        return reply?.hasPrefix("b true") == true
    }

    private func read(_ name: String) -> String? {
        (try? String(contentsOf: dir.appendingPathComponent(name), encoding: .utf8))?
            .trimmingCharacters(in: .whitespacesAndNewlines)
    }

    private func wait<T>(_ what: String, _ probe: () -> T?) throws -> T {
        let end = Date().addingTimeInterval(20)
        while Date() < end {
            if let value = probe() { return value }
            if !process.isRunning { break }
            usleep(50_000)
        }
        let log = [read("dunst.log"), read("xvfb.log")].compactMap { $0 }.joined(separator: "\n")
        throw Failed(description: "desktop session in \(dir.path): no \(what) (running: \(process.isRunning))\n\(log)")
    }

    /// The session: writes the bus address, starts Xvfb (it picks a free display and reports it on
    /// fd 3) and dunst, then waits for stdin to close.
    static let script = #"""
        dir=$1
        printf '%s\n' "$DBUS_SESSION_BUS_ADDRESS" > "$dir/address.new" && mv "$dir/address.new" "$dir/address"
        pids=
        if [ "$2" = server ]; then
            Xvfb -displayfd 3 -nolisten tcp -screen 0 320x240x24 3> "$dir/display" > "$dir/xvfb.log" 2>&1 &
            x=$!
            pids=$x
            while [ ! -s "$dir/display" ]; do
                kill -0 "$x" 2> /dev/null || exit 1
                sleep 0.05
            done
            DISPLAY=":$(cat "$dir/display")" dunst -config "$dir/dunstrc" -print > "$dir/dunst.out" 2> "$dir/dunst.log" &
            echo $! > "$dir/dunst.pid"
            pids="$! $x"
        fi
        read -r _
        for p in $pids; do kill -CONT "$p"; kill "$p"; done 2> /dev/null
        wait
        """#

    static func busConfig(_ dir: URL) -> String {
        """
        <!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
         "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
        <busconfig>
          <type>session</type>
          <listen>unix:path=\(dir.appendingPathComponent("bus").path)</listen>
          <auth>EXTERNAL</auth>
          <policy context="default">
            <allow send_destination="*" eavesdrop="true"/>
            <allow eavesdrop="true"/>
            <allow own="*"/>
          </policy>
        </busconfig>
        """
    }
}

/// Starts the process with no signal blocked. A child inherits the spawning thread's signal mask, Foundation does
/// not reset it, and Dispatch and Swift concurrency threads block most signals.
func launchUnblocked(_ process: Process) throws {
    var none = sigset_t()
    var saved = sigset_t()
    sigemptyset(&none)
    pthread_sigmask(SIG_SETMASK, &none, &saved)
    defer { pthread_sigmask(SIG_SETMASK, &saved, nil) }
    try process.run()
}

/// Whether any live process is left in the group (zombies do not count).
func groupAlive(_ group: pid_t) -> Bool {
    guard let entries = try? FileManager.default.contentsOfDirectory(atPath: "/proc") else {
        return killpg(group, 0) == 0 || errno == EPERM
    }
    for entry in entries where entry.first?.isNumber == true {
        guard let stat = try? String(contentsOfFile: "/proc/\(entry)/stat", encoding: .utf8),
            let close = stat.lastIndex(of: ")")
        else { continue }
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        guard fields.count > 2, let pgrp = pid_t(fields[2]), pgrp == group else { continue }
        if fields[0] != "Z" && fields[0] != "X" { return true }
    }
    return false
}
