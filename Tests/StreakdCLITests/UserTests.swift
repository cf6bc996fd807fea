import Foundation
import StreakTestKit
import Testing

@Suite("user add, set, list, remove, import")
struct UserTests {
    @Test func addListSetAndJSON() throws {
        let s = try Sandbox()
        // A read command creates no store (issue 17): the first writing command does.
        let missing = s.run(["user", "list"])
        #expect(missing.code == 66 && missing.err.contains("no store at \(s.store)"))
        _ = s.run(["user", "remove", "nobody"])
        let empty = s.run(["user", "list"])
        #expect(empty.code == 0)
        #expect(empty.out == "")
        #expect(empty.err == "no users yet; add one with: streakd user add ID --tz ZONE\n")

        let add = s.run(["user", "add", "alice", "--tz", "Europe/Berlin"])
        #expect(add.code == 0)
        #expect(add.out == "added user alice (Europe/Berlin, reminders at 20:00)\n")
        #expect(add.err == "")

        let bob = s.run(["user", "add", "bob", "--tz", "America/New_York", "--remind-at", "07:30", "--no-remind"])
        #expect(bob.code == 0)
        #expect(bob.out == "added user bob (America/New_York, reminders off)\n")

        let again = s.run(["user", "add", "alice", "--tz", "Asia/Tokyo"])
        #expect(again.code == 65)
        #expect(again.out == "")
        #expect(again.err == error(#"user "alice" exists already; change it with: streakd user set alice"#))

        let list = s.run(["user", "list"])
        #expect(list.code == 0)
        #expect(
            list.out == """
                USER   ZONE                            REMINDERS
                alice  Europe/Berlin                   at 20:00
                bob    America/New_York                off

                """)

        let set = s.run(["user", "set", "bob", "--tz", "Asia/Tokyo", "--remind"])
        #expect(set.code == 0)
        #expect(set.out == "updated user bob (Asia/Tokyo, reminders at 07:30)\n")

