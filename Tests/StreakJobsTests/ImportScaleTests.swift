import Foundation
import GRDB
import StreakCore
import StreakDelivery
import StreakStore
import StreakTestKit
import Testing

@testable import StreakJobs
@testable import StreakSQLite
@testable import StreakStore

/// A large import (which once set the check-in index aside) stores what small
/// imports of the same rows store, and rolls back whole.
@Suite(.fastTier) struct ImportScaleTests {
    static let now = "2026-11-21T18:45:00Z"
    static let users = 50

    /// Files of this many rows or more are large (the index was set aside for them before the
    /// check-ins were clustered, migration 12).
    static let large = 100_000

    /// 110,000 rows (more than `large`): three streaks, some event ids repeating, some zones given.
    static let rows: [String] = (0..<110_000).map { i in
        let at = RFC3339.format(RFC3339.parse(now)! - Int64(1 + i * 211 % 20_000_000), offset: 3600)
        let tz = i % 11 == 0 ? "Asia/Tokyo" : ""
        let id = i % 6 == 0 ? "e\(i % 5000)" : ""
        return "u\(i * 7 % users),\(at),\(tz),\(["daily", "workout", "reading"][i % 3]),\(id)"
    }

    static func store() throws -> Context {
        let (context, _) = try makeContext(now: now, format: .json)
        for u in 0..<users { try context.addUser(id: "u\(u)", tz: "Europe/Berlin", remindAt: nil, remind: true) }
        return context
    }

    static func file(_ rows: ArraySlice<String>, last: String? = nil) throws -> String {
        let path = TestFiles.path("scale") + ".csv"
        let text = "user,at,tz,streak,id\n" + rows.joined(separator: "\n") + "\n" + (last.map { $0 + "\n" } ?? "")
        try Data(text.utf8).write(to: URL(fileURLWithPath: path))
        return path
    }

    /// Everything stored, as text (not the rows' ids: an import stores its rows in the index's
    /// order, `SortedCheckins`); the indexes; the integrity check.
    static func contents(_ context: Context) throws -> [String] {
        let queue = (context.store as! SQLiteStore).queue
        return try queue.read { db in
            try String.fetchAll(
                db,
                sql: """
                    SELECT printf('%s %s %d %s %s %d', user_id, streak, at, zone, event_id, stored_at)
                    FROM checkins ORDER BY 1
                    """)
                // Two imports touch a streak twice: versions differ, the plans do not.
                + String.fetchAll(db, sql: "SELECT user_id || ' ' || streak || ' ' || next_at FROM schedule ORDER BY 1")
                + String.fetchAll(db, sql: "SELECT streak || ' ' || since FROM settings_epochs ORDER BY 1")
                + String.fetchAll(db, sql: "SELECT name FROM pragma_index_list('checkins') ORDER BY 1")
                + String.fetchAll(db, sql: "PRAGMA integrity_check")
        }
    }

    @Test func oneLargeImportStoresWhatSmallOnesStore() throws {
        let large = try Self.file(Self.rows[...])
        #expect(try InputFile(large).estimatedLines() ?? 0 >= Self.large)
        let one = try Self.store()
        try one.importCheckins(path: large, format: nil, skipInvalid: false)

        let halves = try Self.store()
        for part in [Self.rows[..<55_000], Self.rows[55_000...]] {
            let path = try Self.file(part)
            #expect(try InputFile(path).estimatedLines() ?? .max < Self.large)
            try halves.importCheckins(path: path, format: nil, skipInvalid: false)
        }
        let stored = try Self.contents(one)
        #expect(stored.count > 90_000)
        let small = try Self.contents(halves)
        #expect(stored == small, "\(zip(stored, small).first { $0 != $1 }.map { "\($0) / \($1)" } ?? "")")
        #expect(stored.suffix(4) == ["checkins_event", "checkins_tagged", "sqlite_autoindex_checkins_1", "ok"])
    }

    @Test func anInvalidLastLineLeavesTheStoreAsItWas() throws {
        let context = try Self.store()
        try context.importCheckins(path: try Self.file(Self.rows[..<1000]), format: nil, skipInvalid: false)
        let before = try Self.contents(context)
        let path = try Self.file(Self.rows[...], last: "u1,yesterday,,,")
        #expect(try InputFile(path).estimatedLines() ?? 0 >= Self.large)
        #expect {
            try context.importCheckins(path: path, format: nil, skipInvalid: false)
        } throws: { error in
            "\(error)".contains(
                #"\#(path):110002: field "at": "yesterday" is not an RFC 3339 instant with an offset"#)
        }
        #expect(try Self.contents(context) == before)
        #expect(before.suffix(4) == ["checkins_event", "checkins_tagged", "sqlite_autoindex_checkins_1", "ok"])
    }

