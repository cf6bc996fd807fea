import Foundation
import Logging
import StreakCore
import StreakStore
import Synchronization

/// Checks zone names against the system's tzdata and hands out `Zone`s.
///
/// A zone's rules come from its TZif file, read once and kept
/// (`TransitionRules`). A file that `TZif` refuses falls back to Foundation's
/// `TimeZone` for that name (logged as a warning, listed in `fallbacks`);
/// a name neither knows is not a zone.
public final class ZoneBook: Sendable {
    let directory: String
    let logger: Logger
    /// Zones are handed out `steadied(around:)` this instant (the run's now), when given.
    let around: Instant?
    /// The store whose zones these are, for the message of one that is not a zone (`stored`).
    let store: String?
    /// The zones handed out, by name, and the names whose rules came from Foundation.
    private let known = Mutex<(zones: [String: Zone], fallbacks: Set<String>)>(([:], []))

    public init(
        directory: String = "/usr/share/zoneinfo",
        logger: Logger = Logger(label: "streakd", factory: { _ in SwiftLogNoOpLogHandler() }),
        around: Instant? = nil, store: String? = nil
    ) {
        self.directory = directory
        self.logger = logger
        self.around = around
        self.store = store
    }

    /// Every zone name of the tzdata: each TZif file but the posix/ and right/ copies, sorted.
    public func names() -> [String] {
        guard let walker = FileManager.default.enumerator(atPath: directory) else { return [] }
        var names: [String] = []
        for case let path as String in walker where shapeProblem(path) == nil {
            guard let h = FileHandle(forReadingAtPath: directory + "/" + path) else { continue }
            defer { try? h.close() }
            if (try? h.read(upToCount: 4)) == Data("TZif".utf8) { names.append(path) }
        }
        return names.sorted()
    }

    /// The zones handed out so far whose rules come from Foundation.
    public var fallbacks: Set<String> { known.withLock { $0.fallbacks } }

    static let rule = "use an IANA zone name from the system's tzdata, such as Europe/Berlin or America/New_York"

    /// The zone, or an explanation of why the name is not one.
    public func zone(_ name: String) -> Result<Zone, StreakdError> {
        if let z = known.withLock({ $0.zones[name] }) { return .success(z) }
        if let problem = shapeProblem(name) { return .failure(.data(problem)) }
        // Read outside the lock; two threads asking at once both read it, and keep the first.
        guard let (rules, fellBack) = rules(name) else {
            return .failure(.data("unknown time zone \(quoted(name)); \(Self.rule)"))
        }
        var zone = Zone(identifier: name, rules: rules)
        if let around { zone = zone.steadied(around: around) }
        return .success(
            known.withLock { k in
                if fellBack { k.fallbacks.insert(name) }
                if let first = k.zones[name] { return first }
                k.zones[name] = zone
                return zone
            })
    }

    /// A zone the store holds, `store` its location for the message: a name that is no zone of
    /// this system is a value the store cannot hold (only checked zones are written), so the
    /// store is damaged (74), or the system's tzdata lost the zone; never bad input (65).
    public func stored(_ name: String, store: String? = nil) throws -> Zone {
        switch zone(name) {
        case .success(let z): return z
        case .failure(let e):
            throw StoreError(
                .damaged,
                "\((store ?? self.store).map { "store \($0)" } ?? "the store") holds a time zone that is not one here: \(e.message); "
                    + "the store is damaged (see `streakd store check`, restore a backup) or this system's tzdata "
                    + "lacks the zone (install tzdata)")
        }
    }

    func shapeProblem(_ name: String) -> String? {
        let parts = name.split(separator: "/", omittingEmptySubsequences: false)
        let allowed = name.utf8.allSatisfy {
            ($0 >= 48 && $0 <= 57) || ($0 >= 65 && $0 <= 90) || ($0 >= 97 && $0 <= 122) || $0 == 47 || $0 == 95
                || $0 == 45 || $0 == 43
        }
        if name.isEmpty || name.utf8.count > 64 || !allowed
            || parts.contains(where: { $0.isEmpty || $0 == "." || $0 == ".." })
            || parts.first == "posix" || parts.first == "right" || name == "localtime" || name == "posixrules"
            || name == "Factory"
        {
            if name.contains("/") && (name.hasPrefix("/") || name.contains("..")) {
                return "\(quoted(name)) is a path, not a time zone name; \(Self.rule)"
            }
            return "\(quoted(name)) is not a time zone name; \(Self.rule)"
        }
        return nil
    }

    /// The rules of a TZif file of the tzdata, and whether they are Foundation's (the file was
    /// not understood); nil if there is no such file.
    func rules(_ name: String) -> (any ZoneRules, fellBack: Bool)? {
        guard let data = FileManager.default.contents(atPath: directory + "/" + name), data.starts(with: "TZif".utf8)
        else { return nil }
        if let table = TZif.table([UInt8](data)) { return (TransitionRules(table: table), false) }
        guard let rules = FoundationZoneRules(identifier: name) else { return nil }
        logger.warning("zone file not understood; using Foundation's TimeZone", metadata: ["zone": "\(name)"])
        return (rules, true)
    }
}

/// Zone rules read from Foundation's `TimeZone` for a named zone.
public final class FoundationZoneRules: ZoneRules {
    let zone: TimeZone
    public init?(identifier: String) {
        guard let zone = TimeZone(identifier: identifier) else { return nil }
        self.zone = zone
    }
    public func offset(at instant: Instant) -> Int {
        zone.secondsFromGMT(for: Date(timeIntervalSince1970: TimeInterval(instant.seconds)))
    }
}
