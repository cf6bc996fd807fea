import Logging
import StreakCore
import StreakDelivery

/// What `log` is asked for (SPEC §6, and journalctl's options where streakd has the same).
public struct LogRequest: Sendable {
    /// `-o`: one line per entry (`short`), a JSON object on a line (`json`) or over several
    /// (`json-pretty`), the message alone (`cat`), or every field of the entry (`verbose`).
    public enum Format: String, CaseIterable, Sendable {
        case short, json
        case jsonPretty = "json-pretty"
        case cat, verbose
    }

    /// Whose entries: one store's (by its identity), every store's, or those that carry no store
    /// (written before streakd recorded its store, for a store that has no identity yet).
    public enum Stores: Sendable, Equatable {
        case one(String)
        case all
        case withoutIdentity
    }

    public var follow = false
    /// `N`, `+N` (the first N) or `all`.
    public var lines: String?
    public var since: String?
    public var until: String?
    public var user: String?
    public var kind: String?
    /// Newest first.
    public var reverse = false
    /// Times in UTC rather than in the local zone (shown and read).
    public var utc = false
    /// No `-- No entries --` line when nothing matched.
    public var quiet = false
    public var format = Format.short
    public var deliveries = JournalReader.Deliveries.all
    public var source = JournalReader.Source.local
    public var stores = Stores.all
    /// Whose entries are streakd's own (`JournalTrust`); the others are left out unless
    /// `untrusted`, then shown marked.
    public var trust = JournalTrust(uids: [0])
    public var untrusted = false
    /// `-p`: a level (name or number: that and the more urgent ones) or a range `FROM..TO`.
    public var priority: String?
    /// `-g`: a regular expression the message must match (case-insensitive when it has no
    /// capital letter, as journalctl's).
    public var grep: String?
    /// `--host`: the entries one machine logged (`_HOSTNAME`), as in a fleet's journal (`-D`).
    public var host: String?
    /// Failed and dead deliveries in colour (`LogColor.enabled`).
    public var color = false

    public init() {}
}

extension Context {
    /// `log` (SPEC §6): streakd's notifications and failed or given-up deliveries, read from the
    /// journal, oldest first (newest first with `reverse`), times in `localZone` (or UTC). With
    /// `follow`, prints entries as they arrive until the context's stop token is triggered (SIGINT
    /// or SIGTERM) or `stopped()` answers true.
    public func log(_ request: LogRequest, localZone: Zone, stopped: () -> Bool = { false }) throws {
        func stop() -> Bool { self.stop.requested || stopped() }
        let zone = request.utc ? LocalZone.utc : localZone
        var filter = JournalReader.Filter(
            user: try logUser(request.user), kind: try logKind(request.kind), deliveries: request.deliveries,
            priorities: try request.priority.map(LogFilters.priorities), host: try request.host.map(LogFilters.host))
        let pattern = try request.grep.map(LogFilters.pattern)
        if case .one(let id) = request.stores { filter.store = id }
        let from = try request.since.map { try timeArgument($0, option: "--since", zone: zone) }
        let to = try request.until.map { try timeArgument($0, option: "--until", zone: zone) }
        if let from, let to, from > to {
            throw StreakdError.usage(
                "--since \(show(from, in: zone)) is after --until \(show(to, in: zone)); give --since an earlier time")
        }
        if request.follow && to != nil {
            throw StreakdError.usage("-f and --until cannot be combined: a followed log has no end")
        }
        if request.follow && request.reverse {
            throw StreakdError.usage("-f and -r cannot be combined: a followed log grows at its end")
        }
        let limit = try request.lines.map(logLimit) ?? (request.follow && from == nil ? .last(10) : .all)
        if request.follow, case .first = limit {
            throw StreakdError.usage("-f and -n +N cannot be combined: a followed log shows its last entries")
        }
        var shown = 0
        func emit(_ entry: LogEntry) {
            let trusted = request.trust.trusts(entry.writer)
            printer.out(Self.line(entry, format: request.format, zone: zone, trusted: trusted, color: request.color))
            shown += 1
        }
        // Entries someone else wrote under streakd's name: left out (counted), or shown marked.
        var hidden = 0
        var hiddenWriters: [String] = []
        let trust = request.trust
        do {
            let reader = try JournalReader(source: request.source, filter: filter)
            reader.keepAllFields = request.format == .verbose
            let withoutIdentity = request.stores == .withoutIdentity
            let showUntrusted = request.untrusted
            reader.accept = { entry in
                if withoutIdentity && entry.store != nil { return false }
                if let pattern, !LogFilters.matches(entry, pattern) { return false }
                if showUntrusted || trust.trusts(entry.writer) { return true }
                hidden += 1
                let who = JournalTrust.describe(entry.writer)
                if hiddenWriters.count < 3 && !hiddenWriters.contains(who) { hiddenWriters.append(who) }
                return false
            }
            switch limit {
            case .last(let n):
                let found = try reader.last(n, since: from, until: to)
                for entry in request.reverse ? found.reversed() : found where !stop() { emit(entry) }
            case .first(let n):
                var found: [LogEntry] = []
                do {
                    try reader.forward(since: from, until: to) { entry in
                        if found.count >= n || stop() { throw Stopped() }
                        found.append(entry)
                    }
                } catch is Stopped {
                    // The first N are read.
                }
                for entry in request.reverse ? found.reversed() : found { emit(entry) }
            case .all:
                let walk = request.reverse ? reader.backward : reader.forward
                try walk(from, to) { entry in
                    if stop() { throw Stopped() }
                    emit(entry)
                }
            }
            while request.follow && !stop() {
                while !stop(), let entry = try reader.next() {
                    if from.map({ entry.logged >= $0 }) ?? true { emit(entry) }
                }
                if !stop() { try reader.wait(timeout: .milliseconds(200)) }
            }
            if reader.skipped > 0 {
                logger.debug("skipped journal entries that are not streakd's", metadata: ["count": "\(reader.skipped)"])
            }
        } catch let error as JournalError {
            throw StreakdError(.unavailable, error.description)
        } catch is Stopped {
            // A stop signal during the first read, or the first N read: done.
        }
        if shown == 0 && !request.follow && !request.quiet && request.format != .json && request.format != .jsonPretty {
            printer.out("-- No entries --")
        }
        if hidden > 0 {
            printer.warn(
                "left out \(hidden) entr\(hidden == 1 ? "y" : "ies") that streakd did not write (by "
                    + hiddenWriters.joined(separator: "; ") + "): they carry its name and fields, but journald says "
                    + "another user or program sent them; --untrusted shows them, marked UNTRUSTED")
        }
    }

