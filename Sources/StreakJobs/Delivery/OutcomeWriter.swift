import Foundation
import StreakCore
import StreakStore

/// Writes delivery outcomes to the ledger for the run that owns them: in a transaction of its
/// own, tried again while the store is busy or out of reach (an outcome lost is a delivery the
/// next run repeats), or in the caller's transaction.
struct OutcomeWriter: Sendable {
    let store: any Store
    /// The run that owns the deliveries: only those it still holds are written.
    let owner: String
    /// The run's "now", recorded as the attempts' instant.
    let now: Instant
    let stop: StopToken

    /// Outcome writes that find the store busy are tried again (each waits up to the store's busy
    /// time-out) for this long. Once the run is asked to stop, for `retryStopping` only (systemd
    /// waits 90 s, SPEC §5 says a few).
    static let retry = Duration.seconds(120)
    static let retryStopping = Duration.seconds(10)
    /// A store that cannot be reached (a database server restarting or gone) for this long: long
    /// enough for a restart, short enough that a run on a database gone for good ends within
    /// seconds (75), not minutes.
    static let retryUnreachable = Duration.seconds(15)

    /// How long a write that keeps finding the store busy is tried.
    static func retryLimit(stopping: Bool, unreachable: Bool) -> Duration {
        min(stopping ? retryStopping : retry, unreachable ? retryUnreachable : retry)
    }

    /// Commits outcomes, trying again while the store is busy or cannot be reached.
    func commit(_ outcomes: [Outcome]) throws {
        guard !outcomes.isEmpty else { return }
        let start = ContinuousClock.now
        while true {
            do {
                try store.write { w in try write(outcomes, in: w) }
                return
            } catch let error as StoreError where error.kind == .busy {
                let limit = Self.retryLimit(stopping: stop.requested, unreachable: error.unreachable)
                guard ContinuousClock.now - start < limit else { throw error }
                Thread.sleep(forTimeInterval: 0.05)
            }
        }
    }

    /// Writes outcomes in the caller's transaction; only for deliveries `owner` still holds (a
    /// run that lost them while it was stopped writes nothing).
    func write(_ outcomes: [Outcome], in w: some LedgerWriting) throws {
        // In ledger order: a wide lane's outcomes come back in the order its deliveries ended, and
        // sorted they are a few ranges (one update each) rather than one update per gap.
        let outcomes = outcomes.sorted { ($0.job.sink, $0.job.id) < ($1.job.sink, $1.job.id) }
        for run in Self.runs(outcomes) {
            let first = outcomes[run.lowerBound]
            let ids = first.job.id...outcomes[run.upperBound].job.id
            try w.finish(
                ids: ids, sink: first.job.sink, state: first.state, attempts: first.attempts, at: now,
                error: first.error, owner: owner, retryAt: first.retryAfter.map { now + $0 })
        }
    }

    /// The outcomes in runs of consecutive ledger ids with one sink and one result: each run is one
    /// update (a busy run's new notifications have consecutive ids).
    static func runs(_ outcomes: [Outcome]) -> [ClosedRange<Int>] {
        var runs: [ClosedRange<Int>] = []
        var start = 0
        for i in outcomes.indices.dropFirst() {
            let (a, b) = (outcomes[i - 1], outcomes[i])
            if b.job.id != a.job.id + 1 || b.job.sink != a.job.sink || b.state != a.state || b.attempts != a.attempts
                || b.error != a.error || b.retryAfter != a.retryAfter
            {
                runs.append(start...(i - 1))
                start = i
            }
        }
        if !outcomes.isEmpty { runs.append(start...(outcomes.count - 1)) }
        return runs
    }
}
