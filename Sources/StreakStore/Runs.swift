import StreakCore

/// The runs delivering notifications, each with a lease kept alive by heartbeats on the store's
/// clock (the database server's, or this host's for a file). Another run may take a run's
/// deliveries over once its lease has run out (`LedgerWriting.takeOver`); a run whose own lease
/// ran out delivers nothing more (it fences itself). No two hosts' clocks are ever compared.
public protocol RunRegistry {
    /// Registers a run with the lease it asks for: how long after its last heartbeat others may
    /// take its deliveries over.
    func register(run: String, host: String, lease: Int64) throws
    /// Notes that the run is alive now, on the store's clock. False when its registration is gone
    /// (taken as dead by another run): it must deliver nothing more.
    func heartbeat(run: String) throws -> Bool
    /// Ends a run's registration (and forgets long-dead runs).
    func unregister(run: String) throws
}
