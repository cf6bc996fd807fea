import Foundation
import StreakCore

/// The zone of this machine (or of `TZ`), for showing and reading times as journalctl does:
/// `TZ` when set (a zone name, `:name`, a path, or a POSIX rule such as `CET-1CEST,M3.5.0,M10.5.0/3`;
/// empty is UTC), else `/etc/localtime`, else UTC.
public enum LocalZone {
    public static func current(environment: [String: String], zones: ZoneBook = ZoneBook()) -> Zone {
        if let tz = environment["TZ"] {
            if tz.isEmpty { return utc }
            let name = tz.hasPrefix(":") ? String(tz.dropFirst()) : tz
            if name.hasPrefix("/") { return file(name) ?? utc }
            if case .success(let zone) = zones.zone(name) { return zone }
            if let rule = PosixTZ(name),
                let table = TransitionTable(initial: rule.standard, transitions: [], rule: rule)
            {
                return Zone(identifier: name, rules: TransitionRules(table: table))
            }
            return utc
        }
        return file("/etc/localtime") ?? utc
    }

    /// UTC, as `--utc` shows times.
    public static var utc: Zone {
        Zone(
            identifier: "UTC",
            rules: TransitionRules(table: TransitionTable(initial: 0, transitions: [])!))
    }

    /// A TZif file: named after the tzdata file it links to, if it does (`/etc/localtime`).
    static func file(_ path: String) -> Zone? {
        guard let data = FileManager.default.contents(atPath: path), let table = TZif.table([UInt8](data)) else {
            return nil
        }
        let target = (try? FileManager.default.destinationOfSymbolicLink(atPath: path)) ?? path
        let name = target.range(of: "zoneinfo/").map { String(target[$0.upperBound...]) } ?? "localtime"
        return Zone(identifier: name, rules: TransitionRules(table: table))
    }
}
