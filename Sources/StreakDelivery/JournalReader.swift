import CProcess  // declares timespec for this module since its header includes <time.h>
import CSystemd
import Foundation
import StreakCore

/// Reads streakd's entries back from the journal through sd-journal: notifications and "delivery
/// given up" entries, optionally of one user and one kind. Not for use from several threads.
public final class JournalReader {
    /// Which journal to read.
    public enum Source: Sendable, Equatable {
        /// The local machine's journals (`SD_JOURNAL_LOCAL_ONLY`): the system journal and the
        /// user journals this process may read.
        case local
        /// Every journal found in the default places, other machines' too (`journalctl -m`: those
        /// systemd-journal-remote keeps under /var/log/journal/remote, for one).
        case merged
        /// The journal files in one directory (as `journalctl -D`).
        case directory(String)
        /// These journal files (as `journalctl --file`).
        case files([String])
    }

    /// Which deliveries' entries to read besides the notifications.
    public enum Deliveries: Sendable {
        /// Notifications, and deliveries failed or given up.
        case all
        /// Only deliveries that failed (and will be tried again) or were given up.
        case failedOrDead
        /// Only deliveries given up.
        case dead
    }

    /// Entries of one user, one kind and one store, and which deliveries' entries.
    public struct Filter: Sendable {
        public var user: String?
        public var kind: NotificationKind?
        /// The store's identity (`STREAKD_STORE`): nil reads every store's entries.
        public var store: String?
        public var deliveries: Deliveries
        /// Only entries of these priorities (`PRIORITY`, 0 emerg to 7 debug), as journalctl -p.
        public var priorities: ClosedRange<Int>?
        /// Only entries the machine of this name logged (`_HOSTNAME`), as journalctl _HOSTNAME=.
        public var host: String?

        public init(
            user: String? = nil, kind: NotificationKind? = nil, store: String? = nil, deliveries: Deliveries = .all,
            priorities: ClosedRange<Int>? = nil, host: String? = nil
        ) {
            self.user = user
            self.kind = kind
            self.store = store
            self.deliveries = deliveries
            self.priorities = priorities
            self.host = host
        }

        /// The MESSAGE_IDs of the entries read.
        var messageIDs: [String] {
            switch deliveries {
            case .all: JournalReader.messageIDs
            case .failedOrDead: [JournalSink.failedMessageID, JournalSink.deadMessageID]
            case .dead: [JournalSink.deadMessageID]
            }
        }
    }

    /// Every MESSAGE_ID streakd writes: one per kind, and the failed and dead deliveries'.
    public static let messageIDs =
        NotificationKind.allCases.map(\.messageID) + [JournalSink.failedMessageID, JournalSink.deadMessageID]

    private let journal: OpaquePointer
    /// Entries matched by the filter but skipped because their fields are not streakd's.
    public private(set) var skipped = 0
    /// Whether each entry read keeps every field (`LogEntry.allFields`), for `log -o verbose`.
    public var keepAllFields = false

    /// Opens the journal and sets up the matches: `SYSLOG_IDENTIFIER=streakd`, one of streakd's
    /// MESSAGE_IDs, and the filter's fields (sd-journal ORs values of one field and ANDs fields).
    public init(source: Source = .local, filter: Filter = Filter()) throws(JournalError) {
        var opened: OpaquePointer?
        let result: Int32
        let place: String
        switch source {
        case .local:
            result = sd_journal_open(&opened, Int32(SD_JOURNAL_LOCAL_ONLY))
            place = "the local journal"
        case .merged:
            result = sd_journal_open(&opened, 0)
            place = "the journals of this machine and others kept here"
        case .directory(let path):
            result = sd_journal_open_directory(&opened, path, 0)
            place = "the journal in \(path)"
        case .files(let paths):
            place =
                paths.count == 1 ? "the journal file \(paths[0])" : "the journal files \(paths.joined(separator: ", "))"
            for path in paths where access(path, R_OK) != 0 {
                throw JournalError("access", -errno, "cannot open \(path)")
            }
            result = Self.withCStrings(paths) { sd_journal_open_files(&opened, $0, 0) }
        }
        guard result >= 0, let opened else { throw JournalError("sd_journal_open", result, "cannot open \(place)") }
        journal = opened  // from here on, a throw runs deinit, which closes it
        switch source {
        case .local, .merged:
            guard sd_journal_has_runtime_files(journal) > 0 || sd_journal_has_persistent_files(journal) > 0 else {
                throw JournalError(
                    "cannot open \(place): no journal files could be read (is systemd-journald running, and may this "
                        + "user read its journal? members of the group systemd-journal may)")
            }
        case .directory(let path):
            // (sd-journal's has_*_files answer for /run and /var alone.)
            guard Self.holdsJournalFiles(path) else {
                throw JournalError("cannot open \(place): there are no journal files (*.journal) in it")
            }
        case .files:
            break
        }
        var matches = ["SYSLOG_IDENTIFIER=streakd"] + filter.messageIDs.map { "MESSAGE_ID=\($0)" }
        if let user = filter.user { matches.append("STREAKD_USER=\(user)") }
        if let kind = filter.kind { matches.append("STREAKD_KIND=\(kind.rawValue)") }
        if let store = filter.store { matches.append("STREAKD_STORE=\(store)") }
        if let priorities = filter.priorities { matches += priorities.map { "PRIORITY=\($0)" } }
        if let host = filter.host { matches.append("_HOSTNAME=\(host)") }
        for match in matches {
            let r = match.withCString { sd_journal_add_match(journal, $0, 0) }
            if r < 0 {
                throw JournalError("sd_journal_add_match", r, "cannot filter the journal on \(match)")
            }
        }
    }

