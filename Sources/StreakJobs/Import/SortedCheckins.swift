import Foundation
import StreakCore
import StreakStore

/// The checked check-ins of an import, gathered in a compact form and handed to the store in
/// the order its check-ins are clustered in (user, streak, at; SQLite migration 12, before it
/// the check-in index's): the store then adds each at the table's end, where sorting seven
/// million rows of text into a new index took as long as storing them (docs/ARCHITECTURE.md, "Import
/// at scale").
///
/// A row takes 12 bytes (numbers in the checker's tables, the instant from a base) and its
/// event id and metadata, when it has any, an `Extra` and their bytes (`extraTexts`). The rows
/// go to the store in batches (`CheckinRows`) through a `Handoff`; the sort is in
/// CheckinOrder.swift. At most `limit` bytes are held: beyond,
/// what is held goes to the store sorted, and the rest follows, sorted in turn. A row that
/// does not fit the form (more than 65,536 streak ids or 32,768 zones, an instant far out) sends
/// what is held on its way, then goes itself: rows keep the order of the file between such
/// parts. Of the rows of one user with the same event id, the first in the file goes first
/// (the store keeps that one); the others go after every row of their part.
final class SortedCheckins {
    /// 12 bytes.
    struct Row {
        var user: UInt32
        /// Seconds after `base`; for a row with extras, `extra` (its `Extra` has the instant).
        var stamp: UInt32
        var streak: UInt16
        /// The zone's number (15 bits); the top bit marks a row with extras.
        var zoneAndFlag: UInt16

        init(user: UInt32, at: UInt32, streak: UInt16, zone: UInt16, extra: UInt32) {
            self.user = user
            self.streak = streak
            stamp = extra == 0 ? at : extra
            zoneAndFlag = zone | (extra == 0 ? 0 : 0x8000)
        }

        var zone: UInt16 {
            get { zoneAndFlag & 0x7FFF }
            set { zoneAndFlag = newValue | (zoneAndFlag & 0x8000) }
        }

        /// 0, or 1 + the row's place in `extras`: its event id, metadata and instant (in the file's order).
        var extra: UInt32 {
            get { zoneAndFlag & 0x8000 == 0 ? 0 : stamp }
            set { if zoneAndFlag & 0x8000 != 0 { stamp = newValue } }
        }
    }

    /// A row's instant, and which of its event id and metadata it has (their bytes are texts
    /// 2k and 2k + 1 of `extraTexts` for extra k, empty when absent).
    struct Extra {
        var at: UInt32
        var has: UInt8

        static let eventID: UInt8 = 1
        static let meta: UInt8 = 2
    }

    /// Rows a batch for the store holds.
    static let batchRows = 4096

    /// Zone numbers up to this fit a row.
    static let maxZone = 0x7FFF

    /// A row's instant, in seconds after `base`.
    @inline(__always)
    func at(_ row: Row) -> UInt32 { row.zoneAndFlag & 0x8000 == 0 ? row.stamp : extras[Int(row.stamp) - 1].at }

    /// The bytes held at most (rows, extras and their text).
    static let limit = 96 << 20

    let base: Int64
    /// The bytes held at most (`SortedCheckins.limit`; less in tests).
    let limit: Int
    private var rows: UnsafeMutablePointer<Row>
    private var capacity: Int
    private(set) var count = 0
    private(set) var extras: [Extra] = []
    /// Each extra's event id and metadata, two texts an extra.
    private(set) var extraTexts = PackedTexts()
    /// The users' ranks in byte order by number, once known (nil: their numbers are that order).
    private var userRank: [UInt32]?
    private var ranked = false

    /// The bytes of rows given back at once, at least (`SortedCheckins.releaseStep`; a page in tests).
    let releaseStep: UInt

    init(now: Instant, expectedRows: Int?, limit: Int = SortedCheckins.limit, releaseStep: Int = SortedCheckins.releaseStep) {
        base = now.seconds - CheckinRules.maxAge - 1
        self.limit = limit
        self.releaseStep = UInt(releaseStep)
        capacity = max(1024, min(expectedRows.map { $0 + $0 / 16 } ?? 0, limit / MemoryLayout<Row>.stride))
        rows = malloc(capacity * MemoryLayout<Row>.stride)!.assumingMemoryBound(to: Row.self)
    }

    deinit { free(rows) }

    /// Extras and their text count twice: their arrays grow by doubling and keep their room
    /// between parts, so they may take up to twice the bytes in use (4M rows with event ids
    /// peaked at 303 MB when they counted once).
    private var held: Int { count * MemoryLayout<Row>.stride + Self.extraCost(extras.count, text: extraTexts.byteCount) }

    /// What `extras` extras and `text` bytes of theirs count for against `limit`.
    static func extraCost(_ extras: Int, text: Int) -> Int {
        2 * (extras * (MemoryLayout<Extra>.stride + 2 * PackedTexts.costPerText) + text)
    }

