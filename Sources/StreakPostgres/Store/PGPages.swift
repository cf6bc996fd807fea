import Dispatch
import Synchronization

/// Pages a thread reads from one connection for a caller on another, in order, at most
/// `capacity` waiting: the reading thread keeps the server streaming while the caller works on
/// the page before.
final class PGPages<Page: Sendable>: Sendable {
    private let state = Mutex<(pages: [Result<Page, any Error>], stopped: Bool)>(([], false))
    /// Signalled once per page handed over, and once when the reader is done.
    private let available = DispatchSemaphore(value: 0)
    private let room: DispatchSemaphore

    init(capacity: Int) { room = DispatchSemaphore(value: capacity) }

    /// The reader hands over a page (or its error), waiting for room; false when the caller stopped.
    func put(_ page: Result<Page, any Error>) -> Bool {
        room.wait()
        let taken = state.withLock { s -> Bool in
            guard !s.stopped else { return false }
            s.pages.append(page)
            return true
        }
        if taken { available.signal() } else { room.signal() }
        return taken
    }

    /// The reader is done: `take` answers nil once the rest is taken.
    func finish() { available.signal() }

    /// The next page, waiting for it; nil when the reader is done and nothing is left.
    func take() -> Result<Page, any Error>? {
        available.wait()
        guard let page = state.withLock({ s in s.pages.isEmpty ? nil : s.pages.removeFirst() }) else {
            available.signal()  // done: every later take answers nil too
            return nil
        }
        room.signal()
        return page
    }

    /// The caller stops taking: the reader's waiting or next `put` answers false.
    func stop() {
        state.withLock {
            $0.stopped = true
            $0.pages.removeAll()
        }
        room.signal()
    }
}