    deinit { sd_journal_close(journal) }

    /// Whether a folder, or a folder in it (journald's machine-id folders), holds a journal file.
    static func holdsJournalFiles(_ path: String) -> Bool {
        let files = FileManager.default
        func journals(_ dir: String) -> [String] {
            ((try? files.contentsOfDirectory(atPath: dir)) ?? []).filter {
                $0.hasSuffix(".journal") || $0.hasSuffix(".journal~")
            }
        }
        if !journals(path).isEmpty { return true }
        return ((try? files.contentsOfDirectory(atPath: path)) ?? []).contains { !journals(path + "/" + $0).isEmpty }
    }

    /// Calls `body` with a NULL-terminated array of C strings.
    private static func withCStrings<T>(
        _ strings: [String], _ body: (UnsafeMutablePointer<UnsafePointer<CChar>?>) -> T
    ) -> T {
        let copies = strings.map { strdup($0) }
        defer { copies.forEach { free($0) } }
        var pointers: [UnsafePointer<CChar>?] = copies.map { $0.map { UnsafePointer($0) } } + [nil]
        return pointers.withUnsafeMutableBufferPointer { body($0.baseAddress!) }
    }

    public func seekHead() throws(JournalError) { try check("sd_journal_seek_head", sd_journal_seek_head(journal)) }
    public func seekTail() throws(JournalError) { try check("sd_journal_seek_tail", sd_journal_seek_tail(journal)) }

    /// Moves before the first entry at or after `microseconds` (for `next()`), or after the last
    /// one before it (for `previous()`).
    public func seek(realtime microseconds: UInt64) throws(JournalError) {
        try check("sd_journal_seek_realtime_usec", sd_journal_seek_realtime_usec(journal, microseconds))
    }

    /// The next streakd entry, or nil at the end (for now: more may arrive, see `wait`).
    public func next() throws(JournalError) -> LogEntry? { try step("sd_journal_next", sd_journal_next) }

    /// The previous streakd entry, or nil at the start.
    public func previous() throws(JournalError) -> LogEntry? { try step("sd_journal_previous", sd_journal_previous) }

    /// Waits up to `timeout` for the journal to change; answers whether it did. A signal cuts
    /// the wait short (answering false), so a caller can check a stop flag: this polls the
    /// journal's descriptor itself, since sd_journal_wait would retry after EINTR.
    @discardableResult
    public func wait(timeout: Duration) throws(JournalError) -> Bool {
        let fd = sd_journal_get_fd(journal)
        try check("sd_journal_get_fd", fd)
        let events = sd_journal_get_events(journal)
        try check("sd_journal_get_events", events)
        let (seconds, attoseconds) = timeout.components
        var milliseconds = Int32(clamping: max(0, seconds) * 1000 + max(0, attoseconds) / 1_000_000_000_000_000)
        var due: UInt64 = 0  // when sd-journal wants to be called again (CLOCK_MONOTONIC µs), if ever
        if sd_journal_get_timeout(journal, &due) >= 0 && due != UInt64.max {
            var now = timespec()
            clock_gettime(CLOCK_MONOTONIC, &now)
            let nowMicro = UInt64(now.tv_sec) * 1_000_000 + UInt64(now.tv_nsec) / 1000
            milliseconds = min(milliseconds, Int32(clamping: due > nowMicro ? (due - nowMicro + 999) / 1000 : 0))
        }
        var watch = pollfd(fd: fd, events: Int16(truncatingIfNeeded: events), revents: 0)
        if poll(&watch, 1, milliseconds) < 0 {
            if errno == EINTR { return false }
            throw JournalError("poll", -errno, "cannot wait for the journal")
        }
        let r = sd_journal_process(journal)
        try check("sd_journal_process", r)
        return r != Int32(SD_JOURNAL_NOP)
    }

