import StreakStore

/// The order `SortedCheckins` hands its rows over in: the store's, (user, streak, at), bytes
/// compared (`compareBytes`), by ranks of the checker's numbers.
extension SortedCheckins {
    /// Each key's rank in byte order, by number; nil when the numbers are that order.
    static func ranks(of table: ByteTable) -> [UInt32]? {
        func less(_ a: Int, _ b: Int) -> Bool {
            table.withKey(a) { a in table.withKey(b) { b in compareBytes(a, b) < 0 } }
        }
        if (0..<max(table.count - 1, 0)).allSatisfy({ less($0, $0 + 1) }) { return nil }
        let order = (0..<table.count).sorted(by: less)
        var rank = [UInt32](repeating: 0, count: table.count)
        for (r, n) in order.enumerated() { rank[n] = UInt32(r) }
        return rank
    }

    /// Sorts the rows by user (a counting sort in place, in two rounds: by the rank's upper
    /// bits, then within each part by the lower ones, so the rows a round moves stay within
    /// reach of the cache), then each user's by streak, instant, zone and place in the file.
    /// Answers where the rows stand that repeat an earlier row's (user, event id), in order.
    func sort(
        _ rows: UnsafeMutableBufferPointer<Row>, users: Int, rank: (UInt32) -> UInt32, _ streakRank: [UInt32],
        _ zoneRank: [UInt32]
    ) -> [Int] {
        let shift = (Int.bitWidth - max(users - 1, 1).leadingZeroBitCount + 1) / 2
        let low = (1 << shift) - 1
        var ends: [Int] = []
        var next: [Int] = []
        var userEnds: [Int] = []
        var innerEnds: [Int] = []
        Self.flagSort(rows, buckets: ((users - 1) >> shift) + 1, ends: &ends, next: &next) { Int(rank($0.user)) >> shift }
        var start = 0
        for end in ends {
            Self.flagSort(
                UnsafeMutableBufferPointer(rebasing: rows[start..<end]), buckets: low + 1, ends: &innerEnds, next: &next
            ) { Int(rank($0.user)) & low }
            for e in innerEnds where userEnds.last != start + e { userEnds.append(start + e) }
            start = end
        }
        func less(_ a: Row, _ b: Row) -> Bool {
            let (sa, sb) = (streakRank[Int(a.streak)], streakRank[Int(b.streak)])
            if sa != sb { return sa < sb }
            let (ta, tb) = (at(a), at(b))
            if ta != tb { return ta < tb }
            let (za, zb) = (zoneRank[Int(a.zone)], zoneRank[Int(b.zone)])
            if za != zb { return za < zb }
            return a.extra < b.extra
        }
        var late: [Int] = []
        start = 0
        var withID: [Int] = []
        for stop in userEnds {
            if stop - start > 1 {
                if stop - start <= 16 {
                    for i in (start + 1)..<stop {
                        let row = rows[i]
                        var j = i
                        while j > start && less(row, rows[j - 1]) {
                            rows[j] = rows[j - 1]
                            j -= 1
                        }
                        rows[j] = row
                    }
                } else {
                    var slice = UnsafeMutableBufferPointer(rebasing: rows[start..<stop])
                    slice.sort(by: less)
                }
                // The same event id twice for one user: the first in the file goes first.
                withID.removeAll(keepingCapacity: true)
                for i in start..<stop where rows[i].extra != 0 && extras[Int(rows[i].extra) - 1].has & Extra.eventID != 0 {
                    withID.append(i)
                }
                if withID.count > 1 { late += repeated(withID, rows) }
            }
            start = stop
        }
        return late.sorted()
    }

    /// A counting sort in place (American flag): `ends` tells where each bucket ends.
    @inline(__always)
    static func flagSort(
        _ rows: UnsafeMutableBufferPointer<Row>, buckets: Int, ends: inout [Int], next: inout [Int],
        key: (Row) -> Int
    ) {
        next.removeAll(keepingCapacity: true)
        next.append(contentsOf: repeatElement(0, count: buckets + 1))
        for row in rows { next[key(row) + 1] += 1 }
        for b in 0..<buckets { next[b + 1] += next[b] }
        ends.removeAll(keepingCapacity: true)
        ends.append(contentsOf: next.dropFirst())
        next.withUnsafeMutableBufferPointer { next in
            ends.withUnsafeBufferPointer { ends in
                for b in 0..<buckets {
                    while next[b] < ends[b] {
                        var row = rows[next[b]]
                        var t = key(row)
                        while t != b {
                            swap(&row, &rows[next[t]])
                            next[t] += 1
                            t = key(row)
                        }
                        rows[next[b]] = row
                        next[b] += 1
                    }
                }
            }
        }
    }

    /// Of rows with event ids (their places), those whose event id an earlier row of the file has.
    private func repeated(_ places: [Int], _ rows: UnsafeMutableBufferPointer<Row>) -> [Int] {
        extraTexts.withTexts { text in
            func id(_ i: Int) -> UnsafeBufferPointer<UInt8> { text[2 * (Int(rows[i].extra) - 1)] }
            let byID = places.sorted { a, b in
                let order = compareBytes(id(a), id(b))
                return order != 0 ? order < 0 : rows[a].extra < rows[b].extra
            }
            var repeats: [Int] = []
            for k in 1..<byID.count where sameBytes(id(byID[k]), id(byID[k - 1])) { repeats.append(byID[k]) }
            return repeats
        }
    }
}
