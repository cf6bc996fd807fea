import StreakCore
import StreakStore

/// `streakd badges ID`: every badge with its category, title, progress and unlock (SPEC §9).
extension Context {
    public func badges(user id: String) throws {
        let (user, state, zones) = try store.read { r -> (User, AchievementState, StreakHistory) in
            let user = try self.user(id, in: r)
            // The user's zones, for the local time of each unlock.
            let zones = try history(
                of: StoredStreak(user: user, zones: try r.zoneHistory(of: user.id), streak: "daily"), epochs: [])
            return (user, try achievements(of: user, in: r), zones)
        }
        // Titles and descriptions in the user's language (the shipped badges'; SPEC §10).
        let texts = state.badges.map { config.messages.badgeText($0.badge, tag: user.language) }
        if printer.format == .json {
            for record in badgeRecords(of: user, state) { printer.out(record.text) }
            return
        }
        let unlocked = state.badges.count { $0.unlockedAt != nil }
        let next = state.nextLevelXP.map { ", level \(state.level + 1) at \($0) XP" } ?? " (the highest)"
        printer.out(
            "\(user.id) · level \(state.level), \(state.xp) XP\(next) · \(unlocked) of \(state.badges.count) badges")
        let idWidth = state.badges.map(\.badge.id.count).max() ?? 0
        let titleWidth = texts.map { Self.width($0.title) }.max() ?? 0
        var category: String?
        for (b, text) in zip(state.badges, texts) {
            if b.badge.category != category {
                category = b.badge.category
                printer.out(b.badge.category)
            }
            let bar = printer.outIsTerminal ? Self.bar(b.progress) + " " : ""
            let percent = String(b.progress) + "%"
            let when =
                b.unlockedAt.map { "unlocked " + local($0, in: zones.zone(at: $0)) } ?? "\(b.current) of \(b.value)"
            printer.out(
                "  \(b.unlockedAt == nil ? " " : "✓") \(Self.padded(b.badge.id, idWidth))  "
                    + "\(Self.padded(text.title, titleWidth))  \(bar)\(Self.padded(percent, 4, right: true))  \(when)"
            )
        }
    }

    /// The `badges -o json` objects (and the API's): a badge each, with progress and unlock.
    /// Titles and descriptions in the user's language (the shipped badges'; SPEC §10).
    func badgeRecords(of user: User, _ state: AchievementState) -> [JSON] {
        state.badges.map { b in
            let text = config.messages.badgeText(b.badge, tag: user.language)
            return JSON.object([
                ("user", .string(user.id)), ("badge", .string(b.badge.id)),
                ("category", .string(b.badge.category)), ("title", .string(text.title)),
                ("description", .string(text.description)),
                ("value", .int(b.value)), ("current", .int(b.current)), ("progress", .int(b.progress)),
                ("unlocked_at", .optional(b.unlockedAt?.description)),
            ])
        }
    }

    /// Ten cells, one per whole 10 %.
    static func bar(_ percent: Int) -> String {
        let full = max(0, min(10, percent / 10))
        return String(repeating: "█", count: full) + String(repeating: "░", count: 10 - full)
    }

    /// Columns on a terminal: a CJK character takes two.
    static func width(_ s: String) -> Int {
        s.unicodeScalars.reduce(0) { n, c in
            n
                + ((0x1100...0x115F).contains(c.value) || (0x2E80...0xA4CF).contains(c.value)
                    || (0xAC00...0xD7A3).contains(c.value) || (0xF900...0xFAFF).contains(c.value)
                    || (0xFE30...0xFE4F).contains(c.value) || (0xFF00...0xFF60).contains(c.value)
                    || (0xFFE0...0xFFE6).contains(c.value) ? 2 : 1)
        }
    }

    static func padded(_ s: String, _ width: Int, right: Bool = false) -> String {
        let pad = String(repeating: " ", count: max(0, width - Self.width(s)))
        return right ? pad + s : s + pad
    }
}
