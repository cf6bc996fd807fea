import StreakCore
import StreakStore

/// A streak's check-ins as the PostgreSQL store keeps them (migration 5, docs/POSTGRES.md
/// "Check-ins"): one row of `checkin_lists` per (user, streak), its check-ins packed in one bytea,
/// records one after another in the order they were stored. A record: its instant and when it
/// was stored (8 bytes each, big-endian, as `int8send`), a flags byte, then for each flag set a
/// length (4 bytes, big-endian) and UTF-8 bytes: the zone (1; without it, the record before's),
/// the event id (2), the metadata (4). A list's first record always names its zone, so two lists
/// put end to end (`||`, as an insert appends) are a list. The view `checkins` shows them as rows.
enum PackedCheckins {
    static let zoneFlag: UInt8 = 1
    static let eventFlag: UInt8 = 2
    static let metaFlag: UInt8 = 4

    /// Appends one record; `zone` nil: the same as the last record appended.
    static func append(
        at: Int64, storedAt: Int64, zone: UnsafeBufferPointer<UInt8>?, eventID: UnsafeBufferPointer<UInt8>?,
        meta: UnsafeBufferPointer<UInt8>?, to out: inout [UInt8]
    ) {
        withUnsafeBytes(of: UInt64(bitPattern: at).bigEndian) { out.append(contentsOf: $0) }
        withUnsafeBytes(of: UInt64(bitPattern: storedAt).bigEndian) { out.append(contentsOf: $0) }
        out.append(
            (zone == nil ? 0 : zoneFlag) | (eventID == nil ? 0 : eventFlag) | (meta == nil ? 0 : metaFlag))
        // Three calls, not a loop over an array of them: an import appends millions of records.
        func field(_ bytes: UnsafeBufferPointer<UInt8>?) {
            guard let bytes else { return }
            withUnsafeBytes(of: UInt32(bytes.count).bigEndian) { out.append(contentsOf: $0) }
            out.append(contentsOf: bytes)
        }
        field(zone)
        field(eventID)
        field(meta)
    }

    struct Record {
        var at: Int64
        var storedAt: Int64
        var zone: String
        var eventID: String?
        var meta: String?
    }

    /// The records of a list, in the order stored; thrown: the bytes are not a list.
    static func records(_ bytes: [UInt8], user: String, streak: String) throws -> [Record] {
        var found: [Record] = []
        var zone: String?
        var i = 0
        func bad() -> StoreError {
            StoreError(.damaged, "checkin_lists: the check-ins of \(user)/\(streak) are not a packed list (at byte \(i))")
        }
        func int(_ n: Int) throws -> UInt64 {
            guard i + n <= bytes.count else { throw bad() }
            var v: UInt64 = 0
            for k in 0..<n { v = v << 8 | UInt64(bytes[i + k]) }
            i += n
            return v
        }
        func text() throws -> String {
            let n = Int(try int(4))
            guard i + n <= bytes.count else { throw bad() }
            defer { i += n }
            return String(decoding: bytes[i..<(i + n)], as: UTF8.self)
        }
        while i < bytes.count {
            let at = Int64(bitPattern: try int(8))
            let storedAt = Int64(bitPattern: try int(8))
            let flags = UInt8(try int(1))
            if flags & zoneFlag != 0 { zone = try text() }
            guard let zone else { throw bad() }
            let event = flags & eventFlag != 0 ? try text() : nil
            let meta = flags & metaFlag != 0 ? try text() : nil
            found.append(Record(at: at, storedAt: storedAt, zone: zone, eventID: event, meta: meta))
        }
        return found
    }

    /// Records by instant, those at one instant in the order stored (a list is in storing order).
    static func byInstant(_ records: [Record]) -> [Record] {
        records.indices.sorted { (records[$0].at, $0) < (records[$1].at, $1) }.map { records[$0] }
    }

    /// A list's check-ins, by instant (those at one instant in the order stored).
    static func checkins(_ bytes: [UInt8], user: String, streak: String) throws -> [StoredCheckin] {
        byInstant(try records(bytes, user: user, streak: streak)).map { r in
            StoredCheckin(instant: Instant(seconds: r.at), zone: r.zone, eventID: r.eventID, storedAt: Instant(seconds: r.storedAt))
        }
    }

