import Logging
import StreakCore
import StreakDelivery

extension Context {
    /// `log` (SPEC §6): streakd's notifications and given-up deliveries, read from the journal,
    /// oldest first. `lines` is `N` or `all` (default: all, or the last 10 when following and no
    /// `since` is given). With `follow`, prints entries as they arrive until `stop()` answers
    /// true (SIGINT or SIGTERM by default).
    public func log(
        follow: Bool = false, lines: String? = nil, since: String? = nil, until: String? = nil, user: String? = nil,
        kind: String? = nil, stop: () -> Bool = { StopSignals.requested }
    ) throws {
        let filter = JournalReader.Filter(user: try logUser(user), kind: try logKind(kind))
        let from = try since.map { try logTime($0, option: "--since") }
        let to = try until.map { try logTime($0, option: "--until") }
        if let from, let to, from > to {
            throw StreakdError.usage("--since \(from) is after --until \(to); give --since an earlier time")
        }
        if follow && to != nil {
            throw StreakdError.usage("-f and --until cannot be combined: a followed log has no end")
        }
        // `-n all` is .some(nil): no limit, even when following.
        let limit = try lines.map(logLimit) ?? (follow && from == nil ? 10 : nil)
        if follow { StopSignals.install() }
        do {
            let reader = try JournalReader(filter: filter)
            if let limit {
                for entry in try reader.last(limit, since: from, until: to) where !stop() { show(entry) }
            } else {
                try reader.forward(since: from, until: to) { entry in
                    if stop() { throw Stopped() }
                    show(entry)
                }
            }
            while follow && !stop() {
                while !stop(), let entry = try reader.next() {
                    if from.map({ entry.logged >= $0 }) ?? true { show(entry) }
                }
                if !stop() { try reader.wait(timeout: .milliseconds(200)) }
            }
            if reader.skipped > 0 {
                logger.debug("skipped journal entries that are not streakd's", metadata: ["count": "\(reader.skipped)"])
            }
        } catch let error as JournalError {
            throw StreakdError(.unavailable, error.description)
        } catch is Stopped {
            // A stop signal during the first read: done, as after following.
        }
    }

    private struct Stopped: Error {}

    /// One record: the JSON object, or `LOGGED KIND USER/STREAK DATE: MESSAGE`, or for a dead
    /// delivery `LOGGED DEAD SINK KIND USER/STREAK DATE after N attempts: ERROR`.
    private func show(_ entry: LogEntry) {
        printer.record(entry.json, short: Self.shortLine(entry))
    }

    static func shortLine(_ entry: LogEntry) -> String {
        let n = entry.notification
        let about = "\(n.kind.rawValue) \(n.user)/\(n.streak) \(n.localDate)"
        let line: String
        if let dead = entry.dead {
            let attempts = "\(dead.attempts) attempt\(dead.attempts == 1 ? "" : "s")"
            line = "\(entry.logged) DEAD \(dead.sink) \(about) after \(attempts): \(dead.error)"
        } else {
            line = "\(entry.logged) \(about): \(n.message)"
        }
        // One line per entry, and nothing a terminal would act on: control characters become spaces.
        // (0xC2 leads the UTF-8 of U+0080...U+00BF, where the C1 controls are.)
        guard line.utf8.contains(where: { $0 < 0x20 || $0 == 0x7f || $0 == 0xc2 }) else { return line }
        return String(
            String.UnicodeScalarView(
                line.unicodeScalars.map { $0.value < 0x20 || (0x7f...0x9f).contains($0.value) ? " " : $0 }))
    }

    private func logUser(_ user: String?) throws -> String? {
        guard let user else { return nil }
        if let problem = Validate.userID(user) {
            throw StreakdError.usage("--user: \(quoted(user)) is not a user id; use \(problem)")
        }
        return user
    }

    private func logKind(_ kind: String?) throws -> NotificationKind? {
        guard let kind else { return nil }
        guard let known = NotificationKind(rawValue: kind) else {
            let names = NotificationKind.allCases.map(\.rawValue).joined(separator: ", ")
            throw StreakdError.usage("--kind: \(quoted(kind)) is not a kind; use one of \(names)")
        }
        return known
    }

    private func logTime(_ text: String, option: String) throws -> Instant {
        guard let instant = TimeArgument.parse(text, now: now) else {
            throw StreakdError.usage("\(option): \(quoted(text)) is not a time; \(TimeArgument.rule)")
        }
        return instant
    }

    private func logLimit(_ text: String) throws -> Int? {
        if text == "all" { return nil }
        guard let n = Int(text), n >= 0, text.first != "+" else {
            throw StreakdError.usage("-n: \(quoted(text)) is not a number of entries; use 0 or more, or all")
        }
        return n
    }
}
