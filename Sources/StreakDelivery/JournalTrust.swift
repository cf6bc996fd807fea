/// Which journal entries `log` takes for streakd's own (docs/RULES.md, "The log"). Anyone may
/// write an entry with `SYSLOG_IDENTIFIER=streakd`, streakd's MESSAGE_IDs and `STREAKD_*`
/// fields, a store's identity included (`logger --journald`); what they cannot write are the
/// fields journald itself adds, from the sender's credentials and cgroup: `_UID`, `_TRANSPORT`,
/// `_SYSTEMD_UNIT`. An entry is trusted when it came through sd-journal's native protocol
/// (`_TRANSPORT=journal`, as streakd sends) and either its `_UID` is root's, the reader's own or
/// the store file's owner's (the user the units or a desktop run streakd as), or it came from one
/// of streakd's system units (`_SYSTEMD_UNIT=streakd-tick.service`, …: only the service manager
/// puts a process there, whatever user a `DynamicUser=` gives it). `_COMM` and `_EXE` decide
/// nothing (a process names itself, and a user may copy the binary), but are shown for an entry
/// that is not trusted.
public struct JournalTrust: Sendable, Equatable {
    /// The users whose entries are streakd's.
    public var uids: Set<UInt32>

    public init(uids: Set<UInt32>) { self.uids = uids }

    /// Whether `writer` wrote as streakd does.
    public func trusts(_ writer: LogEntry.Writer) -> Bool {
        guard writer.transport == "journal" else { return false }
        if let uid = writer.uid, uids.contains(uid) { return true }
        return writer.unit.map(Self.isStreakdSystemUnit) ?? false
    }

    /// `streakd.service`, `streakd-NAME.service`, or an instance of either (`streakd-tick@x.service`).
    static func isStreakdSystemUnit(_ unit: String) -> Bool {
        guard unit.hasSuffix(".service") else { return false }
        let base = unit.dropLast(".service".count).split(separator: "@", maxSplits: 1).first ?? ""
        if base == "streakd" { return true }
        guard base.hasPrefix("streakd-") else { return false }
        let rest = base.dropFirst("streakd-".count)
        return !rest.isEmpty && rest.allSatisfy { ($0.isLetter && $0.isASCII) || $0 == "-" }
    }

    /// For a mark and a message: `uid 65534, logger, /usr/bin/logger`, as much as the entry says.
    public static func describe(_ writer: LogEntry.Writer) -> String {
        var parts = [writer.uid.map { "uid \($0)" } ?? "no uid"]
        if let comm = writer.comm { parts.append(comm) }
        if let unit = writer.unit { parts.append(unit) }
        if writer.transport != "journal" { parts.append("transport \(writer.transport ?? "unknown")") }
        return parts.joined(separator: ", ")
    }
}
