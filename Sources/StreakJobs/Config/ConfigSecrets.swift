import Foundation
import StreakDelivery

#if canImport(Glibc)
    import Glibc
#endif

extension ConfigLoader {
    /// What `config check` warns about: secrets every user of the machine can read. A webhook's
    /// `secret`, a header that carries a token (`Authorization`, the URL's user and password, a
    /// name with key, token, auth, secret or password in it) or a URL query's token in a
    /// configuration file others may read; a `secret_file` or `header_files` file others may
    /// read. A warning, not a problem: the configuration works. The units run streakd as a
    /// dynamic user, which reads only what every user may (so the configuration is 0644), or
    /// what systemd hands it: a credential (`secret_file = "NAME"`, `header_files`,
    /// `LoadCredential=`).
    public static func exposedSecrets(_ config: Config) -> [String] {
        var warnings: [String] = []
        if let file = config.source, let mode = othersMayRead(file) {
            let opening = "\(file): webhooks"
            let readable = "every user can read it (the file's mode is \(mode))"
            for w in config.webhooks {
                if w.secret != nil && w.secretFile == nil {
                    warnings.append("\(opening) \(quoted(w.name)): secret: \(readable); " + credentialAdvice)
                }
                for h in w.headers where carriesToken(h.name) {
                    let what =
                        h.name.lowercased() == "authorization" ? "Authorization (headers, or the url's user)" : h.name
                    warnings.append(
                        "\(opening) \(quoted(w.name)): header \(what): \(readable); " + headerAdvice(h.name))
                }
                let query = URLComponents(string: w.url)?.queryItems ?? []
                for item in query where carriesToken(item.name) {
                    warnings.append(
                        "\(opening) \(quoted(w.name)): url: its query's \(item.name): \(readable); send it as a header "
                            + "from a file instead (the service's docs name one), " + headerAdvice("NAME"))
                }
            }
        }
        for w in config.webhooks {
            if let file = w.secretFile, file.hasPrefix("/"), let mode = othersMayRead(file) {
                warnings.append(
                    "webhooks \(quoted(w.name)): secret_file \(file): every user can read it (mode \(mode)); "
                        + credentialAdvice)
            }
            for h in w.headerFiles where h.file.hasPrefix("/") {
                guard let mode = othersMayRead(h.file) else { continue }
                warnings.append(
                    "webhooks \(quoted(w.name)): header_files \(h.name) \(h.file): every user can read it (mode "
                        + "\(mode)); " + headerAdvice(h.name))
            }
        }
        return warnings
    }

    /// Whether a header or query parameter of this name carries a credential.
    static func carriesToken(_ name: String) -> Bool {
        let n = name.lowercased()
        return ["auth", "key", "token", "secret", "password"].contains { n.contains($0) }
    }

    static func headerAdvice(_ name: String) -> String {
        credentialAdvice(what: "value", setting: "header_files = { \(name) = \"NAME\" }")
    }

    static let credentialAdvice = credentialAdvice(what: "secret", setting: "secret_file = \"NAME\"")

    /// How to keep a secret (or a header's value) from other users: the file its owner's alone,
    /// or a systemd credential that `setting` names.
    static func credentialAdvice(what: String, setting: String) -> String {
        "chmod 0600 the file where streakd runs as its owner (the --user units), or keep the \(what) in a "
            + "credential: \(setting) and, in the units' drop-in, "
            + "LoadCredential=NAME:/etc/streakd/NAME, a file of root's of mode 0600 (README, \"Webhooks\")"
    }

    /// The file's mode in octal when other users may read it (and it exists), else nil.
    static func othersMayRead(_ file: String) -> String? {
        var s = stat()
        guard stat(file, &s) == 0, s.st_mode & S_IROTH != 0 else { return nil }
        return "0" + String(s.st_mode & 0o7777, radix: 8)
    }
}
