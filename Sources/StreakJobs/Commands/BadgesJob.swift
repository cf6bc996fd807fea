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
        if printer.format == .json {
            for record in badgeRecords(of: user, state) { printer.out(record.text) }
            return
        }
        let unlocked = state.badges.count { $0.unlockedAt != nil }
        let next = state.nextLevelXP.map { ", level \(state.level + 1) at \($0) XP" } ?? " (the highest)"
        printer.out(
            "\(user.id) · level \(state.level), \(state.xp) XP\(next) · \(unlocked) of \(state.badges.count) badges")
        let idWidth = state.badges.map(\.badge.id.count).max() ?? 0
        let titleWidth = state.badges.map(\.badge.title.count).max() ?? 0
        var category: String?
        for b in state.badges {
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
                    + "\(Self.padded(b.badge.title, titleWidth))  \(bar)\(Self.padded(percent, 4, right: true))  \(when)"
            )
        }
    }

    /// The `badges -o json` objects (and the API's): a badge each, with progress and unlock.
    func badgeRecords(of user: User, _ state: AchievementState) -> [JSON] {
        state.badges.map { b in
            JSON.object([
                ("user", .string(user.id)), ("badge", .string(b.badge.id)),
                ("category", .string(b.badge.category)), ("title", .string(b.badge.title)),
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

    static func padded(_ s: String, _ width: Int, right: Bool = false) -> String {
        let pad = String(repeating: " ", count: max(0, width - s.count))
        return right ? pad + s : s + pad
    }
}
