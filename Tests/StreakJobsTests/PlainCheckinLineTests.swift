import Foundation
import InputGenerators
import StreakCore
import StreakStore
import StreakTestKit
import Testing

@testable import StreakJobs

/// The quick JSON lines path stores exactly what the full one (`JSONReader`,
/// `CheckinRules`) stores, on random lines: plain lines, which it must take
/// whenever they are valid, and unusual ones, which it may leave to the full path.
@Suite(.fastTier) struct PlainCheckinLineTests {
    static let now = "2026-11-21T11:00:00Z"

    /// What a `CheckinImport` was given, as text.
    final class Recorder: CheckinImport {
        var rows: [String] = []

        func insert(_ batch: CheckinRows) throws {
            for i in 0..<batch.count {
                let c = batch.checkin(i)
                rows.append("\(c.user) \(c.streak) \(c.instant.seconds) \(c.zone) \(c.eventID ?? "-") \(c.meta ?? "-")")
            }
        }

        func finish() throws -> InsertResult { InsertResult() }
        func usualUsers() throws -> [String] { [] }
    }

    static func checker() throws -> ImportChecker {
        let (context, _) = try makeContext(now: now)
        for (id, tz) in [("u1", "Europe/Berlin"), ("u.2", "Asia/Tokyo"), ("U3", "America/New_York")] {
            try context.addUser(id: id, tz: tz, remindAt: nil, remind: true)
        }
        return try context.store.read { r in
            try ImportChecker(store: r, rules: CheckinRules(zones: context.zones, now: context.now, names: [:]))
        }
    }

    /// One line through both paths: what each would store (nil: the quick path left it).
    static func both(_ line: String, _ checker: inout ImportChecker) throws -> (quick: String?, full: String?) {
        var line = line
        return try line.withUTF8 { text in
            let lines = [InputFile.Line(number: 1, text: text, problem: nil, isASCII: text.allSatisfy { $0 < 128 })]
            var quick: [QuickCheckin?] = []
            checker.quickJSON(lines, into: &quick)
            // Both as the import hands them to the store (`CheckinRows`), and the full path's
            // also straight, as a `NewCheckin` is stored elsewhere.
            let fast = Recorder()
            if let q = quick[0] {
                var rows = CheckinRows()
                checker.append(q, from: text, to: &rows)
                try fast.insert(rows)
            }
            let full = Recorder()
            let straight = Recorder()
            if case .success(let c) = CheckinJSONLines.record(Substring(String(decoding: text, as: UTF8.self)))
                .flatMap({ checker.check($0) })
            {
                var rows = CheckinRows()
                rows.append(c)
                try full.insert(rows)
                try straight.insert(c)
            }
            #expect(full.rows == straight.rows)
            return (fast.rows.first, full.rows.first)
        }
    }

