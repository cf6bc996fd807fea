import Dispatch
import StreakCore
import StreakStore
import Synchronization

/// How several planning threads split `preview`'s queue of runs (docs/RULES.md, "Preview"): in
/// chunks, each the runs planned at one instant (the streaks marked changed first, as chunk 0),
/// handed out in order to whichever thread asks next. Each reads its own connection, at one
/// snapshot with the others (`Store.readTogether`), so all see the same queue. A thread asks for
/// a chunk only when the printing thread has finished all but `lookahead` of those handed out:
/// what waits to be printed stays bounded.
final class PreviewChunks: Sendable {
    /// A chunk: its place in the order, and its runs' instant (nil: the changed streaks).
    struct Chunk {
        var seq: Int
        var at: Instant?
    }

    private let state = Mutex<(seq: Int, last: Instant?, done: Bool)>((0, nil, false))
    private let room: DispatchSemaphore

    init(lookahead: Int) { room = DispatchSemaphore(value: lookahead) }

    /// The next chunk, or nil when the queue is read to its end (or printing stopped). `next`
    /// answers the first instant with a run after the given one (nil: from the front): the first
    /// asker finds it, on its own connection, and every connection answers the same.
    func claim(next: (Instant?) throws -> Instant?) throws -> Chunk? {
        room.wait()
        let chunk = try state.withLock { s -> Chunk? in
            guard !s.done else { return nil }
            defer { s.seq += 1 }
            guard s.seq > 0 else { return Chunk(seq: 0, at: nil) }
            guard let at = try next(s.last) else {
                s.done = true
                return nil
            }
            s.last = at
            return Chunk(seq: s.seq, at: at)
        }
        if chunk == nil { room.signal() }  // the next asker finds the end at once too
        return chunk
    }

    /// The printing thread has finished a chunk: one more may be handed out.
    func printed() { room.signal() }

    /// Printing stopped: every asker, waiting or not, gets nil.
    func close() {
        state.withLock { $0.done = true }
        room.signal()
    }
}

/// The printing thread's side: chunks' notices are taken in chunk order, whatever order the
/// planning threads hand them in, and every notice due before the current chunk's instant can go.
/// One planning thread hands its batches over as parts of chunk 0, never ended, each with the
/// instant of the last run it read.
struct ChunkOrder {
    /// A planning thread's part of one chunk: notices (zones by index into `zones`, that thread's
    /// list), or its end.
    struct Part: Sendable {
        var seq: Int
        /// Once this part is taken in, every notice due before it has been handed over (nil: not
        /// known yet).
        var at: Instant?
        var worker: Int
        var entries: [UpcomingQueue.Entry]
        var zones: [Zone]
        var last: Bool
    }

    private(set) var queue = UpcomingQueue()
    /// The zones of the queued notices, each once, and each worker's index into them.
    private(set) var zones: [Zone] = []
    private var zoneIndex: [String: Int32] = [:]
    private var zoneMaps: [[Int32]] = []
    /// The chunk being taken in; parts of later ones, waiting their turn.
    private var current = 0
    private var parked: [Int: [Part]] = [:]

    /// Takes `part` in (or parks it); answers what can be printed now, in order.
    mutating func take(_ part: Part, chunks: PreviewChunks) -> [UpcomingQueue.Entry] {
        guard part.seq == current else {
            parked[part.seq, default: []].append(part)
            return []
        }
        var parts = [part]
        var out: [UpcomingQueue.Entry] = []
        while !parts.isEmpty {
            let p = parts.removeFirst()
            push(p)
            if let at = p.at { out += queue.pop(before: at) }
            if p.last {
                current += 1
                chunks.printed()
                parts += parked.removeValue(forKey: current) ?? []
            }
        }
        return out
    }

    /// Everything left, once every chunk is in.
    mutating func rest() -> [UpcomingQueue.Entry] { queue.pop(before: nil) }

    private mutating func push(_ p: Part) {
        guard !p.entries.isEmpty else { return }
        while zoneMaps.count <= p.worker { zoneMaps.append([]) }
        while zoneMaps[p.worker].count < p.zones.count {
            let zone = p.zones[zoneMaps[p.worker].count]
            if let i = zoneIndex[zone.identifier] {
                zoneMaps[p.worker].append(i)
            } else {
                zones.append(zone)
                zoneIndex[zone.identifier] = Int32(zones.count - 1)
                zoneMaps[p.worker].append(Int32(zones.count - 1))
            }
        }
        let map = zoneMaps[p.worker]
        for var e in p.entries {
            e.zone = map[Int(e.zone)]
            queue.push(e)
        }
    }
}
