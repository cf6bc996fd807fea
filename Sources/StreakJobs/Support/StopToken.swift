import Synchronization

/// A request to stop, shared by whoever asks for it and whatever checks it: a run's `Context`
/// carries one. The command line's signal handler triggers the process's token on SIGTERM or
/// SIGINT (`StopSignals`); a test triggers its own. Once triggered it stays so. A tick or refill
/// then claims and refills nothing more, starts no delivery and exits 75; `log -f` returns.
public final class StopToken: Sendable {
    private let flag = Atomic<Bool>(false)

    public init() {}

    /// Whether a stop was asked for.
    public var requested: Bool { flag.load(ordering: .relaxed) }

    /// Asks for the stop. Async-signal-safe (one atomic store): a signal handler may call it.
    public func trigger() { flag.store(true, ordering: .relaxed) }
}
