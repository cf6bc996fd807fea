import Foundation
import StreakCore
import TOMLKit

/// The achievement sections of `streakd.toml`: `[[badges]]`, `[xp]` and `[levels]`.
extension ConfigLoader {
    static let badgeKeys = ["id", "title", "description", "category", "requirement", "value", "streak", "meta", "xp"]
    static let thresholdsRule =
        "must be a list of 4 whole numbers from 1 to 1000000000, each larger than the one before, "
        + "such as [500, 1500, 4000, 10000]: the XP at which levels 2, 3, 4 and 5 begin"

    /// Each part is read on its own (`TableReader.attempt`), so that every problem is reported.
    static func readAchievements(_ table: TOMLTable, reader: TableReader, into config: inout Config) {
        reader.attempt {
            guard let t = try reader.table(table, "xp", in: "") else { return }
            try reader.keys(t, in: "xp", allowed: ["per_day"])
            config.achievements.xpPerDay =
                try reader.int(t, "per_day", in: "xp", range: 0...1_000_000) ?? config.achievements.xpPerDay
        }
        reader.attempt { try readLevels(table, reader: reader, into: &config) }
        readBadges(table, reader: reader, into: &config)
    }

    static func readLevels(_ table: TOMLTable, reader: TableReader, into config: inout Config) throws {
        if let t = try reader.table(table, "levels", in: "") {
            try reader.keys(t, in: "levels", allowed: ["thresholds"])
            if let v = t["thresholds"] {
                let items = v.type == .array ? v.array.map { Array($0) } ?? [] : []
                let numbers = items.compactMap { $0.type == .int ? $0.int : nil }
                guard numbers.count == 4, items.count == 4, numbers.allSatisfy({ (1...1_000_000_000).contains($0) }),
                    zip(numbers, numbers.dropFirst()).allSatisfy({ $0 < $1 })
                else { throw reader.error("levels", "thresholds", thresholdsRule) }
                config.achievements.levelThresholds = numbers
            }
        }
    }

    static func readBadges(_ table: TOMLTable, reader: TableReader, into config: inout Config) {
        // A [[badges]] list, even an empty `badges = []`, replaces the defaults entirely.
        let badges = reader.arrayOfTables(
            table, "badges",
            rule: "must be an array of tables, each under a [[badges]] header (or badges = [] for none)",
            nameKey: "id", twice: { ("id", "\(quoted($0)) names two badges; give each badge its own id") },
            read: { t, i in readBadge(t, index: i, reader: reader) })
        if let badges { config.achievements.badges = badges }
    }

