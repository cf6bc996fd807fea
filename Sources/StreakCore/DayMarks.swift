/// Values by date, stored densely from the earliest date set: a streak's dates are
/// consecutive, so an array beats a dictionary (no hashing, one allocation).
public struct DayTable<Value: Sendable>: Sendable {
    private var first = 0
    private var slots: [Value?] = []

    public init() {}

    public subscript(date: LocalDate) -> Value? {
        get {
            let i = date.day - first
            return i >= 0 && i < slots.count ? slots[i] : nil
        }
        set {
            if slots.isEmpty { first = date.day }
            if date.day < first {
                slots.insert(contentsOf: repeatElement(nil, count: first - date.day), at: 0)
                first = date.day
            }
            let i = date.day - first
            if i >= slots.count { slots.append(contentsOf: repeatElement(nil, count: i - slots.count + 1)) }
            slots[i] = newValue
        }
    }

    /// The dates set, in date order.
    public var keys: [LocalDate] { slots.indices.compactMap { slots[$0] == nil ? nil : LocalDate(day: first + $0) } }
    public var values: [Value] { slots.compactMap { $0 } }
}

extension DayTable: Sequence {
    /// Date order.
    public func makeIterator() -> IndexingIterator<[(key: LocalDate, value: Value)]> {
        slots.indices.compactMap { i in slots[i].map { (key: LocalDate(day: first + i), value: $0) } }.makeIterator()
    }
}

/// What became of each date of a streak.
public typealias DayMarks = DayTable<DayMark>
