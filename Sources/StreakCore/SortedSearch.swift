/// Finds how many leading values of an ascending list are at most a given
/// value, fast: a jump table of 2^22-second buckets (about 48.5 days) from
/// 1900 (or the first value) to the last value says where each bucket starts,
/// and a short scan finishes. Outside that span, a binary search.
///
/// The list need only be partitioned by the value asked (every value at most
/// it before every value above it), not sorted throughout.
struct SortedSearch: Sendable, Equatable {
    let values: [Int64]
    /// The start of bucket 0.
    let base: Int64
    /// For each bucket, how many leading values are at most its start.
    let starts: [UInt16]

    static let shift: Int64 = 22
    static let earliest: Int64 = -2_208_988_800  // 1900-01-01T00:00:00Z

    init(_ values: [Int64]) {
        self.values = values
        let base = max(values.first ?? 0, Self.earliest)
        self.base = base
        guard let last = values.last, last > base, values.count < Int(UInt16.max) else {
            starts = []
            return
        }
        var starts: [UInt16] = []
        var k = 0
        for b in 0...((last - base) >> Self.shift) {
            let start = base + b << Self.shift
            while k < values.count, values[k] <= start { k += 1 }
            starts.append(UInt16(k))
        }
        self.starts = starts
    }

    /// How many leading values are at most `x`.
    @inline(__always)
    func count(notAfter x: Int64) -> Int {
        values.withUnsafeBufferPointer { v in
            let n = v.count
            guard n > 0, x < v[n - 1] else { return n }
            let b = (x - base) >> Self.shift
            guard b >= 0, b < starts.count else { return Self.binarySearch(v, x) }
            var k = Int(starts.withUnsafeBufferPointer { $0[Int(b)] })
            while v[k] <= x { k += 1 }  // stops: v[n - 1] > x
            return k
        }
    }

    /// How many leading values are at most `x`, by a branch-free binary search.
    static func binarySearch(_ values: UnsafeBufferPointer<Int64>, _ x: Int64) -> Int {
        var n = values.count
        guard n > 0 else { return 0 }
        var base = 0
        while n > 1 {
            let half = n / 2
            base = values[base + half] <= x ? base + half : base
            n -= half
        }
        return base + (values[base] <= x ? 1 : 0)
    }
}
