import Dispatch
import Synchronization

/// Values handed from one thread to another, in order, at most `capacity` waiting: the sender
/// waits for room, so it never runs far ahead of the receiver.
final class Handoff<Value: Sendable>: Sendable {
    private let room: DispatchSemaphore
    private let waiting = DispatchSemaphore(value: 0)
    private let state = Mutex<(values: [Value], first: Int, stopped: Bool)>(([], 0, false))

    init(capacity: Int) { room = DispatchSemaphore(value: capacity) }

    /// Waits for room and hands `value` over; false, dropping it, once the receiver has stopped.
    /// One sender only: after a false it sends no more.
    func send(_ value: Value) -> Bool {
        room.wait()
        let sent = state.withLock { s -> Bool in
            guard !s.stopped else { return false }
            s.values.append(value)
            return true
        }
        if sent { waiting.signal() }
        return sent
    }

    /// Waits for the next value.
    func receive() -> Value {
        waiting.wait()
        let value = state.withLock { s -> Value in
            let v = s.values[s.first]
            s.first += 1
            if s.first == s.values.count { (s.values, s.first) = ([], 0) }
            return v
        }
        room.signal()
        return value
    }

    /// The receiver takes no more: a sender waiting for room, or sending later, gets false.
    func stop() {
        state.withLock { $0.stopped = true }
        room.signal()
    }
}
