import Foundation
import StreakTestKit
import Testing

/// A webhook's signing secret where only streakd reads it: a systemd credential
/// (`secret_file = "NAME"`, `LoadCredential=`), and `config check`'s warning for a secret every
/// user of the machine can read.
@Suite("webhook secrets", .fastTier)
struct WebhookSecretTests {
    /// A bare name in secret_file is read from $CREDENTIALS_DIRECTORY, as the units' drop-in
    /// hands it over; without one the webhook's deliveries fail, saying what to add.
    @Test func aCredentialNameIsReadFromTheCredentialsDirectory() throws {
        try Journal.ensureRunning()
        let s = try Sandbox()
        let id = "c" + String(UUID().uuidString.prefix(8)).lowercased()
        s.addUser(id)
        try s.importLines((14...20).map { checkinLine("2026-11-\($0)T18:00:00+01:00", user: id) })
        let receiver = try WebhookReceiver(in: s)
        let config = try s.webhookConfig("url = \"\(receiver.url())\"\nsecret_file = \"webhook.secret\"\n")
        let credentials = s.dir.appendingPathComponent("credentials").path
        _ = try s.file("credentials/webhook.secret", WebhookReceiver.secret + "\n")
        #expect(s.run(["config", "check", "--config", config]).code == 0)
        let check = s.run(["config", "check", "--config", config], env: ["CREDENTIALS_DIRECTORY": credentials])
        #expect(check.code == 0, "\(check)")
        s.now = "2026-11-21T19:00:00Z"
        let without = s.run(["tick", "--config", config])
        #expect(without.code == 75, "\(without)")
        #expect(without.err.contains("LoadCredential=webhook.secret:/etc/streakd/webhook.secret"), "\(without)")
        #expect(try receiver.requests().isEmpty)
        s.now = "2026-11-21T19:30:00Z"
        let tick = s.run(["tick", "--config", config], env: ["CREDENTIALS_DIRECTORY": credentials])
        #expect(tick.code == 0, "\(tick)")
        let requests = try receiver.requests()
        #expect(requests.count == 1 && requests.allSatisfy { $0["valid"] as? Bool == true }, "\(requests)")
    }

