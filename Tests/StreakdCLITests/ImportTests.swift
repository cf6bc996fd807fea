import Foundation
import StreakTestKit
import Testing

@Suite("import", .fastTier)
struct ImportTests {
    @Test func jsonLinesThenIdempotentReimport() throws {
        let s = try Sandbox()
        s.addUser()
        let path = try s.file(
            "a.jsonl",
            """
            {"user":"u1","at":"2026-11-20T19:03:00+01:00","id":"e1","meta":{"reps":20,"ok":true,"note":"x"}}
            {"user":"u1","streak":"workout","at":"2026-11-19T19:03:00-05:00","tz":"America/New_York","id":"e2"}

            {"user":"u1","at":"2026-11-19T10:00:00+01:00","id":"e3","meta":null}

            """)
        let r = s.run(["import", path])
        #expect(r.code == 0)
        #expect(r.out == "imported 3 check-ins from \(path) (0 already stored, 0 invalid skipped)\n")
        #expect(r.err == "")
        let before = s.run(["status", "u1", "-o", "json"]).out
        #expect(
            before == """
                {"user":"u1","streak":"daily","timezone":"Europe/Berlin","today":"2026-11-21","current":2,"longest":2,"freezes":1,"today_count":0,"goal":1,"total_checkins":2,"last_qualifying_date":"2026-11-20","next_refill":"2026-12-21T11:00:00Z","next_reminder":null,"paused_until":null,"repairs_left":1,"remind_at":"20:00","remind_usual":false,"xp":30,"level":1,"next_level_xp":500}
                {"user":"u1","streak":"workout","timezone":"Europe/Berlin","today":"2026-11-21","current":0,"longest":1,"freezes":1,"today_count":0,"goal":1,"total_checkins":1,"last_qualifying_date":"2026-11-19","next_refill":"2026-12-21T11:00:00Z","next_reminder":null,"paused_until":null,"repairs_left":1,"remind_at":"20:00","remind_usual":false,"xp":30,"level":1,"next_level_xp":500}

                """)

