/// SPEC §4 asked again for a notification recorded earlier and not delivered yet, before a sink
/// tries it again (a failed delivery due for another try, one taken over from a run that is gone,
/// one put back for the next run): every retry, on any sink (SPEC §12, "Retrying the dead"). Pure.
///
/// Still fresh: an `at_risk` until its date ends (or `reminders.max_late` after its due instant);
/// a `freeze_used` or `streak_broken` for 24 hours after the missed date ended (its due instant);
/// any other kind for 24 hours after its due instant. An `at_risk` is also no longer sent once
/// its date qualifies or is frozen: the user checked in (or froze it) since it was recorded.
public enum Recheck {
    /// How long after its due instant a notification of a kind other than `at_risk` stays fresh.
    public static let window: Int64 = 24 * Instant.hour

    /// Why `n` is no longer to be sent at `now`, or nil when it still is. `state`: the streak
    /// evaluated at `now`, asked of an `at_risk` only (nil there: its streak could not be read,
    /// its user being gone).
    public static func reason(_ n: Notification, now: Instant, maxLate: Int64?, state: StreakState?) -> String? {
        guard n.kind == .atRisk else {
            guard now > n.due + window else { return nil }
            let after = n.kind == .freezeUsed || n.kind == .streakBroken ? "\(n.localDate) ended" : "it was due"
            return "no longer fresh: more than 24 h after \(after) (\(n.due))"
        }
        if let maxLate, now > n.due + maxLate {
            return "no longer fresh: more than reminders.max_late (\(DurationText.text(maxLate))) after its due "
                + "instant (\(n.due))"
        }
        guard let state else { return "its user or streak is gone" }
        let date = n.localDate
        if date <= state.endedThrough { return "no longer fresh: \(date) has ended" }
        switch state.mark(date) {
        case .qualifying: return "checked in since: \(date) qualifies"
        case .frozen: return "\(date) was frozen since"
        case .rest: return "\(date) is a rest day"
        case .paused: return "\(date) is paused"
        default: break
        }
        // A check-in dated after it (the user flew west over the date line) counts as today's.
        if date == state.today && state.todaySafe { return "checked in since: \(date) counts as done" }
        return nil
    }
}