    /// The current entry's cursor, to come back to it with `seek(cursor:)`.
    public func cursor() throws(JournalError) -> String {
        var text: UnsafeMutablePointer<CChar>?
        try check("sd_journal_get_cursor", sd_journal_get_cursor(journal, &text))
        defer { free(text) }
        return text.map { String(cString: $0) } ?? ""
    }

    /// Moves onto the entry with this cursor (nearest if gone): `next()` then answers the entry
    /// after it.
    public func seek(cursor: String) throws(JournalError) {
        try check("sd_journal_seek_cursor", sd_journal_seek_cursor(journal, cursor))
        // A seek leaves the position between entries: step onto the cursor's entry itself.
        let r = sd_journal_next(journal)
        try check("sd_journal_next", r)
        if r > 0 && sd_journal_test_cursor(journal, cursor) <= 0 {
            // The entry is gone (rotated away): stand before its successor instead.
            try check("sd_journal_previous", sd_journal_previous(journal))
        }
    }

    /// Moves one entry back without reading it; answers false at the start. `current()` reads it.
    public func stepBack() throws(JournalError) -> Bool {
        let r = sd_journal_previous(journal)
        try check("sd_journal_previous", r)
        return r > 0
    }

    /// Entries for which this answers false are passed over as if the filter had not matched
    /// them (a test sd-journal's matches cannot make, such as a field's absence).
    public var accept: (LogEntry) -> Bool = { _ in true }

    private func step(_ name: String, _ move: (OpaquePointer?) -> Int32) throws(JournalError) -> LogEntry? {
        while true {
            let r = move(journal)
            try check(name, r)
            if r == 0 { return nil }
            if let entry = try current() { return entry }
        }
    }

    /// The entry at the current position, decoded; nil when it is not a streakd entry (counted in
    /// `skipped`) or not accepted.
    public func current() throws(JournalError) -> LogEntry? {
        var realtime: UInt64 = 0
        try check("sd_journal_get_realtime_usec", sd_journal_get_realtime_usec(journal, &realtime))
        var fields: [String: String] = [:]
        var all: [LogEntry.Field] = []
        sd_journal_restart_data(journal)
        var data: UnsafeRawPointer?
        var length = 0
        while true {
            let r = sd_journal_enumerate_data(journal, &data, &length)
            try check("sd_journal_enumerate_data", r)
            guard r > 0, let data else { break }
            let bytes = UnsafeRawBufferPointer(start: data, count: length)
            guard let equals = bytes.firstIndex(of: UInt8(ascii: "=")) else { continue }
            let name = String(decoding: bytes[..<equals], as: UTF8.self)
            if keepAllFields {
                all.append(LogEntry.Field(name, String(decoding: bytes[(equals + 1)...], as: UTF8.self)))
            }
            if fields[name] == nil && Self.wanted.contains(name) {
                fields[name] = String(decoding: bytes[(equals + 1)...], as: UTF8.self)
            }
        }
        guard var entry = LogEntry(fields: fields, realtimeMicroseconds: realtime) else {
            skipped += 1
            return nil
        }
        guard accept(entry) else { return nil }
        if keepAllFields {
            entry.allFields = all
            entry.cursor = try cursor()
        }
        return entry
    }

    private static let wanted: Set<String> = [
        "MESSAGE", "MESSAGE_ID", "STREAKD_KIND", "STREAKD_USER", "STREAKD_STREAK", "STREAKD_LOCAL_DATE",
        "STREAKD_STREAK_LENGTH", "STREAKD_DUE", "STREAKD_LOCAL_DUE", "STREAKD_TIMEZONE", "STREAKD_SINK",
        "STREAKD_ATTEMPTS", "STREAKD_ERROR", "STREAKD_RETRY", "STREAKD_STORE", "STREAKD_BADGE", "STREAKD_LEVEL",
        "_HOSTNAME", "_UID", "_COMM", "_EXE", "_SYSTEMD_UNIT", "_TRANSPORT",
    ]

    private func check(_ name: String, _ result: Int32) throws(JournalError) {
        if result < 0 { throw JournalError(name, result, "cannot read the journal") }
    }
}

/// The journal could not be opened or read.
public struct JournalError: Error, CustomStringConvertible, Sendable {
    public var description: String

    public init(_ description: String) { self.description = description }

    /// "`what`: `call`: `strerror`", e.g. "cannot open the local journal: sd_journal_open: Permission denied".
    init(_ call: String, _ result: Int32, _ what: String) {
        description = "\(what): \(call): \(String(cString: strerror(-result)))"
    }
}