    @Test func plainLinesAreTakenAndStoredAsTheFullPathStoresThem() throws {
        var checker = try Self.checker()
        let lines = [
            #"{"user":"u1","streak":"daily","at":"2026-11-20T19:03:00-05:00","tz":"America/New_York","id":"e1","meta":{"reps":20}}"#,
            #"{"id": "e2", "at": "2026-11-20T19:03:00Z", "user": "u.2", "meta": {"ok": true, "note": "grüße \"x\"", "n": -7}}"#,
            #"{"user":"U3","at":"2026-11-20T19:03:00.5+01:00","tz":null,"streak":null,"id":null,"meta":null}"#,
            "{\"user\":\"u1\",\t\"at\":\"2026-11-20T19:03:00Z\",\"meta\":{}}  ",
        ]
        for line in lines {
            let (quick, full) = try Self.both(line, &checker)
            #expect(quick != nil || line.contains(#"\""#), "\(line)")
            #expect(full != nil, "\(line)")
            if quick != nil { #expect(quick == full, "\(line)") }
        }
        let (quick, _) = try Self.both(lines[1], &checker)
        #expect(quick == nil)  // an escape: the full path reads it
        let (first, _) = try Self.both(lines[0], &checker)
        #expect(first == #"u1 daily 1795219380 America/New_York e1 {"reps":20}"#)
    }

    /// Random lines: a plain one that the full path stores, the quick path takes too, and
    /// whatever the quick path takes, the full path stores alike.
    @Test func randomLinesAgree() throws {
        var checker = try Self.checker()
        var random = SplitMix64(state: 20)
        var taken = 0
        for n in 0..<4000 {
            let plain = n % 2 == 0
            let line = Self.line(&random, plain: plain)
            let (quick, full) = try Self.both(line, &checker)
            if let quick {
                taken += 1
                #expect(quick == full, "\(line)")
            } else if plain {
                #expect(full == nil, "the quick path left a plain line the full path stores: \(line)")
            }
        }
        #expect(taken > 800, "the quick path took only \(taken) of 4000 lines")
    }

    /// A check-in line from random parts, valid more often than not. Plain lines have
    /// no escapes, only spaces and tabs between tokens, and integers as Swift writes them.
    static func line(_ r: inout SplitMix64, plain: Bool) -> String {
        /// One of `valid` mostly, else one of `invalid`.
        func pick(_ valid: [String], _ invalid: [String] = []) -> String {
            invalid.isEmpty || r.below(8) != 0 ? valid[r.below(valid.count)] : invalid[r.below(invalid.count)]
        }
        let space = plain ? ["", "", " ", "\t"] : ["", " ", "\r", " \r "]
        func sp() -> String { pick(space) }
        func str(_ s: String) -> String {
            guard !plain, r.below(3) == 0 else { return "\"\(s)\"" }
            // The same text with an escape the quick path leaves to the full one.
            return "\"" + s.unicodeScalars.map { c in c == "a" ? "\\u0061" : c == "/" ? "\\/" : String(c) }.joined()
                + "\""
        }
        func optional(_ value: String) -> String { r.below(6) == 0 ? "null" : str(value) }
        let instant = RFC3339.parse(now)!.seconds - Int64(r.below(380 * 86400)) + 600
        let offset = [0, 3600, -18000, 19800, 45 * 60][r.below(5)]
        var at = RFC3339.format(Instant(seconds: instant), offset: offset, utcZ: r.below(2) == 0)
        if r.below(10) == 0 { at.insert(contentsOf: ".123", at: at.index(at.startIndex, offsetBy: 19)) }
        if r.below(30) == 0 { at = String(at.dropLast(6)) }
        var fields: [(String, String)] = [
            ("user", str(pick(["u1", "u.2", "U3"], ["ghost", "", "u 1"]))), ("at", str(at)),
        ]
        if r.below(2) == 0 { fields.append(("streak", optional(pick(["daily", "workout", "read_2"], ["Bad", ""])))) }
        if r.below(2) == 0 {
            let zones = ["Europe/Berlin", "Asia/Tokyo", "UTC", "America/Sao_Paulo"]
            fields.append(("tz", optional(pick(zones, ["posix/UTC", "", "Mars/Base", "Europe/../UTC"]))))
        }
        if r.below(2) == 0 {
            let bad = ["has space", "", "é", String(repeating: "x", count: 129)]
            fields.append(("id", optional(pick(["e1", "e-\(r.below(50))", "#!~"], bad))))
        }
        if r.below(2) == 0 {
            var entries: [String] = []
            for _ in 0..<r.below(4) {
                let key = pick(["reps", "ok", "note", "a_1", "z9", "n"], ["Bad", "9x", ""])
                var values = [
                    "0", "-7", "20", "123456789012345678", "-123456789012345678", "true", "false", str("x"),
                    str("grüße"), str(""), str(String(repeating: "y", count: 1024)),
                ]
                if !plain { values += ["-0", "2.0", "1e2", "1234567890123456789", #""\u00e9""#] }
                entries.append(
                    "\"\(key)\":\(sp())\(pick(values, [str(String(repeating: "y", count: 1025)), "1.5", "null", "{}", "[1]", "9223372036854775808"]))"
                )
            }
            fields.append(
                ("meta", r.below(8) == 0 ? "null" : "{" + sp() + entries.joined(separator: "," + sp()) + sp() + "}"))
        }
        if r.below(15) == 0 { fields.append(("colour", str("red"))) }
        if r.below(15) == 0, let f = fields.randomElement(using: &r) { fields.append(f) }  // a key twice
        fields.shuffle(using: &r)
        let body = fields.map { "\"\($0.0)\"\(sp()):\(sp())\($0.1)" }.joined(separator: sp() + "," + sp())
        return sp() + "{" + sp() + body + sp() + "}" + sp()
    }
}
