import StreakCore

/// When a failed delivery is tried again, and when it is given up as dead (SPEC §5): a pure value, so the
/// ledger's attempt count and last attempt instant are all it needs.
public struct RetryPolicy: Equatable, Sendable {
    /// Seconds to wait after the 1st, 2nd, … failed attempt; the last step repeats.
    public var backoff: [Int64]
    /// A delivery that has failed this many times is dead.
    public var maxAttempts: Int

    /// 1 min, 5 min, 30 min, 2 h, then every 2 h.
    public static let defaultBackoff: [Int64] = [60, 300, 1800, 2 * Instant.hour]

    public init(backoff: [Int64] = RetryPolicy.defaultBackoff, maxAttempts: Int = 5) {
        precondition(!backoff.isEmpty && backoff.allSatisfy { $0 >= 0 }, "back-off steps must be given and >= 0")
        precondition(maxAttempts >= 1, "at least one attempt")
        self.backoff = backoff
        self.maxAttempts = maxAttempts
    }

    /// What comes after a number of failed attempts.
    public enum Next: Equatable, Sendable {
        /// Try again at or after this instant.
        case due(Instant)
        /// Give up: mark it dead, for `streakd log` to show.
        case dead
    }

    /// The wait after `attempts` failed attempts (at least 1).
    public func delay(afterAttempts attempts: Int) -> Int64 {
        backoff[min(max(attempts, 1), backoff.count) - 1]
    }

    public func isDead(attempts: Int) -> Bool { attempts >= maxAttempts }

    /// After `attempts` failed attempts, the last at `lastAttempt`. No attempt yet is due at once.
    public func next(attempts: Int, lastAttempt: Instant) -> Next {
        if isDead(attempts: attempts) { return .dead }
        if attempts <= 0 { return .due(lastAttempt) }
        return .due(lastAttempt + delay(afterAttempts: attempts))
    }

    /// Whether a run at `now` should try again.
    public func isDue(attempts: Int, lastAttempt: Instant, now: Instant) -> Bool {
        if case .due(let at) = next(attempts: attempts, lastAttempt: lastAttempt) { return now >= at }
        return false
    }
}
