import StreakCore
import StreakDelivery
import StreakStore
import Synchronization

/// A run's retries (docs/RULES.md, "The ledger and delivery"): the pending deliveries due for
/// another try, those a run left for the next one, and those of runs that are gone, taken over by
/// compare-and-set, then asked SPEC §4 again (`Recheck`) before any sink sees them. What that
/// second look needs (each `at_risk`'s streak as of now) is read for all of them in one read.
extension Dispatcher {
    /// Takes over the pending deliveries due for another try, and those of runs that are gone:
    /// their lease ran out on the store's clock, on any host (a run stopped with SIGSTOP is alive,
    /// but its lease runs out all the same, and it fences itself when it resumes); on this host
    /// also at once when its process has ended. Each job carries what asking §4 again found.
    func claimRetries() throws -> [DeliveryJob] {
        let now = context.now
        let pending = try context.store.read { try $0.pendingDeliveries() }
        var candidates: [(PendingDelivery, gone: Bool)] = []
        var waiting: [PendingDelivery] = []
        for p in pending where p.owner != owner {
            if let o = p.owner {
                // The lease decides (compare-and-set in `takeOver`); a process known ended here
                // only shortcuts it.
                candidates.append((p, RunOwner.isGone(o)))
            } else if let last = p.lastAttempt,
                !delivery.retry.isDue(attempts: p.attempts, lastAttempt: last, now: now)
                    || p.retryAt.map({ now < $0 }) == true
            {
                waiting.append(p)
            } else {
                candidates.append((p, false))
            }
        }
        // One waiting for its next try that is no longer to be sent (its date ended meanwhile, a
        // Retry-After of a day) is taken now, to be recorded expired: no try is needed for that.
        let waited = try context.streaksNow(of: waiting.map(\.notification).filter { $0.kind == .atRisk })
        for p in waiting {
            let n = p.notification
            let state = waited[StreakKey(user: n.user, streak: n.streak)]
            if Recheck.reason(n, now: now, maxLate: context.config.maxLate, state: state) != nil {
                candidates.append((p, false))
            } else {
                shared.withLock { $0.report.waiting += 1 }
            }
        }
        guard !candidates.isEmpty else { return [] }
        // A run killed here may have left hooks running: they end before their deliveries are
        // taken over, so none is made twice at once (SPEC §5: nothing a hook starts outlives it).
        for owner in Set(candidates.filter(\.gone).compactMap(\.0.owner)) {
            let ended = RunOwner.endHooksLeftBehind(by: owner)
            if ended > 0 {
                context.printer.warn(
                    "ended \(ended) hook\(ended == 1 ? "" : "s") left running by a run that was killed "
                        + "(\(owner)); its deliveries are tried again")
            }
        }
        let taken = try context.store.write { w in
            try lease.register(w)
            return try candidates.filter { p, gone in
                try w.takeOver(id: p.id, sink: p.sink, from: p.owner, fromGone: gone, to: owner)
            }.map(\.0)
        }
        shared.withLock { $0.report.retried += taken.count }
        let states = try context.streaksNow(of: taken.map(\.notification).filter { $0.kind == .atRisk })
        return taken.map { p in
            let n = p.notification
            let stale = Recheck.reason(
                n, now: now, maxLate: context.config.maxLate, state: states[StreakKey(user: n.user, streak: n.streak)])
            return DeliveryJob(
                id: p.id, notification: n, sink: p.sink, attempts: p.attempts,
                retry: stale.map { .stale($0) } ?? .stillDue)
        }
    }
}

/// A (user, streak) as a dictionary key.
struct StreakKey: Hashable {
    var user: String
    var streak: String
}

extension Context {
    /// The streaks of `notifications` evaluated at `now`, read in one read transaction for them all
    /// (each user's streaks, then their histories, as a run reads what it plans). A streak whose
    /// user is gone is left out.
    func streaksNow(of notifications: [Notification]) throws -> [StreakKey: StreakState] {
        var wanted: [String: Set<String>] = [:]
        for n in notifications { wanted[n.user, default: []].insert(n.streak) }
        guard !wanted.isEmpty else { return [:] }
        let users = wanted.keys.sorted()
        return try store.read { r in
            var streaks: [DueStreak] = []
            for (user, facts) in zip(users, try r.achievementFacts(of: users)) {
                streaks += facts.streaks.filter { wanted[user]!.contains($0.streak) }
            }
            var epochs: [String: [SettingsEpoch]] = [:]
            var states: [StreakKey: StreakState] = [:]
            for (s, read) in zip(streaks, try r.dueHistories(of: streaks)) {
                guard let read else { continue }
                if epochs[s.streak] == nil { epochs[s.streak] = try r.settingsEpochs(of: s.streak) }
                let history = try history(of: read.stored, epochs: epochs[s.streak]!)
                states[StreakKey(user: s.user, streak: s.streak)] = Engine.evaluate(history, at: now)
            }
            return states
        }
    }
}
