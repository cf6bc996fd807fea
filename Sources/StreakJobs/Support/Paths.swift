import Foundation

/// Default locations of the store and the configuration (SPEC §6), worked
/// out from an environment passed in.
public struct Paths: Sendable {
    public var environment: [String: String]
    /// Whether a file exists (injected by tests).
    public var fileExists: @Sendable (String) -> Bool

    public init(
        environment: [String: String],
        fileExists: @escaping @Sendable (String) -> Bool = { FileManager.default.fileExists(atPath: $0) }
    ) {
        self.environment = environment
        self.fileExists = fileExists
    }

    /// `$STATE_DIRECTORY`, else `$XDG_STATE_HOME/streakd`, else `~/.local/state/streakd`.
    public var defaultStore: String {
        if let dir = first(of: "STATE_DIRECTORY") { return dir + "/streakd.sqlite" }
        if let dir = nonEmpty("XDG_STATE_HOME") { return dir + "/streakd/streakd.sqlite" }
        return home + "/.local/state/streakd/streakd.sqlite"
    }

    /// `$CONFIGURATION_DIRECTORY/streakd.toml`, else `$XDG_CONFIG_HOME/streakd/streakd.toml`, else
    /// `~/.config/streakd/streakd.toml` if that file exists (the XDG default of `$XDG_CONFIG_HOME`),
    /// else `/etc/streakd/streakd.toml`. So a desktop user's own file is found alike by the CLI in a
    /// terminal and by the `systemctl --user` units, where `XDG_CONFIG_HOME` is rarely set.
    public var defaultConfig: String {
        if let dir = first(of: "CONFIGURATION_DIRECTORY") { return dir + "/streakd.toml" }
        if let dir = nonEmpty("XDG_CONFIG_HOME") { return dir + "/streakd/streakd.toml" }
        let personal = home + "/.config/streakd/streakd.toml"
        if fileExists(personal) { return personal }
        return "/etc/streakd/streakd.toml"
    }

    var home: String { nonEmpty("HOME") ?? "/root" }

    func nonEmpty(_ name: String) -> String? {
        guard let v = environment[name], !v.isEmpty else { return nil }
        return v
    }

    /// systemd passes several directories separated by ':'; streakd uses the first.
    func first(of name: String) -> String? {
        nonEmpty(name).flatMap { $0.split(separator: ":").first.map(String.init) }
    }
}