        let json = s.run(["user", "list", "-o", "json"])
        #expect(json.code == 0)
        #expect(
            json.out == """
                {"user":"alice","timezone":"Europe/Berlin","remind_at":"20:00","remind":true}
                {"user":"bob","timezone":"Asia/Tokyo","remind_at":"07:30","remind":true}

                """)
    }

    @Test func badUserInput() throws {
        let s = try Sandbox()
        s.addUser("alice")
        let r1 = s.run(["user", "add", "bad id", "--tz", "UTC"])
        #expect(r1.code == 65)
        #expect(
            r1.err
                == error(
                    #"ID: "bad id" is not a user id; use 1 to 128 characters: a letter or digit, then letters, digits, '.', '_', '@' or '-'"#
                ))
        let r2 = s.run(["user", "add", "zed", "--tz", "Mars/Olympus"])
        #expect(r2.code == 65)
        #expect(r2.err == error(#"--tz: unknown time zone "Mars/Olympus"; "# + zoneRule))
        let r3 = s.run(["user", "set", "alice", "--remind-at", "25:00"])
        #expect(r3.code == 65)
        #expect(r3.err == error(#"--remind-at: "25:00" is not a time of day; use HH:MM from 00:00 to 23:59"#))
        let r4 = s.run(["user", "set", "carol", "--tz", "UTC"])
        #expect(r4.code == 65)
        #expect(r4.err == error(#"unknown user "carol"; add it first with: streakd user add carol --tz ZONE"#))
        let r5 = s.run(["user", "add", "zed", "--tz", "posix/Europe/Berlin"])
        #expect(r5.code == 65)
        let missingTZ = s.run(["user", "add", "zed"])
        #expect(missingTZ.code == 64)
        // Nothing of the failed commands was stored.
        #expect(s.run(["user", "list", "-o", "json"]).out.split(separator: "\n").count == 1)
    }

    @Test func removeDeletesAllTheirData() throws {
        let s = try Sandbox()
        s.addUser("u1")
        s.addUser("u2")
        try s.importLines(sevenDays + [checkinLine("2026-11-19T10:00:00Z", id: "x1", user: "u2")])
        #expect(s.run(["checkin", "u1", "--streak", "workout", "--at", "2026-11-20T10:00:00Z"]).code == 0)
        #expect(s.run(["freeze", "add", "u1", "--streak", "reading"]).code == 0)

        let rm = s.run(["user", "remove", "u1"])
        #expect(rm.code == 0)
        #expect(rm.out == "removed user u1 and all their data\n")

        let status = s.run(["status", "u1"])
        #expect(status.code == 65)
        #expect(status.out == "")
        #expect(status.err == error(#"unknown user "u1"; add it first with: streakd user add u1 --tz ZONE"#))

        let twice = s.run(["user", "remove", "u1"])
        #expect(twice.code == 65)
        #expect(twice.err == error(#"unknown user "u1"; add it first with: streakd user add u1 --tz ZONE"#))

        // Added again, the user starts from nothing: no check-ins, no streaks, ids free again.
        s.addUser("u1")
        let fresh = s.run(["status", "u1", "-o", "json"])
        #expect(fresh.code == 0)
        #expect(
            fresh.out == """
                {"user":"u1","streak":"daily","timezone":"Europe/Berlin","today":"2026-11-21","current":0,"longest":0,"freezes":1,"today_count":0,"goal":1,"total_checkins":0,"last_qualifying_date":null,"next_refill":null,"next_reminder":null}

                """)
        let reuse = s.run(["checkin", "u1", "--at", "2026-11-20T18:00:00+01:00", "--id", "d20"])
        #expect(reuse.out.hasPrefix("u1 checked in (daily)"), "\(reuse)")
        // The other user is untouched.
        #expect(try s.statusObject("u2")["total_checkins"] as? Int == 1)
    }

    @Test func importUsers() throws {
        let s = try Sandbox()
        s.addUser("a1", tz: "UTC")
        let path = try s.file(
            "users.jsonl",
            """
            {"user":"a1","tz":"Asia/Tokyo","remind_at":"07:15"}
            {"user":"a2","tz":"Europe/Berlin"}

            {"user":"a3","tz":"America/New_York","remind":false}

            """)
        let r = s.run(["user", "import", path])
        #expect(r.code == 0)
        #expect(r.out == "imported users from \(path): 2 added, 1 updated\n")
        #expect(r.err == "")
        #expect(
            s.run(["user", "list", "-o", "json"]).out == """
                {"user":"a1","timezone":"Asia/Tokyo","remind_at":"07:15","remind":true}
                {"user":"a2","timezone":"Europe/Berlin","remind_at":"20:00","remind":true}
                {"user":"a3","timezone":"America/New_York","remind_at":"20:00","remind":false}

                """)

        let stdin = s.run(["user", "import", "-", "-o", "json"], stdin: #"{"user":"c1","tz":"UTC"}"# + "\n")
        #expect(stdin.code == 0)
        #expect(stdin.out == #"{"added":1,"updated":0}"# + "\n")

        let missing = s.run(["user", "import", s.dir.path + "/nope.jsonl"])
        #expect(missing.code == 66)
        #expect(missing.err == error("\(s.dir.path)/nope.jsonl: no such file"))
    }

    @Test func importUsersIsAllOrNothing() throws {
        let s = try Sandbox()
        s.addUser("a1", tz: "UTC")
        let before = s.run(["user", "list", "-o", "json"]).out
        let path = try s.file(
            "bad.jsonl",
            """
            {"user":"b1","tz":"UTC"}
            {"user":"b2","tz":"Nowhere/Land"}
            {"user":"b1","tz":"UTC"}
            {"user":"b3","tz":"UTC","remind_at":"9:00"}
            {"user":"b4","tz":"UTC","x":1}
            {"user":"b5"}
            {"user":"b6","tz":"UTC","remind":"no"}
            {"user":"a1","tz":"Asia/Tokyo"}

            """)
        let r = s.run(["user", "import", path])
        #expect(r.code == 65)
        #expect(r.out == "")
        #expect(
            r.err == """
                streakd: error: \(path):2: field "tz": unknown time zone "Nowhere/Land"; \(zoneRule)
                \(path):3: field "user": "b1" appears already on line 1
                \(path):4: field "remind_at": "9:00" is not a time of day; use HH:MM from 00:00 to 23:59
                \(path):5: field "x": unknown field; valid fields: user, tz, remind_at, remind
                \(path):6: field "tz": missing; it is required
                \(path):7: field "remind": must be true or false, not a string
                6 invalid records; no user was added or changed

                """)
        #expect(s.run(["user", "list", "-o", "json"]).out == before)

        // One bad line alone is enough to refuse the whole file.
        let one = try s.file("one.jsonl", #"{"user":"n1","tz":"UTC"}"# + "\n" + #"{"user":"n2","tz":"UTC""# + "\n")
        let r2 = s.run(["user", "import", one])
        #expect(r2.code == 65)
        #expect(r2.err.contains("\(one):2: malformed JSON"), "\(r2)")
        #expect(s.run(["user", "list", "-o", "json"]).out == before)
    }
}