    /// Adds a row checked on its bytes. False when the store stopped taking rows.
    func append(
        _ c: QuickCheckin, from line: UnsafeBufferPointer<UInt8>, _ checker: ImportChecker,
        _ handoff: Handoff<CheckinRows>?
    ) -> Bool {
        var meta = c.meta
        let eventID = c.eventID.map { UnsafeBufferPointer(rebasing: line[$0]) }
        if meta == nil {
            return append(user: c.userNumber, streak: c.streak, at: c.at, zone: c.zone, eventID, nil, checker, handoff)
        }
        return meta!.withUTF8 {
            append(user: c.userNumber, streak: c.streak, at: c.at, zone: c.zone, eventID, $0, checker, handoff)
        }
    }

    /// Adds a row the rules checked as strings.
    func append(_ c: NewCheckin, _ checker: inout ImportChecker, _ handoff: Handoff<CheckinRows>?) -> Bool {
        guard let (user, streak, zone) = checker.numbers(of: c) else {
            return alone(handoff, checker: checker) { $0.append(c) }
        }
        var (eventID, meta) = (c.eventID, c.meta)
        func add(_ e: UnsafeBufferPointer<UInt8>?) -> Bool {
            if meta == nil { return append(user: user, streak: streak, at: c.instant, zone: zone, e, nil, checker, handoff) }
            return meta!.withUTF8 { append(user: user, streak: streak, at: c.instant, zone: zone, e, $0, checker, handoff) }
        }
        if eventID == nil { return add(nil) }
        return eventID!.withUTF8 { add($0) }
    }

    private func append(
        user: UInt32, streak: Int, at: Instant, zone: Int, _ eventID: UnsafeBufferPointer<UInt8>?,
        _ meta: UnsafeBufferPointer<UInt8>?, _ checker: ImportChecker, _ handoff: Handoff<CheckinRows>?
    ) -> Bool {
        let offset = at.seconds - base
        guard streak <= Int(UInt16.max), zone <= Self.maxZone, offset >= 0, offset <= Int64(UInt32.max) else {
            return alone(handoff, checker: checker) { rows in
                checker.streaks.withKey(streak) { s in
                    checker.zones.withKey(zone) { z in
                        checker.users.withKey(Int(user)) { u in
                            rows.append(user: u, streak: s, at: at, zone: z, eventID: eventID, meta: meta)
                        }
                    }
                }
            }
        }
        let extraBytes =
            eventID == nil && meta == nil ? 0 : Self.extraCost(1, text: (eventID?.count ?? 0) + (meta?.count ?? 0))
        if held + MemoryLayout<Row>.stride + extraBytes > limit && count > 0 {
            guard let handoff, drain(checker, handoff) else { return false }
        }
        if count == capacity {
            capacity *= 2
            rows = realloc(rows, capacity * MemoryLayout<Row>.stride)!.assumingMemoryBound(to: Row.self)
        }
        var extra: UInt32 = 0
        if eventID != nil || meta != nil {
            let none = UnsafeBufferPointer<UInt8>(start: nil, count: 0)
            extraTexts.append(eventID ?? none)
            extraTexts.append(meta ?? none)
            let has = (eventID == nil ? 0 : Extra.eventID) | (meta == nil ? 0 : Extra.meta)
            extras.append(Extra(at: UInt32(offset), has: has))
            extra = UInt32(extras.count)
        }
        rows[count] = Row(user: user, at: UInt32(offset), streak: UInt16(streak), zone: UInt16(zone), extra: extra)
        count += 1
        return true
    }

    /// Sends what is held, then one row as it comes.
    private func alone(
        _ handoff: Handoff<CheckinRows>?, checker: ImportChecker, _ add: (inout CheckinRows) -> Void
    ) -> Bool {
        guard let handoff, drain(checker, handoff) else { return false }
        var batch = CheckinRows()
        add(&batch)
        return handoff.put(batch)
    }

    /// The system's page size, and the bytes of rows given back at once (at least).
    static let pageSize = Int(sysconf(Int32(_SC_PAGESIZE)))
    static let releaseStep = 4 << 20

    /// Gives the rows' memory back (after `absorb` took them in): nothing is held after.
    func release() {
        free(rows)
        capacity = 1
        count = 0
        rows = malloc(MemoryLayout<Row>.stride)!.assumingMemoryBound(to: Row.self)
        extras = []
        extraTexts = PackedTexts()
    }

    /// Whether rows can hold these numbers.
    static func fit(streaks: [Int], zones: [Int]) -> Bool {
        !streaks.contains { $0 > Int(UInt16.max) } && !zones.contains { $0 > maxZone }
    }

