import Foundation
import StreakTestKit
import Testing

/// scripts/webhook-receiver on a free loopback port, for a test's life: it checks each request's
/// Standard Webhooks signature and logs it; `plan` sets what it answers next.
final class WebhookReceiver {
    let dir: String
    let pid: pid_t
    let port: Int
    static let secret = "whsec_" + Data("streakd-test-secret-0123456789".utf8).base64EncodedString()

    /// `tls`: a certificate and key (PEM) to serve https with.
    init(in sandbox: Sandbox, tls: (cert: String, key: String)? = nil) throws {
        dir = sandbox.dir.appendingPathComponent("receiver-\(UUID().uuidString.prefix(8))").path
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        var argv = [
            "/usr/bin/python3", packageRoot + "/scripts/webhook-receiver", "--port-file", dir + "/port", "--log",
            dir + "/log", "--plan", dir + "/plan.json", "--secret", Self.secret,
        ]
        if let tls { argv += ["--cert", tls.cert, "--key", tls.key] }
        pid = try spawn(
            argv, env: ["PATH": "/usr/bin:/bin", "LANG": "C.UTF-8"], cwd: nil, stdin: "/dev/null",
            stdout: dir + "/out", stderr: dir + "/err")
        let deadline = ContinuousClock.now + .seconds(10)
        var port: Int?
        while port == nil && ContinuousClock.now < deadline {
            port = (try? String(contentsOfFile: dir + "/port", encoding: .utf8)).flatMap { Int($0) }
            if port == nil { Thread.sleep(forTimeInterval: 0.02) }
        }
        self.port = try #require(
            port, "the receiver did not start: \((try? String(contentsOfFile: dir + "/err", encoding: .utf8)) ?? "")")
    }

    deinit {
        kill(-pid, SIGKILL)
        kill(pid, SIGKILL)
        var status: Int32 = 0
        waitpid(pid, &status, 0)
    }

    func url(_ path: String = "/hook", scheme: String = "http") -> String { "\(scheme)://127.0.0.1:\(port)\(path)" }

    /// What it answers from now on: `{"status": 500}`, `{"hang": true}`, …
    func plan(_ json: String) throws {
        try json.write(toFile: dir + "/plan.json.tmp", atomically: false, encoding: .utf8)
        _ = rename(dir + "/plan.json.tmp", dir + "/plan.json")
    }

    /// The requests so far, in order of arrival.
    func requests() throws -> [[String: Any]] {
        guard let text = try? String(contentsOfFile: dir + "/log", encoding: .utf8) else { return [] }
        return try jsonLines(text)
    }

    /// Waits until at least `count` requests came.
    func waitFor(_ count: Int, within limit: Duration = .seconds(10)) throws -> [[String: Any]] {
        let deadline = ContinuousClock.now + limit
        while true {
            let r = try requests()
            if r.count >= count || ContinuousClock.now >= deadline { return r }
            Thread.sleep(forTimeInterval: 0.05)
        }
    }
}

extension Sandbox {
    /// A configuration with one `[[webhooks]]` table of `settings` (TOML lines) and no badges.
    func webhookConfig(_ settings: String, name: String = "streakd.toml") throws -> String {
        try file(name, "badges = []\n\n[[webhooks]]\nname = \"phone\"\n" + settings + "\n")
    }
}
