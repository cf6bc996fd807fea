import Foundation
import StreakCore

/// Hooks with `batch` (SPEC §12): one process for up to `batch` notifications, their JSON objects
/// as lines on stdin; it prints each key it delivered on stdout, one a line. A key it printed is
/// delivered (whatever its exit status); one it did not is what its run was otherwise (a failure
/// with its error, or interrupted by a stop), and a clean exit without printing a key is a failure
/// too.
extension HookSink {
    public func start(
        _ notifications: [Notification], startingBefore limit: () -> Int64?,
        done: @escaping @Sendable ([DeliveryOutcome]?) -> Void
    ) {
        guard let until = BootClock.instant(before: limit) else { return done(nil) }
        Thread.detachNewThread { [self] in
            if command.batch <= 1 {
                // One process per notification, `concurrency` of them at once.
                return done(notifications.first.flatMap { deliver($0, startingBefore: { until }) }.map { [$0] })
            }
            done(deliverBatch(notifications, startingBefore: { until }))
        }
    }

    /// Runs one process for `notifications`; nil when it could not start before `limit`.
    func deliverBatch(_ notifications: [Notification], startingBefore limit: () -> Int64?) -> [DeliveryOutcome]? {
        let input = notifications.map { $0.json.text + "\n" }.joined()
        guard
            let started = run(
                stdin: input, environment: ["STREAKD_BATCH": String(notifications.count)], startingBefore: limit)
        else { return nil }
        switch started {
        case .cannotRun(let outcome):
            return notifications.map { _ in outcome }
        case .ran(let run):
            let printed = Set(
                String(decoding: run.stdout, as: UTF8.self).split(whereSeparator: \.isNewline)
                    .map { $0.trimmingCharacters(in: .whitespaces) })
            var missing = outcome(of: run)
            if missing == .delivered {
                missing = .failed(
                    "exit 0 without printing this key on stdout (a batch hook prints each key it delivered)"
                        + (Self.lastLines(run.stderr).map { ": " + $0 } ?? ""))
            }
            return notifications.map { printed.contains($0.key) ? .delivered : missing }
        }
    }
}
