/// Zone rules from a `TransitionTable`: one search of a sorted list per
/// question (`SortedSearch`), no Foundation, no allocation.
///
/// Local to UTC: transition `i` (from offset `a` to `b`, at UTC `t`) switches
/// wall times to the new offset from local `t + max(a, b)` on. Before that,
/// the old offset applies, which moves a time in a gap forward by the gap and
/// takes the first occurrence of a time in an overlap. Those switch points
/// are ascending, so one search finds the offset. That equals the search in
/// `ZoneRules.searchInstant(ofLocal:)` whenever at most one transition lies
/// within a day of the wall time; near transitions less than three days apart
/// (and past the expanded table), this type asks that search instead.
public final class TransitionRules: ZoneRules {
    public let table: TransitionTable
    /// `switches.values[i]`: the first local time that takes `table.offsets[i + 1]`.
    let switches: SortedSearch
    /// Local ranges `[lo, hi)` answered by the general search, as flat pairs.
    let slow: [Int64]
    /// The end of the last slow range (`Int64.min` without any).
    let slowUntil: Int64
    /// Local times from here on are answered by the general search.
    let fastUntil: Int64

    public init(table: TransitionTable) {
        self.table = table
        let t = table.times
        let o = table.offsets.map { Int64($0) }
        switches = SortedSearch(t.indices.map { t[$0] + max(o[$0], o[$0 + 1]) })
        let margin = 3 * Instant.day
        var slow: [Int64] = []
        for i in t.indices.dropLast() where t[i + 1] - t[i] < margin {
            if let hi = slow.last, hi >= t[i] - margin {
                slow[slow.count - 1] = t[i + 1] + margin
            } else {
                slow += [t[i] - margin, t[i + 1] + margin]
            }
        }
        self.slow = slow
        slowUntil = slow.last ?? Int64.min
        fastUntil = table.ruleFrom == Int64.max ? Int64.max : table.ruleFrom - margin
    }

    public func offset(at instant: Instant) -> Int { table.offset(at: instant.seconds) }

    public func steadyOffset(around instant: Instant) -> SteadyOffset? {
        let t = instant.seconds
        guard t < table.ruleFrom else { return nil }
        let times = table.times
        let k = table.search.count(notAfter: t)
        let until = k < times.count ? times[k] : table.ruleFrom
        return SteadyOffset(from: k > 0 ? times[k - 1] : Int64.min, until: until, offset: Int(table.offsets[k]))
    }

    public func instant(ofLocal local: Int64) -> Instant {
        if local >= fastUntil || (local < slowUntil && isSlow(local)) { return searchInstant(ofLocal: local) }
        let k = switches.count(notAfter: local)
        return Instant(seconds: local - Int64(table.offsets.withUnsafeBufferPointer { $0[k] }))
    }

    func isSlow(_ local: Int64) -> Bool {
        stride(from: 0, to: slow.count, by: 2).contains { slow[$0] <= local && local < slow[$0 + 1] }
    }
}
