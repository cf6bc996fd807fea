import StreakCore

/// A batch of check-ins on their way to a store (`CheckinImport.insert`), as a value: each
/// row's texts (user, streak, zone, event id, metadata: five a row, an absent one empty) end to
/// end in one `PackedTexts`, its instant beside. A reader fills a batch, then hands it to the
/// thread that stores it.
public struct CheckinRows: Sendable {
    /// A row's instant, and which of its optional texts it has.
    struct Row {
        var at: Int64
        var has: UInt8

        static let eventID: UInt8 = 1
        static let meta: UInt8 = 2
    }

    private var rows: [Row] = []
    private var texts = PackedTexts()
    static let textsPerRow = 5

    public init() {}

    /// Room for `rows` rows of about `bytesPerRow` bytes of text each.
    public init(reserving rows: Int, bytesPerRow: Int) {
        self.rows.reserveCapacity(rows)
        texts = PackedTexts(reservingTexts: rows * Self.textsPerRow, bytes: rows * bytesPerRow)
    }

    /// Check-ins given as strings, in their order.
    public init(_ checkins: [NewCheckin]) {
        self.init(reserving: checkins.count, bytesPerRow: 32)
        for c in checkins { append(c) }
    }

    public var count: Int { rows.count }
    public var isEmpty: Bool { rows.isEmpty }
    /// The bytes of the rows' texts.
    public var textBytes: Int { texts.byteCount }

    /// Adds a row; texts are copied.
    public mutating func append(
        user: UnsafeBufferPointer<UInt8>, streak: UnsafeBufferPointer<UInt8>, at: Instant,
        zone: UnsafeBufferPointer<UInt8>, eventID: UnsafeBufferPointer<UInt8>?, meta: UnsafeBufferPointer<UInt8>?
    ) {
        let none = UnsafeBufferPointer<UInt8>(start: nil, count: 0)
        texts.append(user)
        texts.append(streak)
        texts.append(zone)
        texts.append(eventID ?? none)
        texts.append(meta ?? none)
        rows.append(Row(at: at.seconds, has: (eventID == nil ? 0 : Row.eventID) | (meta == nil ? 0 : Row.meta)))
    }

    /// Adds a check-in given as strings.
    public mutating func append(_ c: NewCheckin) {
        var (user, streak, zone, eventID, meta) = (c.user, c.streak, c.zone, c.eventID ?? "", c.meta ?? "")
        user.withUTF8 { u in
            streak.withUTF8 { s in
                zone.withUTF8 { z in
                    eventID.withUTF8 { e in
                        meta.withUTF8 { m in
                            append(
                                user: u, streak: s, at: c.instant, zone: z, eventID: c.eventID == nil ? nil : e,
                                meta: c.meta == nil ? nil : m)
                        }
                    }
                }
            }
        }
    }

    /// Adds rows `range` of `other`, after these.
    public mutating func append(_ other: CheckinRows, _ range: Range<Int>) {
        other.withRows { o in
            for i in range {
                append(user: o.user(i), streak: o.streak(i), at: o.at(i), zone: o.zone(i), eventID: o.eventID(i), meta: o.meta(i))
            }
        }
    }

    /// Drops every row, keeping the room.
    public mutating func removeAll() {
        rows.removeAll(keepingCapacity: true)
        texts.removeAll()
    }

    /// Row `i` as strings.
    public func checkin(_ i: Int) -> NewCheckin {
        withRows { r in
            func string(_ b: UnsafeBufferPointer<UInt8>) -> String { String(decoding: b, as: UTF8.self) }
            return NewCheckin(
                user: string(r.user(i)), streak: string(r.streak(i)), instant: r.at(i), zone: string(r.zone(i)),
                eventID: r.eventID(i).map(string), meta: r.meta(i).map(string))
        }
    }

    /// Calls `body` with the rows at hand (`Fields`), for a loop over many: valid during the call only.
    public func withRows<R>(_ body: (Fields) throws -> R) rethrows -> R {
        try rows.withUnsafeBufferPointer { rows in try texts.withTexts { try body(Fields(rows: rows, texts: $0)) } }
    }

    /// The rows' fields while `withRows` runs, by row: bytes valid during that call only.
    public struct Fields {
        let rows: UnsafeBufferPointer<Row>
        let texts: PackedTexts.Texts

        public var count: Int { rows.count }
        public func user(_ i: Int) -> UnsafeBufferPointer<UInt8> { texts[i &* CheckinRows.textsPerRow] }
        public func streak(_ i: Int) -> UnsafeBufferPointer<UInt8> { texts[i &* CheckinRows.textsPerRow &+ 1] }
        public func at(_ i: Int) -> Instant { Instant(seconds: rows[i].at) }
        public func zone(_ i: Int) -> UnsafeBufferPointer<UInt8> { texts[i &* CheckinRows.textsPerRow &+ 2] }
        public func eventID(_ i: Int) -> UnsafeBufferPointer<UInt8>? {
            rows[i].has & Row.eventID == 0 ? nil : texts[i &* CheckinRows.textsPerRow &+ 3]
        }
        /// The metadata as stored (compact JSON).
        public func meta(_ i: Int) -> UnsafeBufferPointer<UInt8>? {
            rows[i].has & Row.meta == 0 ? nil : texts[i &* CheckinRows.textsPerRow &+ 4]
        }
    }
}
