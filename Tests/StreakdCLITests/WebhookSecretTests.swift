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
}