    private struct Stopped: Error {}

    enum Limit: Equatable {
        case all
        case last(Int)
        case first(Int)
    }

    /// One entry as `format` shows it, times in `zone`; one streakd did not write (`trusted`
    /// false, shown with `--untrusted`) marked `UNTRUSTED (who)`, or in JSON `"trusted": false`
    /// with the writer's `uid` and `comm`.
    /// With `color`, a failed delivery's line (`short`, `cat`) is yellow and a dead one's red, as
    /// journalctl shows warnings and errors.
    static func line(
        _ entry: LogEntry, format: LogRequest.Format, zone: Zone, trusted: Bool = true, color: Bool = false
    ) -> String {
        let mark = trusted ? "" : "UNTRUSTED (\(JournalTrust.describe(entry.writer))) "
        switch format {
        case .json, .jsonPretty:
            var json = entry.json
            if !trusted, case .object(var fields) = json {
                fields += [
                    ("trusted", .bool(false)), ("uid", entry.writer.uid.map { .int(Int($0)) } ?? .null),
                    ("comm", .optional(entry.writer.comm)),
                ]
                json = .object(fields)
            }
            return format == .json ? json.text : json.prettyText
        case .short:
            var marked = entry
            if !trusted { marked.host = (entry.host.map { $0 + " " } ?? "") + mark.dropLast() }
            return LogColor.paint(shortLine(marked, zone: zone), entry, on: color)
        case .cat: return LogColor.paint(oneLine(mark + entry.notification.message), entry, on: color)
        case .verbose:
            let time = timeWithMicroseconds(entry.realtimeMicroseconds, in: zone)
            let head = (entry.cursor.map { "\(time) [\($0)]" } ?? time) + (trusted ? "" : " " + mark.dropLast())
            return ([oneLine(head)] + entry.allFields.map { "    \($0.name)=\(oneLine($0.value))" })
                .joined(separator: "\n")
        }
    }

    /// `LOGGED HOST KIND USER/STREAK DATE: MESSAGE`; for a failed delivery `LOGGED HOST FAILED SINK
    /// KIND USER/STREAK DATE (attempt N, next try from T): ERROR`; for a dead one `LOGGED HOST DEAD
    /// SINK KIND USER/STREAK DATE after N attempts: ERROR`. An achievement says `USER badge B` or
    /// `USER level N` for `USER/STREAK`. One line, control characters as spaces.
    static func shortLine(_ entry: LogEntry, zone: Zone = LocalZone.utc) -> String {
        let n = entry.notification
        let about = "\(n.kind.rawValue) \(n.about) \(n.localDate)"
        let head = show(entry.logged, in: zone) + (entry.host.map { " " + $0 } ?? "")
        let line: String
        if let dead = entry.dead {
            let attempts = "\(dead.attempts) attempt\(dead.attempts == 1 ? "" : "s")"
            line = "\(head) DEAD \(dead.sink) \(about) after \(attempts): \(dead.error)"
        } else if let failed = entry.failed {
            line =
                "\(head) FAILED \(failed.sink) \(about) (attempt \(failed.attempts), next try from "
                + "\(show(failed.retry, in: zone))): \(failed.error)"
        } else {
            line = "\(head) \(about): \(n.message)"
        }
        return oneLine(line)
    }

    /// RFC 3339 in `zone`: `2026-11-21T20:00:03+01:00`, or `…Z` in UTC.
    static func show(_ instant: Instant, in zone: Zone) -> String {
        RFC3339.format(instant, offset: zone.offset(at: instant), utcZ: true)
    }

    /// As `show`, with the microseconds: `2026-11-21T20:00:03.500000+01:00`.
    static func timeWithMicroseconds(_ microseconds: UInt64, in zone: Zone) -> String {
        let text = show(Instant(seconds: Int64(microseconds / 1_000_000)), in: zone)
        let fraction = String(microseconds % 1_000_000)
        let padded = String(repeating: "0", count: 6 - fraction.count) + fraction
        let cut = text.index(text.startIndex, offsetBy: 19)
        return text[..<cut] + "." + padded + text[cut...]
    }

    private func show(_ instant: Instant, in zone: Zone) -> String { Self.show(instant, in: zone) }

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

    private func logLimit(_ text: String) throws -> Limit {
        if text == "all" { return .all }
        let first = text.hasPrefix("+")
        let digits = first ? text.dropFirst() : Substring(text)
        guard !digits.isEmpty, digits.allSatisfy({ $0.isASCII && $0.isNumber }), let n = Int(digits) else {
            throw StreakdError.usage(
                "-n: \(quoted(text)) is not a number of entries; use N (the last N), +N (the first N), or all")
        }
        return first ? .first(n) : .last(n)
    }
}
