import Foundation
import StreakTestKit
import Testing

/// `streakd serve` on several sockets at once, on sockets systemd passes (socket activation, as
/// `systemd-socket-activate` does it), telling the service manager how it is (`Type=notify`), and
/// trusting a Unix socket's connections when `[api] trust_socket` says so.
@Suite(
    "serve: sockets, socket activation, notifications", .fastTier,
    .requires(.program("/usr/bin/curl", package: "curl")))
struct ServeSocketTests {
    @Test func severalSocketsAndATrustedUnixSocket() throws {
        let s = try Sandbox()
        s.addUser("u1")
        let config = try s.file("api.toml", "[api]\ntrust_socket = true\n")
        let a = s.dir.path + "/a.sock"
        let b = s.dir.path + "/b.sock"
        let server = try Server(
            s,
            child: s.spawn([
                "serve", "--config", config, "--listen", "unix:" + a, "--listen", "127.0.0.1:0", "--listen",
                "unix:" + b,
            ]), sockets: 3)
        #expect(server.addresses.count == 3 && server.addresses[0] == "unix:" + a && server.addresses[2] == "unix:" + b)
        #expect(
            server.addresses[1].hasPrefix("127.0.0.1:") && !server.addresses[1].hasSuffix(":0"), "\(server.addresses)")

        // A trusted Unix socket: admin without a token.
        let checkin = try server.request("POST", "/v1/users/u1/checkins", json: #"{"id":"e1"}"#)
        #expect(checkin.status == 201, "\(checkin)")
        server.use(server.addresses[2])
        #expect(try server.request("GET", "/v1/users/u1/streaks/daily").status == 200)
        // TCP never is.
        server.use(server.addresses[1])
        let tcp = try server.request("GET", "/v1/users/u1/streaks/daily")
        #expect(tcp.status == 401 && tcp.header("www-authenticate") == "Bearer", "\(tcp)")
        server.stop()
        #expect(!FileManager.default.fileExists(atPath: a) && !FileManager.default.fileExists(atPath: b))

        // Without trust_socket a Unix socket needs a token like TCP.
        let plain = try Server(s, listen: "unix:" + a)
        #expect(try plain.request("GET", "/v1/users/u1/streaks/daily").status == 401)
        plain.stop()
        #expect(
            s.run(["config", "check", "--config", try s.file("bad.toml", "[api]\ntrust_socket = 1\n")]).err.contains(
                "trust_socket: must be true or false"))
    }

    /// As systemd starts it: the socket bound by the manager (here systemd-socket-activate, which
    /// binds it, waits for the first connection and executes serve with LISTEN_FDS), READY=1
    /// once it answers, WATCHDOG=1 while it runs, STOPPING=1 on SIGTERM, exit 0; the socket
    /// (the manager's) is left in place.
    @Test(.requires(.program("/usr/bin/systemd-socket-activate", package: "systemd")))
    func socketActivationAndNotifications() throws {
        let s = try Sandbox()
        s.addUser("u1")
        let token = try ServeTests.token(s, "app", "ingest")
        let path = s.dir.path + "/api.sock"
        let notify = try NotifySocket(s.dir.path + "/notify")
        let env = s.environment.merging(["NOTIFY_SOCKET": notify.path, "WATCHDOG_USEC": "200000"]) { $1 }
        // posix_spawn, not Foundation's Process: systemd-socket-activate closes every descriptor
        // it does not pass on before it executes serve, and Process takes that for an exit.
        let log = s.dir.path + "/activate.log"
        let pid = try spawn(
            ["/usr/bin/systemd-socket-activate", "-l", path, "--fdname=api"]
                + env.keys.sorted().flatMap { ["-E", "\($0)=\(env[$0]!)"] }
                + [streakdBinary, "serve", "--store", s.store],
            env: ["PATH": "/usr/bin:/bin", "LANG": "C.UTF-8"], cwd: nil, stdin: "/dev/null", stdout: "/dev/null",
            stderr: log)
        defer { if waitForExit(pid, timeout: .zero) == nil { kill(pid, SIGKILL) } }
        let deadline = ContinuousClock.now + .seconds(30)
        while !FileManager.default.fileExists(atPath: path) && ContinuousClock.now < deadline {
            Thread.sleep(forTimeInterval: 0.02)
        }
        #expect(notify.messages.isEmpty, "nothing before serve runs")
        // The first connection starts serve, which answers it on the socket it was given.
        func curl(_ args: [String]) -> Outcome {
            run(["/usr/bin/curl", "-sS", "--max-time", "60", "--unix-socket", path] + args)
        }
        let first = curl(["http://localhost/v1/health"])
        #expect(first.code == 0 && first.out.hasPrefix(#"{"status":"ok""#), "\(first)")
        #expect((try? readText(log))?.contains("streakd: listening on unix:" + path) == true)
        #expect(
            notify.wait { $0.contains { $0.hasPrefix("READY=1\nSTATUS=serving on unix:" + path) } },
            "\(notify.messages)")
        #expect(notify.wait { $0.filter { $0 == "WATCHDOG=1" }.count >= 2 }, "\(notify.messages)")
        let checkin = curl([
            "-H", "Authorization: Bearer " + token, "-H", "Content-Type: application/json", "-d", "{}",
            "-w", "%{http_code}", "-o", "/dev/null", "http://localhost/v1/users/u1/checkins",
        ])
        #expect(checkin.out == "201", "\(checkin)")
        kill(pid, SIGTERM)
        #expect(
            waitForExit(pid, timeout: .seconds(15)) == 0, "serve exits 0 after SIGTERM: \((try? readText(log)) ?? "")")
        #expect(notify.wait { $0.contains("STOPPING=1") }, "\(notify.messages)")
        #expect(FileManager.default.fileExists(atPath: path), "the manager's socket is not serve's to remove")
    }
}

func readText(_ path: String) throws -> String { try String(contentsOfFile: path, encoding: .utf8) }

/// A service manager's notification socket (`NOTIFY_SOCKET`): a datagram socket, each message a
/// datagram.
final class NotifySocket {
    let path: String
    let fd: Int32
    private(set) var received: [String] = []

    init(_ path: String) throws {
        self.path = path
        fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue), 0)
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: Array(path.utf8)) }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        guard fd >= 0, bound == 0 else { throw ServerFailed(what: "cannot bind \(path)") }
    }

    deinit { close(fd) }

    /// The messages received so far.
    var messages: [String] {
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let n = recv(fd, &buffer, buffer.count, Int32(MSG_DONTWAIT))
            guard n > 0 else { break }
            received.append(String(decoding: buffer[..<n], as: UTF8.self))
        }
        return received
    }

    /// Waits (at most 20 s) until the messages received satisfy `condition`.
    func wait(_ condition: ([String]) -> Bool) -> Bool {
        let deadline = ContinuousClock.now + .seconds(20)
        while ContinuousClock.now < deadline {
            if condition(messages) { return true }
            Thread.sleep(forTimeInterval: 0.02)
        }
        return condition(messages)
    }
}