    /// An inline secret in a file every user may read, or such a secret_file, is warned about
    /// (the check still passes); the same files readable by their owner alone are not.
    @Test func aSecretEveryUserCanReadIsWarnedAbout() throws {
        let s = try Sandbox()
        let secretFile = try s.file("w.secret", WebhookReceiver.secret)
        let inline = try s.webhookConfig("url = \"https://example.net/x\"\nsecret = \"\(WebhookReceiver.secret)\"")
        let inFile = try s.webhookConfig(
            "url = \"https://example.net/x\"\nsecret_file = \"\(secretFile)\"", name: "f.toml")
        for file in [inline, inFile, secretFile] { chmod(file, 0o644) }
        let open = s.run(["config", "check", "--config", inline])
        #expect(open.code == 0, "\(open)")
        #expect(
            open.err.contains(
                "\(inline): webhooks \"phone\": secret: every user can read it (the file's mode is 0644); chmod 0600 the file where streakd runs as its owner (the --user units), or keep the secret in a credential: secret_file = \"NAME\""
            ), "\(open)")
        let openFile = s.run(["config", "check", "--config", inFile])
        #expect(
            openFile.code == 0 && openFile.err.contains("secret_file \(secretFile): every user can read it (mode 0644)")
        )
        for file in [inline, secretFile] { chmod(file, 0o600) }
        for config in [inline, inFile] {
            let closed = s.run(["config", "check", "--config", config])
            #expect(closed.code == 0 && !closed.err.contains("every user"), "\(closed)")
        }
    }

    /// A header's value (ntfy's or Gotify's token) from a credential, as the secret is: sent with
    /// each request, never in the configuration; a missing file fails the webhook's deliveries.
    @Test func aHeaderFromACredentialIsSent() throws {
        try Journal.ensureRunning()
        let s = try Sandbox()
        let id = "h" + String(UUID().uuidString.prefix(8)).lowercased()
        s.addUser(id)
        try s.importLines((14...20).map { checkinLine("2026-11-\($0)T18:00:00+01:00", user: id) })
        let receiver = try WebhookReceiver(in: s)
        let config = try s.webhookConfig(
            "url = \"\(receiver.url())\"\nsecret = \"\(WebhookReceiver.secret)\"\n"
                + "header_files = { Authorization = \"ntfy-token\" }\n")
        chmod(config, 0o600)
        let credentials = s.dir.appendingPathComponent("credentials").path
        _ = try s.file("credentials/ntfy-token", "Bearer tk_0123456789\n")
        let check = s.run(["config", "check", "--config", config])
        #expect(check.code == 0 && !check.err.contains("every user"), "\(check)")
        s.now = "2026-11-21T19:00:00Z"
        let without = s.run(["tick", "--config", config])
        #expect(without.code == 75 && without.err.contains("LoadCredential=ntfy-token:"), "\(without)")
        s.now = "2026-11-21T19:30:00Z"
        let tick = s.run(["tick", "--config", config], env: ["CREDENTIALS_DIRECTORY": credentials])
        #expect(tick.code == 0, "\(tick)")
        let requests = try receiver.requests()
        #expect(requests.count == 1, "\(requests)")
        let headers = requests.first?["headers"] as? [String: String]
        #expect(headers?["authorization"] == "Bearer tk_0123456789", "\(requests)")
        #expect(!tick.err.contains("tk_0123456789") && !without.err.contains("tk_0123456789"))
    }

    /// Tokens in headers, in the URL's user or query, or in a header's file, that every user can
    /// read are warned about, each saying how to keep it in a credential; header_files' mistakes
    /// are problems with the file and line.
    @Test func aTokenEveryUserCanReadIsWarnedAbout() throws {
        let s = try Sandbox()
        let tokenFile = try s.file("gotify.token", "AbCdEf123\n")
        let config = try s.webhookConfig(
            "url = \"https://user:pw@example.net/message?token=AbCdEf123\"\nformat = \"gotify\"\n"
                + "headers = { X-Gotify-Key = \"AbCdEf123\", X-Priority = \"high\" }\n"
                + "header_files = { X-Api-Key = \"\(tokenFile)\" }\n")
        for file in [config, tokenFile] { chmod(file, 0o644) }
        let open = s.run(["config", "check", "--config", config])
        #expect(open.code == 0, "\(open)")
        for warning in [
            "\(config): webhooks \"phone\": header X-Gotify-Key: every user can read it (the file's mode is 0644); "
                + "chmod 0600 the file where streakd runs as its owner (the --user units), or keep the value in a "
                + "credential: header_files = { X-Gotify-Key = \"NAME\" }",
            "header Authorization (headers, or the url's user): every user can read it",
            "url: its query's token: every user can read it",
            "webhooks \"phone\": header_files X-Api-Key \(tokenFile): every user can read it (mode 0644)",
        ] {
            #expect(open.err.contains(warning), "\(warning)\n\(open.err)")
        }
        #expect(!open.err.contains("X-Priority") && !open.err.contains("AbCdEf123"), "\(open.err)")

        let bad = try s.webhookConfig(
            "url = \"https://example.net/x\"\nformat = \"ntfy\"\nheaders = { Authorization = \"Bearer a\" }\n"
                + "header_files = { Authorization = \"tok\", X-Two = \"a/b\", X-Three = \"/nonexistent/t\" }\n",
            name: "bad.toml")
        let refused = s.run(["config", "check", "--config", bad])
        #expect(refused.code == 78, "\(refused)")
        for problem in [
            "header_files: \"Authorization\" is in headers too; give it in one of them",
            "header_files: \"X-Two\" names \"a/b\", neither an absolute path nor a systemd credential's name",
            "header_files: \"X-Three\" cannot be used: /nonexistent/t: no such file or directory",
        ] {
            #expect(refused.err.contains(problem), "\(problem)\n\(refused.err)")
        }
    }
}
