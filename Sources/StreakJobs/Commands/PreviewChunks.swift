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
    /// A planning thread's part of one chunk: notices (names numbered in `names`, that thread's
    /// own), or its end.
    struct Part: Sendable {
        var seq: Int
        /// Once this part is taken in, every notice due before it has been handed over (nil: not
        /// known yet).
        var at: Instant?
        var worker: Int
        var batch: NoticeBatch
        var names: NoticeNames
        var last: Bool
    }

    private(set) var queue = UpcomingQueue()
    /// The names of the queued notices, each once, and each worker's numbers of them.
    private(set) var names = NoticeNames()
    private var maps: [NoticeNames.NameMap] = []
    /// The chunk being taken in; parts of later ones, waiting their turn.
    private var current = 0
    private var parked: [Int: [Part]] = [:]

    /// Takes `part` in (or parks it); answers what can be printed now, in order.
    mutating func take(_ part: Part, chunks: PreviewChunks) -> [NoticeBatch] {
        guard part.seq == current else {
            parked[part.seq, default: []].append(part)
            return []
        }
        var parts = [part]
        var out: [NoticeBatch] = []
        while !parts.isEmpty {
            let p = parts.removeFirst()
            push(p)
            if let at = p.at { out += queue.pop(before: at, streaks: names.streaks) }
            if p.last {
                current += 1
                chunks.printed()
                parts += parked.removeValue(forKey: current) ?? []
            }
        }
        return out
    }

    /// Everything left, once every chunk is in.
    mutating func rest() -> [NoticeBatch] { queue.pop(before: nil, streaks: names.streaks) }

    private mutating func push(_ p: Part) {
        guard !p.batch.isEmpty else { return }
        while maps.count <= p.worker { maps.append(NoticeNames.NameMap()) }
        names.adopt(p.names, &maps[p.worker])
        let map = maps[p.worker]
        p.batch.forEach { item, user in
            var item = item
            map.apply(&item)
            queue.push(item, user: user)
        }
    }
}
