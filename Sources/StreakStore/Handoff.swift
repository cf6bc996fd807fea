import Dispatch
import Synchronization

/// Batches from one thread to another, in order, at most `capacity` waiting: the giver stays a
/// little ahead of the taker, and memory stays bounded. The import's reader and its writer,
/// preview's planning and printing threads, and a PostgreSQL read's streaming connection and its
/// caller each share one.
public final class Handoff<Item: Sendable>: Sendable {
    private let state = Mutex<(items: [Item], closed: Bool)>(([], false))
    /// Signalled once per item handed over, and once when the giver is done.
    private let available = DispatchSemaphore(value: 0)
    private let room: DispatchSemaphore

    public init(capacity: Int) { room = DispatchSemaphore(value: capacity) }

    /// Waits for room and hands `item` over; false when the taker has stopped.
    public func put(_ item: Item) -> Bool {
        room.wait()
        let taken = state.withLock { s -> Bool in
            guard !s.closed else { return false }
            s.items.append(item)
            return true
        }
        // Refused: the room goes back, for the giver's next put to be refused at once too.
        if taken { available.signal() } else { room.signal() }
        return taken
    }

    /// The giver is done: `take` answers nil once the rest is taken.
    public func finish() { available.signal() }

    /// The next item, waiting for it; nil when the giver is done and nothing is left.
    public func take() -> Item? {
        available.wait()
        guard let item = state.withLock({ s in s.items.isEmpty ? nil : s.items.removeFirst() }) else {
            available.signal()  // done: every later take answers nil too
            return nil
        }
        room.signal()
        return item
    }

    /// The taker stops (an error): a waiting or later `put` answers false.
    public func close() {
        state.withLock {
            $0.closed = true
            $0.items.removeAll()
        }
        room.signal()
    }
}
