import Foundation
import StreakStore
import Synchronization

/// Group commit for the HTTP API (SPEC §11: "acknowledged means stored; concurrent requests may
/// share one commit"). The write steps of requests that arrive while a commit is under way wait
/// together, then run in one transaction, on a thread of this one's own (a lane); each request's
/// answer is given once that transaction has committed. The check-ins among them are one step
/// together (`Context.apiCheckins`: a group of N costs about the statements of one), the others
/// run one after another.
///
/// On SQLite (one writer, a commit an fsync with `serve`'s durable setting) every write step is
/// grouped, on one lane (`shared`). On PostgreSQL only the check-ins are, on `postgresLanes`
/// lanes side by side (each transaction locks its users in id order: `lockUsers`), and other
/// steps run alone (`alone`) on the caller's thread, the server's own group commit sharing the
/// flushes.
///
/// A step that refuses its request answers without writing, so it shares the commit harmlessly.
/// A step that throws rolls the shared transaction back: each step of that group then runs alone,
/// so one request's failure stays its own.
public final class WriteGroups: Sendable {
    enum Step: Sendable {
        case write(@Sendable (any StoreWriter) throws -> APIAnswer)
        case checkin(CheckinWork)
    }

    struct Waiting: Sendable {
        let step: Step
        let answer: @Sendable (APIAnswer) -> Void
    }

    /// Most steps in one transaction: a group of this many holds the lock a bounded time.
    public static let largest = 256
    /// The lanes on PostgreSQL: groups committed side by side.
    public static let postgresLanes = 2

    private let store: any Store
    private let waiting = Mutex<[Waiting]>([])
    /// Signalled once for each step that waits.
    private let wake = DispatchSemaphore(value: 0)

    /// Whether every write step is grouped: where write transactions exclude each other (SQLite).
    /// Else (PostgreSQL) only check-ins are, and the other steps run alone, side by side.
    public let shared: Bool

    public init(store: any Store) {
        self.store = store
        shared = !store.concurrentClaims
        for _ in 0..<(shared ? 1 : Self.postgresLanes) {
            Thread.detachNewThread { [self] in
                while true { commitNext() }
            }
        }
    }

    /// Runs `step` in the next group's transaction and answers with its answer after the commit
    /// (or with the store's error as a problem).
    public func write(_ step: @escaping @Sendable (any StoreWriter) throws -> APIAnswer) async -> APIAnswer {
        await wait(.write(step))
    }

    /// Stores a check-in with the others of the next group, and answers after the commit.
    public func checkin(_ work: CheckinWork) async -> APIAnswer { await wait(.checkin(work)) }

    private func wait(_ step: Step) async -> APIAnswer {
        await withCheckedContinuation { (done: CheckedContinuation<APIAnswer, Never>) in
            waiting.withLock { $0.append(Waiting(step: step, answer: { done.resume(returning: $0) })) }
            wake.signal()
        }
    }

    /// Waits for steps, takes those waiting (at most `largest`), and commits them as one. A lane
    /// takes as many as the signals it spends, so the lanes never wait for a step another took.
    private func commitNext() {
        wake.wait()
        var count = 1
        while count < Self.largest, wake.wait(timeout: .now()) == .success { count += 1 }
        let group = waiting.withLock { waiting -> [Waiting] in
            let taken = Array(waiting.prefix(count))
            waiting.removeFirst(taken.count)
            return taken
        }
        guard !group.isEmpty else { return }
        let answers: [APIAnswer]
        do {
            answers = try store.write { w in try Self.run(group.map(\.step), in: w) }
        } catch {
            answers = group.count == 1 ? [.failed(error)] : group.map { alone($0.step) }
        }
        for (waiting, answer) in zip(group, answers) { waiting.answer(answer) }
    }

    /// The steps' answers, in their order: the writes one after another, then the check-ins
    /// together, those of one `now` at a time (a request's rules take its own).
    static func run(_ steps: [Step], in w: any StoreWriter) throws -> [APIAnswer] {
        var answers = [APIAnswer?](repeating: nil, count: steps.count)
        var checkins: [(Int, CheckinWork)] = []
        for (i, step) in steps.enumerated() {
            switch step {
            case .write(let write): answers[i] = try write(w)
            case .checkin(let work): checkins.append((i, work))
            }
        }
        while let now = checkins.first?.1.now {
            let same = checkins.filter { $0.1.now == now }
            checkins.removeAll { $0.1.now == now }
            for ((i, _), answer) in zip(same, try Context.apiCheckins(same.map(\.1), in: w)) { answers[i] = answer }
        }
        return answers.map { $0! }
    }

    private func alone(_ step: Step) -> APIAnswer {
        switch step {
        case .write(let write): alone(write)
        case .checkin(let work): alone { w in try Context.apiCheckins([work], in: w)[0] }
        }
    }

    /// Runs a step in a transaction of its own, on the caller's thread (it blocks).
    public func alone(_ step: @Sendable (any StoreWriter) throws -> APIAnswer) -> APIAnswer {
        do {
            return try store.write { w in try step(w) }
        } catch {
            return .failed(error)
        }
    }
}
