import StreakCore

/// The times `log --since/--until` take (SPEC §6 leaves the forms open; these follow journalctl).
enum TimeArgument {
    static let rule =
        "use an RFC 3339 instant such as 2026-11-21T19:00:00Z, a date YYYY-MM-DD (its midnight UTC), "
        + "now, today, yesterday or tomorrow (midnights UTC), or a time relative to now such as -90m, "
        + "2h ago or +1d (units m, h, d, w)"

    /// The instant `text` names, relative forms counted from `now`; nil when it names none.
    static func parse(_ text: String, now: Instant) -> Instant? {
        let midnight = Instant(seconds: now.seconds - (now.seconds % Instant.day + Instant.day) % Instant.day)
        switch text {
        case "now": return now
        case "today": return midnight
        case "yesterday": return midnight - Instant.day
        case "tomorrow": return midnight + Instant.day
        default: break
        }
        if text.hasSuffix(" ago"), let back = DurationText.seconds(String(text.dropLast(4))) { return now - back }
        if text.hasPrefix("-"), let back = DurationText.seconds(String(text.dropFirst())) { return now - back }
        if text.hasPrefix("+"), let ahead = DurationText.seconds(String(text.dropFirst())) { return now + ahead }
        if text.utf8.count == 10, let date = LocalDate(text) { return Instant(seconds: Int64(date.day) * Instant.day) }
        return RFC3339.parse(text)
    }
}
