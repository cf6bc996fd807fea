import Foundation
import StreakStore
import Synchronization

/// Group commit for the HTTP API (SPEC §11: "acknowledged means stored; concurrent requests may
/// share one commit"). The write steps of requests that arrive while a commit is under way wait
/// together, then run one after another in one transaction, on a thread of this one's own; each
/// request's answer is given once that transaction has committed. On SQLite (one writer, a commit
/// an fsync with `serve`'s durable setting) N requests then cost one commit (`shared`).
///
/// A step that refuses its request answers without writing, so it shares the commit harmlessly.
/// A step that throws rolls the shared transaction back: each step of that group then runs alone,
/// so one request's failure stays its own.
public final class WriteGroups: Sendable {
    struct Waiting: Sendable {
        let step: @Sendable (any StoreWriter) throws -> APIAnswer
        let answer: @Sendable (APIAnswer) -> Void
    }

    /// Most steps in one transaction: a group of this many holds the lock a bounded time.
    public static let largest = 256

    private let store: any Store
    private let waiting = Mutex<[Waiting]>([])
    private let wake = DispatchSemaphore(value: 0)

    /// Whether steps share commits: where write transactions exclude each other (SQLite). Else
    /// (PostgreSQL) each runs alone, side by side with the others (`alone`), and the database
    /// server's own group commit shares the flushes: a group would only serialise them.
    public let shared: Bool

    public init(store: any Store) {
        self.store = store
        shared = !store.concurrentClaims
        guard shared else { return }
        Thread.detachNewThread { [self] in
            while true { commitNext() }
        }
    }

    /// Runs `step` in the next group's transaction and answers with its answer after the commit
    /// (or with the store's error as a problem).
    public func write(_ step: @escaping @Sendable (any StoreWriter) throws -> APIAnswer) async -> APIAnswer {
        return await withCheckedContinuation { (done: CheckedContinuation<APIAnswer, Never>) in
            waiting.withLock { $0.append(Waiting(step: step, answer: { done.resume(returning: $0) })) }
            wake.signal()
        }
    }

    /// Waits for steps, takes those waiting (at most `largest`), and commits them as one.
    private func commitNext() {
        wake.wait()
        let group = waiting.withLock { waiting -> [Waiting] in
            let taken = Array(waiting.prefix(Self.largest))
            waiting.removeFirst(taken.count)
            return taken
        }
        // Each step signalled once: the signals of the others taken with it are spent here.
        for _ in group.dropFirst() { wake.wait() }
        guard !group.isEmpty else { return }
        let answers: [APIAnswer]
        do {
            answers = try store.write { w in try group.map { try $0.step(w) } }
        } catch {
            answers = group.count == 1 ? [.failed(error)] : group.map(alone)
        }
        for (waiting, answer) in zip(group, answers) { waiting.answer(answer) }
    }

    private func alone(_ waiting: Waiting) -> APIAnswer { alone(waiting.step) }

    /// Runs a step in a transaction of its own, on the caller's thread (it blocks).
    public func alone(_ step: @Sendable (any StoreWriter) throws -> APIAnswer) -> APIAnswer {
        do {
            return try store.write { w in try step(w) }
        } catch {
            return .failed(error)
        }
    }
}
