import Foundation
import Logging

/// Log lines for a standard error systemd connected to the journal (`JOURNAL_STREAM` names its
/// device and inode): each line starts with its syslog priority (`<7>` for debug), which
/// journald reads as the entry's `PRIORITY`, and carries no time (the journal has it). So
/// `journalctl -u streakd -p debug` shows serve's requests and `-p warning` only its problems.
struct JournalStreamLogHandler: LogHandler {
    var metadata: Logger.Metadata = [:]
    var metadataProvider: Logger.MetadataProvider?
    var logLevel: Logger.Level = .info

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        var all = metadata
        for (key, value) in event.metadata ?? [:] { all[key] = value }
        let fields = all.sorted { $0.key < $1.key }.map { " \($0.key)=\($0.value)" }.joined()
        // One line, one entry: a line feed in a value would start another.
        let text = "\(event.message)\(fields)".replacingOccurrences(of: "\n", with: " ")
        FileHandle.standardError.write(Data("<\(Self.priority(event.level))>\(text)\n".utf8))
    }

    /// syslog's priority of a level.
    static func priority(_ level: Logger.Level) -> Int {
        switch level {
        case .trace, .debug: 7
        case .info: 6
        case .notice: 5
        case .warning: 4
        case .error: 3
        case .critical: 2
        }
    }

    /// Whether standard error is the journal stream systemd gave this process.
    static func standardErrorIsTheJournal(_ env: [String: String]) -> Bool {
        guard let named = env["JOURNAL_STREAM"]?.split(separator: ":"), named.count == 2 else { return false }
        var info = stat()
        guard fstat(2, &info) == 0 else { return false }
        return named[0] == "\(info.st_dev)" && named[1] == "\(info.st_ino)"
    }
}
