import StreakCore

/// Reading a time window, as `journalctl --since/--until [-n N]` does. Bounds are whole seconds,
/// both inclusive, compared with `LogEntry.logged` (the realtime to the second, as printed).
extension JournalReader {
    /// Every entry logged from `since` to `until`, oldest first, handed to `body` as it is read.
    /// Without `until`, leaves the position at the end, so `next()` answers entries written later.
    public func forward(since: Instant?, until: Instant?, _ body: (LogEntry) throws -> Void) throws {
        if let since { try seek(realtime: Self.microseconds(since)) } else { try seekHead() }
        while let entry = try next() {
            if let since, entry.logged < since { continue }
            if let until, entry.logged > until { return }
            try body(entry)
        }
    }

    /// The last `count` entries logged from `since` to `until`, oldest first. Without `until`,
    /// leaves the position on the newest entry of the journal, so `next()` answers entries
    /// written after the walk began.
    public func last(_ count: Int, since: Instant?, until: Instant?) throws -> [LogEntry] {
        if let until {
            try seek(realtime: Self.microseconds(Instant(seconds: min(until.seconds, Int64.max - 1) + 1)))
        } else {
            try seekTail()
        }
        guard try stepBack() else {
            try seekHead()  // nothing yet: every entry that arrives is new
            return []
        }
        let newest = try cursor()
        var found: [LogEntry] = []
        var entry = try current()
        while found.count < count {
            if let entry {
                if let since, entry.logged < since { break }
                if until.map({ entry.logged <= $0 }) ?? true { found.append(entry) }
            }
            guard try stepBack() else { break }
            entry = try current()
        }
        try seek(cursor: newest)
        return found.reversed()
    }

    /// Every entry logged from `since` to `until`, newest first (`log -r`).
    public func backward(since: Instant?, until: Instant?, _ body: (LogEntry) throws -> Void) throws {
        if let until {
            try seek(realtime: Self.microseconds(Instant(seconds: min(until.seconds, Int64.max - 1) + 1)))
        } else {
            try seekTail()
        }
        while let entry = try previous() {
            if let until, entry.logged > until { continue }
            if let since, entry.logged < since { return }
            try body(entry)
        }
    }

    /// journald's realtime of an instant: saturating, never a trap (before 1970: 0).
    static func microseconds(_ instant: Instant) -> UInt64 {
        let (product, overflow) = UInt64(max(0, instant.seconds)).multipliedReportingOverflow(by: 1_000_000)
        return overflow ? UInt64.max : product
    }
}
