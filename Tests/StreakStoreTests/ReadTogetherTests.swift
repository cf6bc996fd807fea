import Foundation
import StreakCore
import StreakStore
import Synchronization
import Testing

@testable import StreakSQLite

/// `readTogether` on SQLite: several connections, each on a thread of its own, all reading one
/// snapshot, whatever another connection commits meanwhile; on one connection when they cannot
/// be lined up; every error back to the caller, and no thread left waiting.
@Suite struct ReadTogetherTests {
    struct Broken: Error, Equatable {}

    func store() throws -> SQLiteStore {
        let store = try SQLiteStore(path: scratch() + "/s.sqlite")
        try store.write { w in try w.setMeta("counter", "0") }
        return store
    }

    /// What each connection read, by its index, and how many connections there were.
    final class Seen: Sendable {
        let values = Mutex<[Int: String]>([:])
        let counts = Mutex<Set<Int>>([])
    }

    /// A number threads count up, and a stop flag.
    final class Shared: Sendable {
        let count = Atomic<Int>(0)
        let stop = Atomic<Bool>(false)
        var value: Int { count.load(ordering: .relaxed) }
        func add() { count.add(1, ordering: .relaxed) }
    }

    @Test func everyConnectionReadsTheSameSnapshotWhileAnotherCommits() throws {
        let path = scratch() + "/s.sqlite"
        let writer = try SQLiteStore(path: path)
        try writer.write { w in try w.setMeta("counter", "0") }
        let reader = try SQLiteStore(path: path, access: .read)
        let commits = Shared()
        let writing = Thread {
            var n = 0
            while !commits.stop.load(ordering: .relaxed) {
                n += 1
                try? writer.write { w in try w.setMeta("counter", "\(n)") }
                commits.add()
            }
        }
        writing.start()
        defer { commits.stop.store(true, ordering: .relaxed) }
        while commits.value < 10 { usleep(1000) }
        var together = 0
        for _ in 0..<40 {
            let seen = Seen()
            try reader.readTogether(3) { i, n, r in
                // Each reads twice, with a pause between: one snapshot for the whole read.
                let first = try r.meta("counter") ?? "-"
                usleep(2000)
                let second = try r.meta("counter") ?? "-"
                seen.values.withLock { $0[i] = first == second ? first : "\(first) then \(second)" }
                seen.counts.withLock { _ = $0.insert(n) }
            }
            let values = seen.values.withLock { $0 }
            let counts = seen.counts.withLock { $0 }
            #expect(counts.count == 1)
            #expect(values.count == counts.first)
            #expect(Set(values.values).count == 1, "one snapshot: \(values)")
            if counts.first == 3 { together += 1 }
        }
        commits.stop.store(true, ordering: .relaxed)
        // The writer commits some thousand times a second; tries still line up.
        #expect(together > 0)
        print("readTogether: \(together) of 40 on three connections, \(commits.value) commits")
    }

    @Test func aQuietStoreOpenedForReadingIsReadOnEveryConnectionAtOnce() throws {
        let path = scratch() + "/s.sqlite"
        _ = try SQLiteStore(path: path)
        let reader = try SQLiteStore(path: path, access: .read)
        let seen = Seen()
        // All three inside their reads at once: each waits until every one has begun.
        let inside = Shared()
        try reader.readTogether(3) { i, n, r in
            _ = try r.meta("counter")
            inside.add()
            let deadline = ContinuousClock.now + .seconds(10)
            while inside.value < n && ContinuousClock.now < deadline { usleep(500) }
            seen.counts.withLock { _ = $0.insert(n) }
        }
        #expect(seen.counts.withLock { $0 } == [3])
        #expect(inside.value == 3)
    }

    @Test func anErrorOnOneConnectionComesBackAfterEveryOneEnded() throws {
        let store = try store()
        let ended = Shared()
        #expect(throws: Broken()) {
            try store.readTogether(3) { i, _, r in
                defer { ended.add() }
                _ = try r.meta("counter")
                if i == 1 { throw Broken() }
                usleep(20_000)
            }
        }
        #expect(ended.value == 3)
        // The connections are free again: the next read together goes as usual.
        let seen = Seen()
        try store.readTogether(2) { i, _, r in
            let value = try r.meta("counter")
            seen.values.withLock { $0[i] = value }
        }
        #expect(seen.values.withLock { $0 } == [0: "0", 1: "0"])
    }

    @Test func oneConnectionIsTheCallersOwn() throws {
        let store = try store()
        let seen = Seen()
        try store.readTogether(1) { i, n, r in
            let value = try r.meta("counter") ?? "-"
            seen.values.withLock { $0[i] = "\(n) \(value)" }
        }
        #expect(seen.values.withLock { $0 } == [0: "1 0"])
    }
}
