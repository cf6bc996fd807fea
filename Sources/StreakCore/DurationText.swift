/// Durations as streakd reads them: a whole number and a unit, `m`, `h`, `d`
/// or `w` (`90m`, `24h`, `2d`).
public enum DurationText {
    public static let rule = "a whole number and a unit m, h, d or w, such as 90m, 24h or 2d"

    public static func seconds(_ text: String) -> Int64? {
        guard let unit = text.last, text.count >= 2, text.count <= 12,
            let n = Int64(text.dropLast()), n >= 0, text.first != "+"
        else { return nil }
        switch unit {
        case "m": return n * 60
        case "h": return n * 3600
        case "d": return n * 86400
        case "w": return n * 604_800
        default: return nil
        }
    }

    /// The shortest exact text for a number of seconds (whole minutes).
    public static func text(_ seconds: Int64) -> String {
        if seconds % 604_800 == 0 && seconds > 0 { return "\(seconds / 604_800)w" }
        if seconds % 86400 == 0 && seconds > 0 { return "\(seconds / 86400)d" }
        if seconds % 3600 == 0 { return "\(seconds / 3600)h" }
        return "\(seconds / 60)m"
    }
}
