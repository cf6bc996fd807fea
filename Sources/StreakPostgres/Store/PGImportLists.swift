import StreakStore

/// One streak's check-ins being packed (`PackedCheckins`), from rows that come sorted by
/// (user, streak).
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

    mutating func add(at: Int64, storedAt: Int64, zone: UnsafeBufferPointer<UInt8>, meta: String?) {
        let same = rows > 0 && self.zone.withUnsafeBufferPointer { sameBytes($0, zone) }
        if !same {
            self.zone.removeAll(keepingCapacity: true)
            self.zone.append(contentsOf: zone)
        }
        func append(meta: UnsafeBufferPointer<UInt8>?) {
            PackedCheckins.append(at: at, storedAt: storedAt, zone: same ? nil : zone, eventID: nil, meta: meta, to: &packed)
        }
        if var meta {
            tagged = true
            meta.withUTF8 { append(meta: $0) }
        } else {
            append(meta: nil)
        }
        rows += 1
    }

    /// Another (user, streak) against this list's, in byte order (as `memcmp` and collation C):
    /// above 0 when it comes after.
    func compare(user: UnsafeBufferPointer<UInt8>, streak: UnsafeBufferPointer<UInt8>) -> Int {
        let u = self.user.withUnsafeBufferPointer { compareBytes(user, $0) }
        return u != 0 ? u : self.streak.withUnsafeBufferPointer { compareBytes(streak, $0) }
    }
}

/// The distinct (user, streak) of rows that come sorted by them in byte order, held as
/// length-prefixed bytes (1M pairs: about 21 MB): a pair equal to the last is skipped; one below
/// it, or more than `limit` bytes held, ends the list (`add` answers false).
struct SchedulePairs {
    static let limit = 48 << 20
    var text: [UInt8] = []
    /// Where the last pair's user and streak begin in `text`.
    private var last: (user: Int, streak: Int, end: Int)?

    mutating func add(user: UnsafeBufferPointer<UInt8>, streak: UnsafeBufferPointer<UInt8>) -> Bool {
        if let last {
            let order = text.withUnsafeBufferPointer { t in
                let u = compareBytes(UnsafeBufferPointer(rebasing: t[(last.user + 4)..<last.streak]), user)
                return u != 0 ? u : compareBytes(UnsafeBufferPointer(rebasing: t[(last.streak + 4)..<last.end]), streak)
            }
            if order == 0 { return true }
            if order > 0 { return false }
        }
        guard text.count + user.count + streak.count + 8 <= Self.limit else { return false }
        let u = text.count
        append(user)
        let s = text.count
        append(streak)
        last = (u, s, text.count)
        return true
    }

    private mutating func append(_ bytes: UnsafeBufferPointer<UInt8>) {
        var n = UInt32(bytes.count).littleEndian
        withUnsafeBytes(of: &n) { text.append(contentsOf: $0) }
        text.append(contentsOf: bytes)
    }

    /// Each pair as a COPY row.
    func write(to w: inout PGCopyWriter) throws {
        try text.withUnsafeBufferPointer { t in
            var i = 0
            func field() -> UnsafeBufferPointer<UInt8> {
                let n = Int(t[i]) | Int(t[i + 1]) << 8 | Int(t[i + 2]) << 16 | Int(t[i + 3]) << 24
                defer { i += 4 + n }
                return UnsafeBufferPointer(rebasing: t[(i + 4)..<(i + 4 + n)])
            }
            while i < t.count {
                w.append(text: field())
                w.append(text: field())
                try w.endRow()
            }
        }
    }
}