    /// Rows handed to the store in the index's order, in several parts (a small `limit`), store
    /// what the same rows in the file's order store: the same rows, counts and schedule, the
    /// first of a user's rows with one event id kept (also across parts, and one stored before).
    @Test func sortedPartsStoreWhatTheFileOrderStores() throws {
        let inputs: [CheckinInput] = (0..<6000).map { i in
            let at = RFC3339.format(RFC3339.parse(Self.now)! - Int64(1 + i * 7919 % 3_000_000), offset: 0)
            var input = CheckinInput(user: "u\(i * 13 % Self.users)", streak: ["daily", "workout", "b"][i % 3], at: at)
            if i % 7 == 0 { input.tz = ["Asia/Tokyo", "America/New_York", "UTC"][i % 3] }
            if i % 4 == 0 { input.id = "e\(i % 700)" }
            if i == 5 { input.id = "old" }
            if i % 10 == 0 { input.meta = [("n", .integer(Int64(i % 3)))] }
            return input
        }
        var results: [InsertResult] = []
        var stored: [[String]] = []
        for sorted in [false, true] {
            let context = try Self.store()
            let zones = context.zones
            try context.store.write { w in
                _ = try w.insertCheckins(
                    [NewCheckin(user: "u5", streak: "daily", instant: context.now - 100, zone: "UTC", eventID: "old")],
                    storedAt: context.now - 50)
            }
            let result = try context.store.write(.bulkImport) { w -> InsertResult in
                var checker = try ImportChecker(store: w, rules: CheckinRules(zones: zones, now: context.now))
                let checked = inputs.map { input -> NewCheckin in
                    guard case .success(let c) = checker.check(input) else { fatalError("\(input)") }
                    return c
                }
                let bulk = try w.checkinImport(storedAt: context.now, expectedRows: nil)
                if !sorted {
                    for c in checked { try bulk.insert(c) }
                    return try bulk.finish()
                }
                let handoff = Handoff<CheckinRows>(capacity: 1 << 20)
                // Pages given back as they go, a page at a time: each part reuses the memory.
                let rows = SortedCheckins(
                    now: context.now, expectedRows: nil, limit: 40_000, releaseStep: Int(sysconf(Int32(_SC_PAGESIZE))))
                for c in checked { #expect(rows.append(c, &checker, handoff)) }
                #expect(rows.drain(checker, handoff))
                handoff.finish()
                var batches = 0
                while let batch = handoff.take() {
                    try bulk.insert(batch)
                    batches += 1
                }
                #expect(batches > 3)
                return try bulk.finish()
            }
            results.append(result)
            let queue = (context.store as! SQLiteStore).queue
            stored.append(
                try queue.read { db in
                    try String.fetchAll(
                        db,
                        sql: """
                            SELECT printf('%s %s %d %s %s %s %d', user_id, streak, at, zone, event_id, meta, stored_at)
                            FROM checkins ORDER BY 1
                            """)
                        + String.fetchAll(
                            db,
                            sql: "SELECT printf('%d %s %s %s %s', id, user_id, streak, next_at, version) FROM schedule ORDER BY 1")
                        + String.fetchAll(db, sql: "PRAGMA integrity_check")
                })
        }
        #expect(results[0] == results[1])
        #expect(results[0].duplicates > 600, "\(results[0])")
        #expect(stored[0] == stored[1], "\(zip(stored[0], stored[1]).first { $0 != $1 }.map { "\($0) / \($1)" } ?? "")")
        #expect(stored[1].last == "ok")
    }

    /// A file of JSON lines read in two halves at once (the second beside, with a copy of the
    /// checker) stores what one reading stores, and an invalid line in either half is told as
    /// one reading tells it (the second half is then read again, after the first).
    @Test func twoHalvesStoreWhatOneReadingStores() throws {
        let lines: [String] = (0..<4000).map { i in
            let at = RFC3339.format(RFC3339.parse(Self.now)! - Int64(1 + i * 7919 % 3_000_000), offset: 3600)
            var fields = [#""user":"u\#(i * 13 % Self.users)""#, #""at":"\#(at)""#]
            if i % 3 != 0 { fields.append(#""streak":"\#(["daily", "workout", "s\(i % 5)"][i % 3])""#) }
            if i % 7 == 0 { fields.append(#""tz":"\#(["Asia/Tokyo", "America/New_York", "UTC"][i % 3])""#) }
            if i % 4 == 0 { fields.append(#""id":"e\#(i % 500)""#) }
            if i % 10 == 0 { fields.append(#""meta":{"n":\#(i % 3),"note":"x\u0041"}"#) }  // an escape: the full path
            return "{" + fields.joined(separator: ",") + "}"
        }
        func file(_ lines: [String]) throws -> String {
            let path = TestFiles.path("halves") + ".jsonl"
            try Data((lines.joined(separator: "\n") + "\n").utf8).write(to: URL(fileURLWithPath: path))
            return path
        }
        let (stored, message) = try Self.bothReadings(try file(lines))
        #expect(message == nil && stored.count > 3000)

        for bad in [100, 3900] {
            var broken = lines
            broken[bad] = #"{"user":"u1","at":"yesterday"}"#
            broken[bad + 2] = #"{"user":"nobody","at":"2026-11-20T19:03:00Z"}"#
            let path = try file(broken)
            let message = try Self.bothReadings(path).message
            #expect(message?.contains("\(path):\(bad + 1): ") == true, "\(message ?? "")")
        }
    }

    /// A file imported in one reading and in two halves: the same rows stored, or the same
    /// message and nothing stored. Answers what was stored and the message, if any.
    static func bothReadings(_ path: String) throws -> (stored: [String], message: String?) {
        var stored: [[String]] = []
        var messages: [String] = []
        for besideFrom in [Int.max, 0] {
            let context = try store()
            do {
                try context.importCheckins(from: try InputFile(path), format: nil, skipInvalid: false, besideFrom: besideFrom)
            } catch {
                messages.append("\(error)")
            }
            stored.append(try contents(context))
        }
        #expect(stored[0] == stored[1], "\(zip(stored[0], stored[1]).first { $0 != $1 }.map { "\($0) / \($1)" } ?? "")")
        #expect(messages.isEmpty || (messages.count == 2 && messages[0] == messages[1]), "\(messages)")
        if !messages.isEmpty { #expect(stored[0] == (try contents(try store())), "nothing stored") }
        return (stored[0], messages.first)
    }

    /// The same for CSV: the second half read beside stores what one reading stores, an invalid
    /// row in either half is told as one reading tells it, and a quoted value left open on the
    /// first half's last line is told as going on to the next line (the second half is then read
    /// after the first, not beside).
    @Test func csvInTwoHalvesStoresWhatOneReadingStores() throws {
        let header = "user,at,tz,streak,id"
        let rows: [String] = (0..<4000).map { i in
            let at = RFC3339.format(RFC3339.parse(Self.now)! - Int64(1 + i * 7919 % 3_000_000), offset: 3600)
            let tz = i % 7 == 0 ? ["Asia/Tokyo", "America/New_York", "UTC"][i % 3] : ""
            let streak = i % 3 != 0 ? ["daily", "workout", "s\(i % 5)"][i % 3] : ""
            return "u\(i * 13 % Self.users),\(at),\(tz),\(streak),\(i % 4 == 0 ? "e\(i % 500)" : "")"
        }
        func file(_ rows: [String]) throws -> String {
            let path = TestFiles.path("halves") + ".csv"
            try Data(([header] + rows).joined(separator: "\n").appending("\n").utf8).write(to: URL(fileURLWithPath: path))
            return path
        }
        let path = try file(rows)
        let (stored, message) = try Self.bothReadings(path)
        #expect(message == nil && stored.count > 3000)

        for bad in [100, 3900] {
            var broken = rows
            broken[bad] = "u1,yesterday,,,"
            broken[bad + 2] = "nobody,2026-11-20T19:03:00Z,,,"
            let message = try Self.bothReadings(try file(broken)).message
            #expect(message?.contains(":\(bad + 2): ") == true, "\(message ?? "")")  // the header is line 1
        }

        // The line that starts the second half, and a quote left open on the line before it.
        let text = ([header] + rows).joined(separator: "\n") + "\n"
        let split = try InputFile.lineStart(path, after: text.utf8.count / 2, size: text.utf8.count)
        let second = text.utf8.prefix(split).filter { $0 == UInt8(ascii: "\n") }.count  // its 0-based line
        // The next line is a valid row on its own (its user quoted), which one reading takes for
        // the rest of the open value; the file as long as before, so the half is where it was.
        var open = rows
        let row = rows[second - 1]
        let quoted = "\"\(row.prefix { $0 != "," })\"\(row.drop { $0 != "," })"
        let opening = "\"u1,2026-11-20T19:03"
        open[second - 2] = opening + String(repeating: " ", count: rows[second - 2].count - 2 - opening.count)
        open[second - 1] = quoted
        let openPath = try file(open)
        #expect(try InputFile.lineStart(openPath, after: text.utf8.count / 2, size: text.utf8.count) == split - 2)
        let told = try Self.bothReadings(openPath).message
        #expect(told?.contains(":\(second): ") == true && told?.contains("\(second + 1)") == true, "\(told ?? "")")
    }
}