    /// One record in SQL, from expressions for its fields (the zone always named), for
    /// `string_agg(…, ''::bytea ORDER BY …)`.
    static func sqlRecord(at: String, storedAt: String, zone: String, eventID: String, meta: String) -> String {
        """
        int8send(\(at)) || int8send(\(storedAt)) || set_byte(decode('00', 'hex'), 0, \(zoneFlag)
            + CASE WHEN \(eventID) IS NULL THEN 0 ELSE \(eventFlag) END + CASE WHEN \(meta) IS NULL THEN 0 ELSE \(metaFlag) END)
            || int4send(octet_length(\(zone))) || convert_to(\(zone), 'UTF8')
            || coalesce(int4send(octet_length(\(eventID))) || convert_to(\(eventID), 'UTF8'), ''::bytea)
            || coalesce(int4send(octet_length(\(meta))) || convert_to(\(meta), 'UTF8'), ''::bytea)
        """
    }

    /// `mergeSQL`'s rows not stored, as its `duplicateRows` lists them.
    static let notStored = """
        SELECT string_agg((n - 1)::text, ',' ORDER BY n) FROM src
        WHERE event_id IS NOT NULL AND n NOT IN (SELECT n FROM fresh WHERE event_id IS NOT NULL)
        """

    /// Stores the check-ins `source` lists (a query of `user_id, streak, at, zone, event_id, meta`
    /// and `n`, their order), with `$storedAt` their time of storing, as one statement: each (user,
    /// event id) once (not again when stored before, the first by `n` when listed twice), appended
    /// to their lists, and each (user, streak) with a new check-in marked changed, as `touch` does.
    /// Rows and locks in (user, streak) order, so two writers take them in one order. Answers one
    /// row: how many check-ins were stored. `mark` false: the schedule is left to the caller.
    /// `usualInto`: a table `(user_id text)` that gets the usual users (SPEC §14) among those with
    /// a new check-in. `duplicateRows`: a second column lists the `n` of the rows not stored, less
    /// one, comma-separated (NULL when none).
    static func mergeSQL(
        source: String, storedAt: String, mark: Bool = true, usualInto: String? = nil, duplicateRows: Bool = false
    ) -> String {
        var writes = ""
        if mark {
            writes += """
                , marked AS (
                    INSERT INTO schedule (user_id, streak) SELECT user_id, streak FROM lists ORDER BY user_id, streak
                    ON CONFLICT (user_id, streak) DO UPDATE SET changed = true, version = schedule.version + 1
                )
                """
        }
        if let usualInto {
            writes += """
                , usual AS (
                    INSERT INTO \(usualInto) (user_id)
                    SELECT id FROM users WHERE remind_usual AND id IN (SELECT user_id FROM lists)
                )
                """
        }
        return """
        WITH src AS MATERIALIZED (\(source)),
        new_events AS (
            INSERT INTO checkin_events (user_id, event_id)
            SELECT DISTINCT user_id, event_id FROM src WHERE event_id IS NOT NULL ORDER BY user_id, event_id
            ON CONFLICT DO NOTHING RETURNING user_id, event_id
        ), fresh AS (
            SELECT user_id, streak, at, zone, event_id, meta, n FROM src WHERE event_id IS NULL
            UNION ALL
            (SELECT DISTINCT ON (s.user_id, s.event_id) s.user_id, s.streak, s.at, s.zone, s.event_id, s.meta, s.n
            FROM src s JOIN new_events e ON e.user_id = s.user_id AND e.event_id = s.event_id
            ORDER BY s.user_id, s.event_id, s.n)
        ), lists AS (
            SELECT user_id, streak, count(*) AS rows, bool_or(meta IS NOT NULL) AS tagged,
                string_agg(\(sqlRecord(at: "at", storedAt: storedAt, zone: "zone", eventID: "event_id", meta: "meta")),
                    ''::bytea ORDER BY n) AS checkins
            FROM fresh GROUP BY user_id, streak
        ), stored AS (
            INSERT INTO checkin_lists AS l (user_id, streak, checkins, tagged)
            SELECT user_id, streak, checkins, tagged FROM lists ORDER BY user_id, streak
            ON CONFLICT (user_id, streak) DO UPDATE
                SET checkins = l.checkins || excluded.checkins, tagged = l.tagged OR excluded.tagged
        )\(writes)
        SELECT coalesce(sum(rows), 0)::bigint\(duplicateRows ? ", (\(notStored))" : "") FROM lists
        """
    }
}
