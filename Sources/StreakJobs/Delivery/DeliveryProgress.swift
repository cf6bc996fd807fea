import Dispatch
import Foundation
import Synchronization

/// A tick's deliveries as one line on standard error while they go out (SPEC §13), redrawn every
/// 200 ms from the dispatcher's counts, only when standard error is a terminal:
/// `tick: delivering, 120 of 500 done: 117 delivered, 3 failed, 0 dead`. `finish` clears it, so
/// the run's summary line is printed on a clean line.
final class DeliveryProgress: Sendable {
    private let printer: Printer
    private let stop = DispatchSemaphore(value: 0)
    private let ended = DispatchSemaphore(value: 0)
    /// Whether the thread runs, and whether it drew a line (to clear).
    private let state = Mutex<(running: Bool, drawn: Bool)>((false, false))

    static let interval = 200

    init(printer: Printer, counts: @escaping @Sendable () -> (given: Int, report: DispatchReport)) {
        self.printer = printer
        guard printer.errIsTerminal else { return }
        state.withLock { $0.running = true }
        Thread.detachNewThread { [self] in
            while stop.wait(timeout: .now() + .milliseconds(Self.interval)) == .timedOut {
                let (given, r) = counts()
                guard given > 0 else { continue }
                printer.errRaw("\r\u{1B}[K" + Self.line(given: given, r))
                state.withLock { $0.drawn = true }
            }
            ended.signal()
        }
    }

    static func line(given: Int, _ r: DispatchReport) -> String {
        let done = r.delivered + r.failed + r.dead + r.unavailable + r.stale
        return "tick: delivering, \(min(done, given)) of \(given) done: \(r.delivered) delivered, \(r.failed) failed, "
            + "\(r.dead) dead"
    }

    /// Stops the redrawing and clears the line; again: nothing.
    func finish() {
        guard
            state.withLock({ s in
                defer { s.running = false }
                return s.running
            })
        else { return }
        stop.signal()
        ended.wait()
        if state.withLock({ $0.drawn }) { printer.errRaw("\r\u{1B}[K") }
    }
}