    /// Takes the rows `other` holds after these (the file's next part, read beside with a copy
    /// of the checker): `streaks` and `zones` give the numbers of its streaks and zones here
    /// (which `fit`). False when the store stopped taking rows.
    func absorb(
        _ other: SortedCheckins, streaks: [Int], zones: [Int], _ checker: ImportChecker, _ handoff: Handoff<CheckinRows>
    ) -> Bool {
        precondition(other.base == base && Self.fit(streaks: streaks, zones: zones))
        if held + other.held > limit && count > 0 { guard drain(checker, handoff) else { return false } }
        if count + other.count > capacity {
            capacity = count + other.count
            rows = realloc(rows, capacity * MemoryLayout<Row>.stride)!.assumingMemoryBound(to: Row.self)
        }
        let extraBase = UInt32(extras.count)
        extraTexts.append(contentsOf: other.extraTexts)
        extras.append(contentsOf: other.extras)
        // The other's pages go back as they are copied: both never take their full size at once.
        let page = Self.pageSize
        var released = UInt(bitPattern: other.rows)
        for i in 0..<other.count {
            if i & 0xFF == 0xFF {
                let start = (released + UInt(page) - 1) & ~UInt(page - 1)
                let stop = UInt(bitPattern: other.rows + i) & ~UInt(page - 1)
                if stop >= start + releaseStep {
                    _ = madvise(UnsafeMutableRawPointer(bitPattern: start), Int(stop - start), MADV_DONTNEED)
                    released = stop
                }
            }
            var row = other.rows[i]
            row.streak = UInt16(streaks[Int(row.streak)])
            row.zone = UInt16(zones[Int(row.zone)])
            if row.extra != 0 { row.extra += extraBase }
            rows[count] = row
            count += 1
        }
        other.release()
        return true
    }

    /// Hands every row held to the store in the table's order, and empties. False when the
    /// store stopped taking rows.
    func drain(_ checker: ImportChecker, _ handoff: Handoff<CheckinRows>) -> Bool {
        guard count > 0 else { return true }
        if !ranked {
            userRank = Self.ranks(of: checker.users)
            ranked = true
        }
        let streakRank = Self.ranks(of: checker.streaks) ?? Array(0..<UInt32(checker.streaks.count))
        let zoneRank = Self.ranks(of: checker.zones) ?? Array(0..<UInt32(checker.zones.count))
        let rows = UnsafeMutableBufferPointer(start: self.rows, count: count)
        let users = checker.users.count
        let late = userRank.map { rank in
            sort(rows, users: users, rank: { rank[Int($0)] }, streakRank, zoneRank)
        } ?? sort(rows, users: users, rank: { $0 }, streakRank, zoneRank)
        // Taken before the rows are handed over: `emit` gives their memory back as it goes.
        let lateRows = late.map { rows[$0] }.sorted { $0.extra < $1.extra }
        var ok = emit(UnsafeBufferPointer(rows), skipping: late, checker, handoff, releasing: true)
        if ok && !late.isEmpty {
            // Their first rows went before: the store counts these as stored already.
            ok = lateRows.withUnsafeBufferPointer { emit($0, skipping: [], checker, handoff) }
        }
        count = 0
        extras.removeAll(keepingCapacity: true)
        extraTexts.removeAll()
        return ok
    }

    /// Hands rows to the store in batches, leaving out the places in `skipping` (ascending).
    /// `releasing`: the pages of rows handed over go back to the system as it goes (they read
    /// as zeros after; the rows held are rewritten before they are read again), so the rows'
    /// memory shrinks while the store's grows (docs/ARCHITECTURE.md, "Import at scale").
    private func emit(
        _ rows: UnsafeBufferPointer<Row>, skipping: [Int], _ checker: ImportChecker, _ handoff: Handoff<CheckinRows>,
        releasing: Bool = false
    ) -> Bool {
        func newBatch() -> CheckinRows { CheckinRows(reserving: Self.batchRows, bytesPerRow: 48) }
        var batch = newBatch()
        var skip = skipping.makeIterator()
        var nextSkip = skip.next()
        var released = UInt(bitPattern: rows.baseAddress)
        func release(before end: Int) {
            guard releasing, let base = rows.baseAddress else { return }
            let page = UInt(Self.pageSize)
            let start = (released + page - 1) & ~(page - 1)
            let stop = UInt(bitPattern: base + end) & ~(page - 1)
            guard stop >= start + releaseStep else { return }
            _ = madvise(UnsafeMutableRawPointer(bitPattern: start), Int(stop - start), MADV_DONTNEED)
            released = stop
        }
        return extraTexts.withTexts { text in
            for (i, row) in rows.enumerated() {
                if i == nextSkip {
                    nextSkip = skip.next()
                    continue
                }
                var (eventID, meta): (UnsafeBufferPointer<UInt8>?, UnsafeBufferPointer<UInt8>?) = (nil, nil)
                if row.extra != 0 {
                    let e = Int(row.extra) - 1
                    if extras[e].has & Extra.eventID != 0 { eventID = text[2 * e] }
                    if extras[e].has & Extra.meta != 0 { meta = text[2 * e + 1] }
                }
                checker.users.withKey(Int(row.user)) { user in
                    checker.streaks.withKey(Int(row.streak)) { streak in
                        checker.zones.withKey(Int(row.zone)) { zone in
                            batch.append(
                                user: user, streak: streak, at: Instant(seconds: base + Int64(at(row))), zone: zone,
                                eventID: eventID, meta: meta)
                        }
                    }
                }
                if batch.count >= Self.batchRows {
                    guard handoff.put(batch) else { return false }
                    batch = newBatch()
                    release(before: i + 1)
                }
            }
            return batch.isEmpty || handoff.put(batch)
        }
    }
}
