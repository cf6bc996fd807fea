import StreakCore
import StreakStore

/// Check-ins that passed every rule on the reading thread, on their way to the
/// store: their texts end to end in one buffer. One thread at a time owns a batch
/// (the reader fills it, then hands it over through a `Handoff`).
final class CheckedRows: @unchecked Sendable {
    struct Row {
        var user: Range<Int>
        var streak: Range<Int>
        var at: Instant
        var zone: Range<Int>
        var eventID: Range<Int>?
        var meta: Range<Int>?
    }

    /// Rows a batch holds before it is handed over.
    static let batch = 4096

    private(set) var rows: [Row] = []
    private var text: [UInt8] = []

    init() {
        rows.reserveCapacity(Self.batch)
        text.reserveCapacity(Self.batch * 48)
    }

    var isFull: Bool { rows.count >= Self.batch }

    func append(
        user: UnsafeBufferPointer<UInt8>, streak: UnsafeBufferPointer<UInt8>, at: Instant,
        zone: UnsafeBufferPointer<UInt8>, eventID: UnsafeBufferPointer<UInt8>?, meta: UnsafeBufferPointer<UInt8>?
    ) {
        func copy(_ b: UnsafeBufferPointer<UInt8>) -> Range<Int> {
            let start = text.count
            text.append(contentsOf: b)
            return start..<text.count
        }
        rows.append(
            Row(
                user: copy(user), streak: copy(streak), at: at, zone: copy(zone), eventID: eventID.map(copy),
                meta: meta.map(copy)))
    }

    /// A check-in the rules made of strings (one that the quick path left).
    func append(_ c: NewCheckin) {
        var (user, streak, zone, eventID, meta) = (c.user, c.streak, c.zone, c.eventID, c.meta)
        user.withUTF8 { u in
            streak.withUTF8 { s in
                zone.withUTF8 { z in
                    func rest(_ e: UnsafeBufferPointer<UInt8>?) {
                        guard meta != nil else {
                            return append(user: u, streak: s, at: c.instant, zone: z, eventID: e, meta: nil)
                        }
                        meta!.withUTF8 { append(user: u, streak: s, at: c.instant, zone: z, eventID: e, meta: $0) }
                    }
                    if eventID == nil { rest(nil) } else { eventID!.withUTF8 { rest($0) } }
                }
            }
        }
    }

    /// Stores the rows, in order.
    func insert(into bulk: any CheckinImport) throws {
        try text.withUnsafeBufferPointer { b in
            for r in rows {
                try bulk.insert(
                    user: UnsafeBufferPointer(rebasing: b[r.user]), streak: UnsafeBufferPointer(rebasing: b[r.streak]),
                    at: r.at, zone: UnsafeBufferPointer(rebasing: b[r.zone]),
                    eventID: r.eventID.map { UnsafeBufferPointer(rebasing: b[$0]) },
                    meta: r.meta.map { String(decoding: b[$0], as: UTF8.self) })
            }
        }
    }
}
