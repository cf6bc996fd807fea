import ArgumentParser
import Foundation
import StreakCore
import StreakJobs
import StreakPostgres
import StreakSQLite
import StreakStore

/// Values the shells complete by calling streakd back (`completion: .custom`): user ids and
/// streak ids from the store the command line names (`--store`, `STREAKD_STORE` or the default),
/// opened to read only, and zone names from the tzdata. A completion never creates a store,
/// never prints an error and never waits: anything that goes wrong completes nothing.
enum Completions {
    static let users = CompletionKind.custom { words, _, _ in userIDs(words) }
    static let streaks = CompletionKind.custom { words, _, _ in streakIDs(words) }
    static let zones = CompletionKind.custom { _, _, _ in ZoneBook().names() }
    static let languages = CompletionKind.list(["en", "zh-Hans"])

    /// Every user id in the store.
    static func userIDs(_ words: [String]) -> [String] {
        (try? store(words)?.read { try $0.users().map(\.id) }) ?? []
    }

    /// `daily` and the streaks of the user the command line names (`--user ID`, or the command's
    /// ID argument).
    static func streakIDs(_ words: [String]) -> [String] {
        guard let user = userArgument(words), Validate.userID(user) == nil else { return ["daily"] }
        let stored = (try? store(words)?.read { try $0.streaks(of: user) }) ?? []
        return Array(Set(stored + ["daily"])).sorted()
    }

    /// The store named on the command line, or nil when there is none to read.
    static func store(_ words: [String]) throws -> (any Store)? {
        let env = ProcessInfo.processInfo.environment
        var location = env["STREAKD_STORE"].flatMap { $0.isEmpty ? nil : $0 } ?? Paths(environment: env).defaultStore
        if let named = value(of: "--store", in: words) { location = unquoted(named) }
        if location.hasPrefix("postgres://") || location.hasPrefix("postgresql://") {
            return try PostgresStore(url: location, access: .read)
        }
        if location.hasPrefix("sqlite://") { location = String(location.dropFirst("sqlite://".count)) }
        guard !location.contains("://"), FileManager.default.fileExists(atPath: location) else { return nil }
        return try SQLiteStore(path: location, access: .read, anyVersion: true)
    }

    /// The value of an option in the words (`--store X` or `--store=X`).
    static func value(of option: String, in words: [String]) -> String? {
        for (i, word) in words.enumerated() {
            if word == option, i + 1 < words.count { return words[i + 1] }
            if word.hasPrefix(option + "=") { return String(word.dropFirst(option.count + 1)) }
        }
        return nil
    }

    /// Options whose next word is their value.
    static let takingValues: Set<String> = [
        "--store", "--config", "--now", "-o", "--streak", "--tz", "--remind-at", "--at", "--id", "--meta", "--lang",
        "--weeks", "--date", "--until", "--since", "-S", "-U", "--kind", "-n", "--lines", "-D", "--directory", "--file",
        "--store-id", "--format", "--user", "-p", "--priority", "-g", "--grep", "--host", "--scope", "--listen",
    ]

    /// Words that name commands rather than arguments.
    static let commandWords: Set<String> = [
        "user", "add", "set", "list", "remove", "import", "checkin", "status", "calendar", "freeze", "use", "preview",
        "tick", "refill", "log", "config", "check", "badges", "help",
    ]

    /// The user the command line is about: `--user ID`, else its first argument after the commands.
    static func userArgument(_ words: [String]) -> String? {
        if let user = value(of: "--user", in: words) { return unquoted(user) }
        var i = 1
        while i < words.count {
            let word = words[i]
            if takingValues.contains(word) {
                i += 2
                continue
            }
            if !word.hasPrefix("-") && !commandWords.contains(word) && !word.isEmpty { return unquoted(word) }
            i += 1
        }
        return nil
    }

    /// A shell word without the quotes around it (completion gets words as typed).
    static func unquoted(_ word: String) -> String {
        if word.count >= 2, let first = word.first, first == word.last, first == "'" || first == "\"" {
            return String(word.dropFirst().dropLast())
        }
        return word
    }
}