        let again = s.run(["import", path])
        #expect(again.code == 0)
        #expect(again.out == "imported 0 check-ins from \(path) (3 already stored, 0 invalid skipped)\n")
        let json = s.run(["import", path, "-o", "json"])
        #expect(json.out == #"{"imported":0,"duplicates":3,"skipped":0}"# + "\n")
        #expect(s.run(["status", "u1", "-o", "json"]).out == before)
    }

    @Test func checkinsWithoutIdsAreNeverMerged() throws {
        let s = try Sandbox()
        s.addUser()
        let path = try s.file("n.jsonl", checkinLine("2026-11-20T10:00:00Z") + "\n")
        #expect(s.run(["import", path]).code == 0)
        #expect(
            s.run(["import", path]).out == "imported 1 check-in from \(path) (0 already stored, 0 invalid skipped)\n")
        #expect(try s.statusObject()["total_checkins"] as? Int == 2)
    }

    @Test func fromStandardInput() throws {
        let s = try Sandbox()
        s.addUser()
        let line = checkinLine("2026-11-20T10:00:00Z", id: "s1") + "\n"
        let r = s.run(["import", "-"], stdin: line)
        #expect(r.code == 0)
        #expect(r.out == "imported 1 check-in from <stdin> (0 already stored, 0 invalid skipped)\n")
        let r2 = s.run(["import", "-", "-o", "json"], stdin: line)
        #expect(r2.out == #"{"imported":0,"duplicates":1,"skipped":0}"# + "\n")
        let csv = s.run(["import", "-", "--format", "csv"], stdin: "user,at\nu1,2026-11-19T10:00:00Z\n")
        #expect(csv.code == 0)
        #expect(csv.out == "imported 1 check-in from <stdin> (0 already stored, 0 invalid skipped)\n")
        let bad = s.run(["import", "-"], stdin: "nope\n")
        #expect(bad.code == 65)
        #expect(
            bad.err == error("<stdin>:1: malformed JSON: expected one object {...} per line")
                + "1 invalid record; nothing was imported (use --skip-invalid to import the valid ones)\n")
    }

    @Test func csvHeaderInAnyOrderAndQuotedFields() throws {
        let s = try Sandbox()
        s.addUser()
        // CRLF line ends, quoted fields, a doubled quote inside one, an empty optional field.
        let path = try s.file(
            "a.csv",
            "id,at,user,tz\r\n\"c1\",\"2026-11-20T19:00:00+01:00\",\"u1\",Europe/Berlin\r\nc2,2026-11-19T19:00:00+01:00,u1,\n"
                + "\"c\"\"3\",2026-11-18T19:00:00+01:00,u1,\"Europe/Berlin\"\n")
        let r = s.run(["import", path])
        #expect(r.code == 0)
        #expect(r.out == "imported 3 check-ins from \(path) (0 already stored, 0 invalid skipped)\n")
        #expect(r.err == "")
        let again = s.run(["import", path, "-o", "json"])
        #expect(again.out == #"{"imported":0,"duplicates":3,"skipped":0}"# + "\n")
        let st = try s.statusObject()
        #expect(st["current"] as? Int == 3)
        #expect(st["total_checkins"] as? Int == 3)

        // Streak column; a .txt file is JSON lines unless --format csv.
        let txt = try s.file("w.txt", "streak,user,at\nworkout,u1,2026-11-20T10:00:00Z\n")
        #expect(s.run(["import", txt]).code == 65)
        let forced = s.run(["import", txt, "--format", "csv"])
        #expect(forced.code == 0, "\(forced)")
        #expect(try s.statusObject(streak: "workout")["total_checkins"] as? Int == 1)
    }

    @Test func outOfOrderAndDuplicatesGiveTheSameStatus() throws {
        // 11–14 and 16–20 November: the 15th is missed and a freeze covers it.
        let days = [11, 12, 13, 14, 16, 17, 18, 19, 20]
        let lines = days.map { checkinLine("2026-11-\($0)T21:30:00+01:00", id: "d\($0)") }
        let inOrder = try Sandbox()
        inOrder.addUser()
        try inOrder.importLines(lines)
        let expected = inOrder.run(["status", "u1", "-o", "json"]).out
        #expect(
            expected == """
                {"user":"u1","streak":"daily","timezone":"Europe/Berlin","today":"2026-11-21","current":9,"longest":9,"freezes":0,"today_count":0,"goal":1,"total_checkins":9,"last_qualifying_date":"2026-11-20","next_refill":"2026-12-21T11:00:00Z","next_reminder":null,"paused_until":null,"repairs_left":1,"remind_at":"20:00","remind_usual":false,"xp":190,"level":1,"next_level_xp":500}

                """)
        let shuffled = try Sandbox()
        shuffled.addUser()
        var mixed = Array(lines.reversed())
        mixed.insert(lines[3], at: 2)
        mixed.append(lines[0])
        mixed.swapAt(1, 6)
        try shuffled.importLines(mixed)
        #expect(shuffled.run(["status", "u1", "-o", "json"]).out == expected)
        #expect(
            shuffled.run(["calendar", "u1", "-o", "json"]).out == inOrder.run(["calendar", "u1", "-o", "json"]).out)

        // Split in two imports, later days first: the same streak (only the refill clock,
        // which starts at the first stored check-in, may differ).
        let split = try Sandbox()
        split.addUser()
        split.now = "2026-11-20T23:00:00Z"
        try split.importLines(Array(lines[4...]), name: "late.jsonl")
        split.now = fixedNow
        try split.importLines(Array(lines[..<4]), name: "early.jsonl")
        var a = try split.statusObject()
        var b = try jsonObject(expected)
        a["next_refill"] = nil
        b["next_refill"] = nil
        #expect(NSDictionary(dictionary: a) == NSDictionary(dictionary: b))

        // A late check-in for the 15th gives the freeze back and joins the runs.
        let late = inOrder.run(["checkin", "u1", "--at", "2026-11-15T12:00:00+01:00", "--id", "d15"])
        #expect(late.out == "u1 checked in (daily): today 2026-11-21 0 of 1, current streak 10 days, longest 10 days\n")
        let st = try inOrder.statusObject()
        #expect(st["freezes"] as? Int == 1)
        #expect(st["current"] as? Int == 10)
    }

    @Test func oneBadLineLeavesTheStoreUnchanged() throws {
        let s = try Sandbox()
        s.addUser()
        try s.importLines(Array(sevenDays.prefix(3)))
        let before = s.run(["status", "u1", "-o", "json"]).out
        let path = try s.file(
            "b.jsonl",
            [
                checkinLine("2026-11-18T19:03:00+01:00", id: "b1"),
                checkinLine("2026-11-19T19:03:00+01:00", id: "b2"),
                checkinLine("2026-11-20T19:03:00+01:00", id: "b3", extra: #","colour":"red""#),
                checkinLine("2026-11-21T09:03:00+01:00", id: "b4"),
            ].joined(separator: "\n") + "\n")
        let r = s.run(["import", path])
        #expect(r.code == 65)
        #expect(r.out == "")
        #expect(
            r.err == error(#"\#(path):3: field "colour": unknown field; valid fields: user, streak, at, tz, id, meta"#)
                + "1 invalid record; nothing was imported (use --skip-invalid to import the valid ones)\n")
        #expect(s.run(["status", "u1", "-o", "json"]).out == before)
    }

    @Test func everyProblemNamesFileLineAndField() throws {
        let s = try Sandbox()
        s.addUser()
        let lines = [
            checkinLine("2026-11-18T19:03:00+01:00", id: "b1"),
            checkinLine("2026-11-18T19:03:00+01:00", id: "b2", extra: #","meta":{"w":1.5}"#),
            checkinLine("2026-11-18T19:03:00+01:00", id: "b3", extra: #","colour":"red""#),
            #"{"user":"u1","id":"b4"}"#,
            #"{"user":"u1","at":"2026-11-18T19:03:00+01:00","id":"b5""#,
            checkinLine("2026-11-18T19:03:00+01:00", id: "b6", user: "ghost"),
            checkinLine("2026-11-18T19:03:00+01:00", extra: #","tz":"posix/UTC""#),
            checkinLine("2026-11-18T19:03:00+01:00", extra: #","meta":{"Bad":1}"#),
            checkinLine("2026-11-18T19:03:00+01:00", extra: #","meta":{"b":null}"#),
            checkinLine("2026-11-18T19:03:00+01:00", extra: #","meta":{"b":[1]}"#),
            checkinLine("2026-11-19T19:03:00+01:00", id: "b11"),
            #"{"user":"u1","at":12}"#,
            "[1,2]",
            checkinLine("2026-11-18T19:03:00", id: "b14"),
            checkinLine("2026-12-18T19:03:00+01:00", id: "b15"),
            checkinLine("2026-11-18T19:03:00+01:00", extra: #","streak":"Work""#),
            checkinLine("2026-11-18T19:03:00+01:00", id: "has space"),
        ]
        let path = try s.file("b.jsonl", lines.joined(separator: "\n") + "\n")
        let problems = [
            #"\#(path):2: field "meta": value of "w" is a fractional number; metadata values must be strings, booleans or integers"#,
            #"\#(path):3: field "colour": unknown field; valid fields: user, streak, at, tz, id, meta"#,
            #"\#(path):4: field "at": missing; it is required"#,
            #"\#(path):5: malformed JSON at column 56: expected ',' or '}' after the value of "id", found the end of the line"#,
            #"\#(path):6: field "user": unknown user "ghost"; add it first with: streakd user add ghost --tz ZONE"#,
            #"\#(path):7: field "tz": "posix/UTC" is not a time zone name; "# + zoneRule,
            #"\#(path):8: field "meta": key "Bad" is not valid; use a lowercase letter, then up to 63 of a-z, 0-9 and '_'"#,
            #"\#(path):9: field "meta": value of "b" is null; metadata values must be strings, booleans or integers"#,
            #"\#(path):10: field "meta": value of "b" is an array; metadata values must be strings, booleans or integers"#,
            #"\#(path):12: field "at": must be a string, not an integer"#,
            #"\#(path):13: malformed JSON: expected one object {...} per line"#,
            #"\#(path):14: field "at": "2026-11-18T19:03:00" is not an RFC 3339 instant with an offset; use e.g. 2026-11-20T19:03:00-05:00"#,
            #"\#(path):15: field "at": 2026-12-18T18:03:00Z is in the future (now is 2026-11-21T11:00:00Z); a check-in may be at most 5 minutes ahead"#,
            #"\#(path):16: field "streak": "Work" is not a streak id; use 1 to 64 characters of a-z, 0-9 and '_'"#,
            #"\#(path):17: field "id": "has space" is not an event id; use 1 to 128 printable ASCII characters without spaces"#,
        ]
        let r = s.run(["import", path])
        #expect(r.code == 65)
        #expect(r.out == "")
        #expect(
            r.err == "streakd: error: " + problems.joined(separator: "\n")
                + "\n15 invalid records; nothing was imported (use --skip-invalid to import the valid ones)\n")
        #expect(try s.statusObject()["total_checkins"] as? Int == 0)

        // --skip-invalid: the two valid lines go in, every other line is a warning.
        let skip = s.run(["import", path, "--skip-invalid"])
        #expect(skip.code == 0)
        #expect(skip.out == "imported 2 check-ins from \(path) (0 already stored, 15 invalid skipped)\n")
        #expect(skip.err == problems.map { "streakd: warning: skipped \($0)\n" }.joined())
        let json = s.run(["import", path, "--skip-invalid", "-o", "json"])
        #expect(json.code == 0)
        #expect(json.out == #"{"imported":0,"duplicates":2,"skipped":15}"# + "\n")
        let st = try s.statusObject()
        #expect(st["total_checkins"] as? Int == 2)
        #expect(st["longest"] as? Int == 2)  // the 18th and 19th; the 20th is missed
    }

    @Test func invalidUTF8() throws {
        let s = try Sandbox()
        s.addUser()
        let good = Array((checkinLine("2026-11-19T10:00:00Z", id: "g1") + "\n").utf8)
        let bad =
            Array(#"{"user":"u1","at":"2026-11-20T10:00:00Z","meta":{"n":""#.utf8) + [0xFF, 0xFE] + Array("\"}}\n".utf8)
        let path = try s.file("bad.jsonl", bytes: good + bad)
        let r = s.run(["import", path])
        #expect(r.code == 65)
        #expect(
            r.err
                == error(
                    "\(path):2: invalid UTF-8; the file must be UTF-8 text\n"
                        + "1 invalid record; nothing was imported (use --skip-invalid to import the valid ones)"))
        #expect(try s.statusObject()["total_checkins"] as? Int == 0)
        // --skip-invalid skips an unreadable line like any other invalid one.
        let skip = s.run(["import", path, "--skip-invalid"])
        #expect(skip.code == 0)
        #expect(skip.err == "streakd: warning: skipped \(path):2: invalid UTF-8; the file must be UTF-8 text\n")
        #expect(try s.statusObject()["total_checkins"] as? Int == 1)
    }

    @Test func csvWithAByteOrderMark() throws {
        let s = try Sandbox()
        s.addUser()
        let path = try s.file("bom.csv", bytes: [0xEF, 0xBB, 0xBF] + Array("user,at\nu1,2026-11-20T10:00:00Z\n".utf8))
        #expect(s.run(["import", path]).code == 0)
        #expect(try s.statusObject()["total_checkins"] as? Int == 1)
    }

    @Test func csvProblems() throws {
        let s = try Sandbox()
        s.addUser()
        func attempt(_ name: String, _ text: String) throws -> (String, RunResult) {
            let path = try s.file(name, text)
            return (path, s.run(["import", path]))
        }
        let tail = "1 invalid record; nothing was imported (use --skip-invalid to import the valid ones)\n"
        var (p, r) = try attempt(
            "count.csv", "user,at,id\nu1,2026-11-17T19:00:00+01:00,k1\nu1,2026-11-17T19:00:00+01:00\n")
        #expect(r.code == 65)
        #expect(r.err == error("\(p):3: 2 fields, but the header names 3 columns") + tail)
        (p, r) = try attempt("col.csv", "user,at,color\nu1,2026-11-17T19:00:00+01:00,red\n")
        #expect(r.code == 65)
        #expect(
            r.err
                == error(
                    #"\#(p):1: column "color" is unknown; the header names the columns user, at and optionally tz, streak, id"#
                ))
        (p, r) = try attempt("noat.csv", "user,tz\nu1,UTC\n")
        #expect(r.code == 65)
        #expect(r.err == error(#"\#(p):1: the header has no "at" column; it is required"#))
        (p, r) = try attempt("twice.csv", "user,at,user\nu1,2026-11-17T19:00:00+01:00,u1\n")
        #expect(r.code == 65)
        #expect(r.err == error("\(p):1: the header names a column twice"))
        (p, r) = try attempt("open.csv", "user,at\nu1,\"2026-11-17T19:00:00+01:00\n")
        #expect(r.code == 65)
        #expect(r.err == error(#"\#(p):2: field "at": malformed CSV: a quote is not closed on its line"#) + tail)
        (p, r) = try attempt("after.csv", "user,at\nu1,\"2026-11-17T19:00:00+01:00\"x\n")
        #expect(r.code == 65)
        #expect(r.err == error(#"\#(p):2: field "at": malformed CSV: text after a closing quote"#) + tail)
        // Issue 17: a line break inside quotes was "a quote is not closed", and its second line a
        // record of its own. It is one record, and the message says what is in it.
        (p, r) = try attempt(
            "break.csv",
            "user,at,id\nu1,2026-11-17T19:00:00+01:00,\"a\nb\"\"c\"\nu1,2026-11-18T19:00:00+01:00,ok\n"
                + "u1,2026-11-19T19:00:00+01:00,\"last\n")
        #expect(r.code == 65)
        #expect(
            r.err
                == error(
                    #"\#(p):2: field "id": malformed CSV: a line break inside a quoted value (the value goes on to line 3); no check-in field holds one, and streakd reads one record a line"#
                )
                + #"\#(p):5: field "id": malformed CSV: a quote is not closed on its line"# + "\n"
                + "2 invalid records; nothing was imported (use --skip-invalid to import the valid ones)\n")
        let skipped = s.run(["import", p, "--skip-invalid", "-o", "json"])
        #expect(skipped.out == #"{"imported":1,"duplicates":0,"skipped":2}"# + "\n", "\(skipped)")
        #expect(try s.statusObject()["total_checkins"] as? Int == 1)
        #expect(s.run(["user", "remove", "u1"]).code == 0)
        s.addUser()
        (p, r) = try attempt("empty.csv", "user,at\n,2026-11-17T19:00:00+01:00\n")
        #expect(r.code == 65)
        #expect(r.err == error(#"\#(p):2: field "user": empty; it is required"#) + tail)
        (p, r) = try attempt("zone.csv", "user,at,tz\nu1,2026-11-17T19:00:00+01:00,../../etc/passwd\n")
        #expect(r.code == 65)
        #expect(
            r.err == error(#"\#(p):2: field "tz": "../../etc/passwd" is a path, not a time zone name; "# + zoneRule)
                + tail)
        #expect(try s.statusObject()["total_checkins"] as? Int == 0)
    }

    /// Issue 17: an integer past Int64 trapped (exit 132); a 30-digit one was "a fractional
    /// number", a lone surrogate "an array", and a key given twice was taken silently.
    @Test func jsonProblemsSayWhatIsReallyWrong() throws {
        let s = try Sandbox()
        s.addUser()
        let at = "2026-11-20T10:00:00Z"
        let lines = [
            checkinLine(at, extra: #","meta":{"n":9223372036854775808}"#),
            checkinLine(at, extra: #","meta":{"n":-123456789012345678901234567890}"#),
            checkinLine(at, id: #"\ud800"#),
            checkinLine(at, extra: #","user":"u2""#),
            checkinLine(at, extra: #","meta":{"n":1,"ok":true,"n":2}"#),
            checkinLine(at, extra: #","meta":{"n":9223372036854775807,"m":-9223372036854775808,"f":2.0}"#),
        ]
        let path = try s.file("big.jsonl", lines.joined(separator: "\n") + "\n")
        let range = "metadata integers must be from -9223372036854775808 to 9223372036854775807"
        let r = s.run(["import", path])
        #expect(r.code == 65)
        #expect(r.out == "")
        #expect(
            r.err
                == error(
                    #"\#(path):1: field "meta": value of "n" is 9223372036854775808, out of range; \#(range)"#) + """
                    \(path):2: field "meta": value of "n" is -123456789012345678901234567890, out of range; \(range)
                    \(path):3: field "id": malformed JSON at column 48: \\ud800 is the first half of a surrogate pair, and its second half (\\udc00 to \\udfff) does not follow; a string must be valid Unicode
                    \(path):4: field "user": given twice in one object; give each field once
                    \(path):5: field "meta": key "n" is given twice; give each key once
                    5 invalid records; nothing was imported (use --skip-invalid to import the valid ones)

                    """)
        #expect(try s.statusObject()["total_checkins"] as? Int == 0)
        // The edges of the range, and a whole number written 2.0, go in.
        let skip = s.run(["import", path, "--skip-invalid"])
        #expect(skip.code == 0, "\(skip)")
        #expect(skip.out == "imported 1 check-in from \(path) (0 already stored, 5 invalid skipped)\n")

        // user import reads lines the same way.
        let users = try s.file(
            "users.jsonl",
            #"{"user":"n1","tz":"UTC","remind":9223372036854775808}"# + "\n" + #"{"user":"n2","tz":"UTC","tz":"UTC"}"#
                + "\n" + #"{"user":"n3","tz":"UTC","meta":{"n":9223372036854775808}}"# + "\n"
                + #"{"user":"n4","tz":"UTC","":1}"# + "\n")
        let u = s.run(["user", "import", users])
        #expect(u.code == 65)
        #expect(
            u.err
                == error(#"\#(users):1: field "remind": must be true or false, not an integer"#) + """
                    \(users):2: field "tz": given twice in one object; give each field once
                    \(users):3: field "meta": unknown field; valid fields: user, tz, remind_at, remind, lang
                    \(users):4: unknown field "" (an empty name); valid fields: user, tz, remind_at, remind, lang
                    4 invalid records; no user was added or changed

                    """)
    }
}
