import StreakCore
import StreakDelivery
import StreakStore

/// `streakd preview`: what `tick` will send between now and `--until`, assuming no new check-ins
/// and no refill, leaving out what the ledger has already.
extension Context {
    public func preview(until: String?, user: String?, kind: String?) throws {
        let end = try untilInstant(until)
        let kindFilter = try kind.map { k -> NotificationKind in
            guard let kind = NotificationKind(rawValue: k) else {
                throw StreakdError.usage(
                    "--kind: \(quoted(k)) is not a kind; use one of \(NotificationKind.allCases.map(\.rawValue).joined(separator: ", "))"
                )
            }
            return kind
        }
        let found = try upcoming(through: end, user: user).filter { n in kindFilter.map { $0 == n.kind } ?? true }
        for n in found { printer.record(n.json, short: n.line) }
        if found.isEmpty && printer.format == .short { printer.err("preview: nothing due after \(now) until \(end)") }
    }

    /// The notifications due after now and by `end`, in due order.
    func upcoming(through end: Instant, user id: String? = nil) throws -> [Notification] {
        let changed = try configChanged(write: false)
        var result: [Notification] = []
        try store.read { r in
            let streaks: [DueStreak]
            if let id {
                let user = try self.user(id, in: r)
                streaks = try r.streaks(of: user.id).map { DueStreak(user: user.id, streak: $0, handledThrough: nil) }
            } else {
                streaks = try r.dueStreaks(through: changed ? nil : end).streaks
            }
            for d in streaks {
                guard let user = try r.user(d.user) else { continue }
                let history = try history(of: user, streak: d.streak, in: r)
                let notices = Notices.upcoming(history, policy: noticePolicy(for: user), from: now, through: end)
                guard !notices.isEmpty else { continue }
                let found = notices.map { notification($0, user: user, streak: d.streak, history: history) }
                let recorded = try r.ledgerStates(keys: found.map(\.key))
                result += found.filter { recorded[$0.key] == nil }
            }
        }
        return result.sorted { a, b in
            if a.due != b.due { return a.due < b.due }
            if (a.kind == .atRisk) != (b.kind == .atRisk) { return b.kind == .atRisk }
            return (a.user, a.streak) < (b.user, b.streak)
        }
    }

    /// How far `preview` looks: a year (365 days; `52w` fits). Each streak is evaluated at every
    /// reminder instant it could have, and a preview is meant for what the timer will do soon.
    static let previewHorizon = 365 * Instant.day

    /// `--until`: a duration after now (`24h`, `90m`, `2d`) or an RFC 3339 instant; default 24h; at
    /// most `previewHorizon` after now.
    func untilInstant(_ text: String?) throws -> Instant {
        guard let text else { return now + 24 * Instant.hour }
        let instant: Instant
        if let s = DurationText.seconds(text) {
            instant = s > Self.previewHorizon ? now + Self.previewHorizon + 1 : now + s
        } else if let parsed = RFC3339.parse(text) {
            instant = parsed
        } else {
            throw StreakdError.usage(
                "--until: \(quoted(text)) is not a duration or an instant; use \(DurationText.rule), or RFC 3339 such as 2026-11-22T20:00:00Z"
            )
        }
        guard instant > now else { throw StreakdError.usage("--until: \(instant) is not after now (\(now))") }
        guard instant - now <= Self.previewHorizon else {
            throw StreakdError.usage(
                "--until: \(quoted(text)) is more than a year ahead; preview looks at most 365 days after now (\(now + Self.previewHorizon)), such as 52w or 365d"
            )
        }
        return instant
    }
}