    /// One `[[badges]]` table, or nil when it has problems: each is noted (`config check`
    /// reports every one of them), as for `[[hooks]]`.
    static func readBadge(_ t: TOMLTable, index i: Int, reader: TableReader) -> BadgeDefinition? {
        var problems = 0
        func fail(_ key: String?, _ message: String) {
            reader.note(reader.error("badges", key, message, occurrence: i))
            problems += 1
        }
        for key in t.keys.sorted() where !badgeKeys.contains(key) {
            fail(key, "unknown setting; valid in [[badges]]: \(badgeKeys.joined(separator: ", "))")
        }
        let id = t["id"]?.type == .string ? t["id"]?.string : nil
        if let id, !BadgeDefinition.validID(id) {
            fail("id", "\(quoted(id)) is not a badge id; use \(BadgeDefinition.idRule)")
        } else if id == nil {
            fail(t["id"] == nil ? nil : "id", "every badge needs an id = \"…\" of \(BadgeDefinition.idRule)")
        }
        let called = id.map { "badge \(quoted($0))" } ?? "this badge"
        func text(_ key: String, required: Bool, most: Int) -> String? {
            let rule = "must be a string of \(required ? 1 : 0) to \(most) characters, on one line"
            guard let v = t[key] else {
                if required { fail(nil, "\(called) needs a \(key) = \"…\"") }
                return nil
            }
            guard v.type == .string, let s = v.string, (required ? 1 : 0)...most ~= s.count,
                !s.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F })
            else {
                fail(key, rule)
                return nil
            }
            return s
        }
        let title = text("title", required: true, most: 100)
        let description = text("description", required: false, most: 500) ?? ""
        let category = text("category", required: true, most: 64)
        if let category, !BadgeDefinition.validID(category) {
            fail("category", "\(quoted(category)) is not a category; use \(BadgeDefinition.idRule)")
        }
        let requirementRule = "use " + BadgeDefinition.Requirement.names.joined(separator: ", ")
        var name: String?
        if let r = t["requirement"] {
            if r.type == .string, let n = r.string, BadgeDefinition.Requirement.names.contains(n) {
                name = n
            } else {
                fail(
                    "requirement", "\(r.string.map(quoted) ?? "a value that") is not a requirement; \(requirementRule)")
            }
        } else {
            fail(nil, "\(called) needs a requirement = \"…\"; \(requirementRule)")
        }
        func int(_ key: String, _ range: ClosedRange<Int>) -> Int? { readInt(t, key, range, fail: fail) }
        if t["value"] == nil { fail(nil, "\(called) needs a value = N (1 to 1000000)") }
        let value = int("value", 1...1_000_000)
        var streak: String?
        if let s = t["streak"] {
            if s.type == .string, let text = s.string, Validate.streakID(text) == nil {
                streak = text
            } else {
                fail(
                    "streak",
                    "\(s.string.map(quoted) ?? "a value that") is not a streak id; use \(Validate.streakIDRule)")
            }
        }
        var requirement: BadgeDefinition.Requirement?
        switch name {
        case "streak_days": requirement = .streakDays
        case "total_checkins": requirement = .totalCheckins
        case "tagged_checkins": requirement = readMeta(t, called: called, fail: fail).map { .taggedCheckins($0) }
        default: break
        }
        if let name, name != "tagged_checkins" && t["meta"] != nil {
            fail("meta", "only tagged_checkins badges take meta; this one's requirement is \(name)")
        }
        let xp = int("xp", 0...1_000_000) ?? BadgeDefinition.defaultXP
        guard problems == 0, let id, let title, let category, let requirement, let value else { return nil }
        return BadgeDefinition(
            id: id, title: title, description: description, category: category, requirement: requirement,
            value: value, streak: streak, xp: xp)
    }

    /// `meta = {kind = "social"}`: the keys and values a tagged check-in must carry (SPEC §1
    /// shapes), or nil after noting what is wrong.
    static func readMeta(_ t: TOMLTable, called: String, fail: (String?, String) -> Void) -> [String: MetaValue]? {
        let rule =
            "must be a table of metadata keys and values (strings, true/false or whole numbers), such as {kind = \"social\"}"
        guard let m = t["meta"] else {
            fail(
                nil,
                "\(called) needs meta = {key = value, …}: tagged_checkins counts the check-ins whose metadata has each of them"
            )
            return nil
        }
        guard m.type == .table, let table = m.table, !table.keys.isEmpty else {
            fail("meta", rule)
            return nil
        }
        var result: [String: MetaValue] = [:]
        var bad = false
        for key in table.keys.sorted() {
            if let problem = Validate.metaKey(key) {
                fail("meta", "\(quoted(key)) is not a metadata key; use \(problem)")
                bad = true
                continue
            }
            guard let v = table[key] else { continue }
            switch v.type {
            case .string:
                guard let s = v.string, s.utf8.count <= Validate.maxMetaString else {
                    fail("meta", "\(key): must be a string of at most \(Validate.maxMetaString) bytes")
                    bad = true
                    continue
                }
                result[key] = .string(s)
            case .bool: result[key] = v.bool.map { .bool($0) }
            case .int: result[key] = v.int.map { .integer(Int64($0)) }
            default:
                fail("meta", "\(key): must be a string, true/false or a whole number")
                bad = true
            }
        }
        return bad ? nil : result
    }
}

/// The achievement sections as the effective configuration prints them.
extension Config {
    var achievementLines: [String] {
        let a = achievements
        var lines = [
            "", "[xp]", "per_day = \(a.xpPerDay)", "", "[levels]",
            "thresholds = [\(a.levelThresholds.map(String.init).joined(separator: ", "))]",
        ]
        for b in a.badges {
            lines += [
                "", "[[badges]]", "id = \(JSON.string(b.id).text)", "title = \(JSON.string(b.title).text)",
                "description = \(JSON.string(b.description).text)", "category = \(JSON.string(b.category).text)",
                "requirement = \"\(b.requirement.name)\"",
            ]
            if case .taggedCheckins(let meta) = b.requirement {
                let pairs = meta.keys.sorted().map { "\($0) = \(Config.metaJSON(meta[$0]!).text)" }
                lines.append("meta = {\(pairs.joined(separator: ", "))}")
            }
            if let s = b.streak { lines.append("streak = \(JSON.string(s).text)") }
            lines += ["value = \(b.value)", "xp = \(b.xp)"]
        }
        return lines
    }

    var xpJSON: JSON { .object([("per_day", .int(achievements.xpPerDay))]) }

    var levelsJSON: JSON { .object([("thresholds", .array(achievements.levelThresholds.map { .int($0) }))]) }

    var badgesJSON: JSON {
        .array(
            achievements.badges.map { b in
                var meta = JSON.null
                if case .taggedCheckins(let m) = b.requirement {
                    meta = .object(m.keys.sorted().map { ($0, Config.metaJSON(m[$0]!)) })
                }
                return .object([
                    ("id", .string(b.id)), ("title", .string(b.title)), ("description", .string(b.description)),
                    ("category", .string(b.category)), ("requirement", .string(b.requirement.name)), ("meta", meta),
                    ("streak", .optional(b.streak)), ("value", .int(b.value)), ("xp", .int(b.xp)),
                ])
            })
    }

    /// A metadata value in JSON, which TOML reads the same for these three kinds.
    static func metaJSON(_ v: MetaValue) -> JSON {
        switch v {
        case .string(let s): .string(s)
        case .bool(let b): .bool(b)
        case .integer(let i): .int(i)
        }
    }
}
