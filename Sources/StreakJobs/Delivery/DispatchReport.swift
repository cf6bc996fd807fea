/// Counts of what a run did with its deliveries.
public struct DispatchReport: Equatable, Sendable {
    public var delivered = 0
    public var failed = 0
    public var dead = 0
    public var unavailable = 0
    public var retried = 0
    /// Failed before and not due for another try yet.
    public var waiting = 0
    /// Left for the next run: the run was stopped, ran out of time, or the sink kept failing.
    public var deferred = 0
    /// Stopped in flight by a stop of the run (SIGTERM): pending, the attempt not counted.
    public var interrupted = 0
    /// Retries no longer to be sent (no longer fresh, or an `at_risk` done since): expired.
    public var stale = 0
    /// Delivered (counted in `delivered`) but not recorded: an outcome write failed, and the next
    /// run makes them again.
    public var notStored = 0

    /// Adds another's counts.
    mutating func add(_ other: DispatchReport) {
        delivered += other.delivered
        failed += other.failed
        dead += other.dead
        unavailable += other.unavailable
        retried += other.retried
        waiting += other.waiting
        deferred += other.deferred
        interrupted += other.interrupted
        stale += other.stale
        notStored += other.notStored
    }
}
