/// The offsets of one zone over time, as a sorted list of transitions.
///
/// `offsets[i]` is in force before `times[i]` (and from `times[i - 1]`);
/// `offsets[times.count]` from the last transition on. Consecutive offsets
/// always differ: transitions that change only a zone's name or its DST flag
/// are dropped. From `ruleFrom` on, `rule` (a TZif footer) decides instead of
/// the list; the list holds the rule's transitions up to there.
public struct TransitionTable: Sendable, Equatable {
    public var times: [Int64] { search.values }
    public let offsets: [Int32]
    let search: SortedSearch
    public let rule: PosixTZ?
    public let ruleFrom: Int64

    /// Rule years expanded into the list; later instants ask the rule itself.
    public static let lastExpandedYear = 2200

    /// A table from transitions `(instant, offset from then on)` in time order
    /// with `initial` in force before the first, and a rule after the last.
    /// Nil if the instants are not ascending or an offset is a day or more.
    public init?(initial: Int, transitions: [(at: Int64, offset: Int)], rule: PosixTZ? = nil) {
        var all = transitions
        var ruleFrom = Int64.max
        if let rule, rule.daylight != nil {
            // The rule's transitions after the last listed one, through the last
            // expanded year; a rule year's transitions lie within 8 days of it.
            let after = transitions.last?.at ?? Int64.min
            let firstYear =
                transitions.last.map { LocalDate(day: Int($0.at.floorDiv(Instant.day))).components.year } ?? 1970
            for year in (firstYear - 1)...max(firstYear, Self.lastExpandedYear) {
                all += rule.transitions(year: year).filter { $0.at > after }
            }
            ruleFrom = Int64(LocalDate(year: Self.lastExpandedYear + 1, month: 1, day: 1)!.day - 9) * Instant.day
            all = all.filter { $0.at < ruleFrom }
            // Stable: of two transitions at one instant the later-listed wins.
            all = all.enumerated().sorted { ($0.element.at, $0.offset) < ($1.element.at, $1.offset) }.map(\.element)
        }
        var times: [Int64] = []
        var offsets: [Int32] = [Int32(clamping: initial)]
        var previous = Int64.min
        for (at, offset) in all {
            guard abs(offset) < Int(Instant.day), at >= previous else { return nil }
            previous = at
            if times.last == at {  // the earlier of the two lasted no time
                times.removeLast()
                offsets.removeLast()
            }
            if Int(offsets[offsets.count - 1]) != offset {
                times.append(at)
                offsets.append(Int32(offset))
            }
        }
        guard abs(initial) < Int(Instant.day) else { return nil }
        if let rule, rule.daylight == nil, Int(offsets[offsets.count - 1]) != rule.standard { return nil }
        self.search = SortedSearch(times)
        self.offsets = offsets
        self.rule = rule?.daylight == nil ? nil : rule
        self.ruleFrom = ruleFrom
    }

    /// Seconds east of UTC in force at an instant.
    @inline(__always)
    public func offset(at t: Int64) -> Int {
        if t >= ruleFrom, let rule { return rule.offset(at: t) }
        let k = search.count(notAfter: t)
        return Int(offsets.withUnsafeBufferPointer { $0[k] })
    }
}
