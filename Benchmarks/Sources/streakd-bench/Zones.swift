import Foundation
import StreakCore

/// Every zone of the system's tzdata, by name, with the same TZif rules streakd uses.
enum Zones {
    static let root = "/usr/share/zoneinfo"

    /// Every TZif file under /usr/share/zoneinfo but the posix/ and right/ copies, sorted.
    static func names() -> [String] {
        var names: [String] = []
        for case let path as String in FileManager.default.enumerator(atPath: root) ?? .init() {
            let first = path.split(separator: "/").first.map(String.init) ?? path
            if ["posix", "right"].contains(first) || ["localtime", "posixrules", "Factory"].contains(path) {
                continue
            }
            if let data = FileManager.default.contents(atPath: root + "/" + path), data.starts(with: "TZif".utf8) {
                names.append(path)
            }
        }
        return names.sorted()
    }

    /// The zone's rules from its TZif file (Foundation's only if the file is refused).
    static func load(_ name: String) -> Zone {
        if let data = FileManager.default.contents(atPath: root + "/" + name),
            let table = TZif.table([UInt8](data))
        {
            return Zone(identifier: name, rules: TransitionRules(table: table))
        }
        return Zone(identifier: name, rules: FoundationZoneRules(identifier: name)!)
    }
}
