import Foundation
import StreakDelivery

#if canImport(Glibc)
    import Glibc
#endif

extension ConfigLoader {
    /// What `config check` warns about: signing secrets every user of the machine can read, a
    /// webhook's `secret` in a configuration file others may read, or a `secret_file` others may
    /// read. A warning, not a problem: the configuration works. The units run streakd as a
    /// dynamic user, which reads only what every user may (so the configuration is 0644), or
    /// what systemd hands it: a credential (`secret_file = "NAME"`, `LoadCredential=`).
    public static func exposedSecrets(_ config: Config) -> [String] {
        var warnings: [String] = []
        if let file = config.source, let mode = othersMayRead(file) {
            for w in config.webhooks where w.secret != nil && w.secretFile == nil {
                warnings.append(
                    "\(file): webhooks \(quoted(w.name)): secret: every user can read it (the file's mode is \(mode)); "
                        + credentialAdvice)
            }
        }
        for w in config.webhooks {
            guard let file = w.secretFile, file.hasPrefix("/"), let mode = othersMayRead(file) else { continue }
            warnings.append(
                "webhooks \(quoted(w.name)): secret_file \(file): every user can read it (mode \(mode)); "
                    + credentialAdvice)
        }
        return warnings
    }

    static let credentialAdvice =
        "chmod 0600 the file where streakd runs as its owner (the --user units), or keep the secret in a "
        + "credential: secret_file = \"NAME\" and, in the units' drop-in, "
        + "LoadCredential=NAME:/etc/streakd/NAME, a file of root's of mode 0600 (README, \"Webhooks\")"

    /// The file's mode in octal when other users may read it (and it exists), else nil.
    static func othersMayRead(_ file: String) -> String? {
        var s = stat()
        guard stat(file, &s) == 0, s.st_mode & S_IROTH != 0 else { return nil }
        return "0" + String(s.st_mode & 0o7777, radix: 8)
    }
}
