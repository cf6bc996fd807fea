import StreakStore

/// One streak's check-ins being packed (`PackedCheckins`), from rows that come sorted by
/// (user, streak): the direct import's list in the making (`PGCheckinImport`).
struct ListBuilder {
    var user: [UInt8] = []
    var streak: [UInt8] = []
    var packed: [UInt8] = []
    var tagged = false
    var rows = 0
    /// The zone the last record named.
    private var zone: [UInt8] = []

    var isEmpty: Bool { rows == 0 }

    mutating func start(user: UnsafeBufferPointer<UInt8>, streak: UnsafeBufferPointer<UInt8>) {
        self.user.removeAll(keepingCapacity: true)
        self.user.append(contentsOf: user)
        self.streak.removeAll(keepingCapacity: true)
        self.streak.append(contentsOf: streak)
        packed.removeAll(keepingCapacity: true)
        tagged = false
        rows = 0
        zone.removeAll(keepingCapacity: true)
    }

    /// Adds a check-in; `meta` as stored (compact JSON).
    mutating func add(at: Int64, storedAt: Int64, zone: UnsafeBufferPointer<UInt8>, meta: UnsafeBufferPointer<UInt8>?) {
        let same = rows > 0 && self.zone.withUnsafeBufferPointer { sameBytes($0, zone) }
        if !same {
            self.zone.removeAll(keepingCapacity: true)
            self.zone.append(contentsOf: zone)
        }
        PackedCheckins.append(at: at, storedAt: storedAt, zone: same ? nil : zone, eventID: nil, meta: meta, to: &packed)
        if meta != nil { tagged = true }
        rows += 1
    }

    /// Another (user, streak) against this list's, in byte order (as `memcmp` and collation C):
    /// above 0 when it comes after.
    func compare(user: UnsafeBufferPointer<UInt8>, streak: UnsafeBufferPointer<UInt8>) -> Int {
        let u = self.user.withUnsafeBufferPointer { compareBytes(user, $0) }
        return u != 0 ? u : self.streak.withUnsafeBufferPointer { compareBytes(streak, $0) }
    }
}

/// The distinct (user, streak) of rows that come sorted by them in byte order, two texts a pair
/// (1M pairs: about 21 MB): a pair equal to the last is skipped; one below it, or more than
/// `limit` bytes held, ends the list (`add` answers false).
struct SchedulePairs {
    static let limit = 48 << 20
    /// Pair k's user is text 2k, its streak text 2k + 1.
    private var texts = PackedTexts()

    mutating func add(user: UnsafeBufferPointer<UInt8>, streak: UnsafeBufferPointer<UInt8>) -> Bool {
        if !texts.isEmpty {
            let order = texts.withTexts { t in
                let u = compareBytes(t[t.count - 2], user)
                return u != 0 ? u : compareBytes(t[t.count - 1], streak)
            }
            if order == 0 { return true }
            if order > 0 { return false }
        }
        guard texts.byteCount + (texts.count + 2) * PackedTexts.costPerText + user.count + streak.count <= Self.limit
        else { return false }
        texts.append(user)
        texts.append(streak)
        return true
    }

    /// Each pair as a COPY row.
    func write(to w: inout PGCopyWriter) throws {
        try texts.withTexts { t in
            for k in stride(from: 0, to: t.count, by: 2) {
                w.append(text: t[k])
                w.append(text: t[k + 1])
                try w.endRow()
            }
        }
    }
}
