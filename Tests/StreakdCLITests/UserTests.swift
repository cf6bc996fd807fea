import Foundation
import StreakTestKit
import Testing

@Suite("user add, set, list, remove, import", .fastTier)
struct UserTests {
    @Test func addListSetAndJSON() throws {
        let s = try Sandbox()
        // A read command creates no store (issue 17): the first writing command does.
        let missing = s.run(["user", "list"])
        #expect(missing.code == 66 && missing.err.contains("no store at \(s.store)"))
        #expect(missing.err.hasSuffix("; check --store\n"), "\(missing)")
        // Named by the environment, the message says which setting to check.
        let fromEnv = s.runBare(["user", "list"], env: ["STREAKD_STORE": s.store])
        #expect(fromEnv.code == 66 && fromEnv.err.hasSuffix("; check STREAKD_STORE\n"), "\(fromEnv)")
        // Removing makes no SQLite store (66, as a read; a database is there: 65, no such user);
        // adding a token makes one, without users.
        #expect(s.run(["user", "remove", "nobody"]).code == (TestStore.postgres ? 65 : 66))
        #expect(s.run(["token", "add", "app", "--scope", "read"]).code == 0)
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
                USER   ZONE                            REMINDERS  LANGUAGE
                alice  Europe/Berlin                   at 20:00   en (default)
                bob    America/New_York                off        en (default)

                """)

        let set = s.run(["user", "set", "bob", "--tz", "Asia/Tokyo", "--remind"])
        #expect(set.code == 0)
        #expect(set.out == "updated user bob (Asia/Tokyo, reminders at 07:30)\n")

        let json = s.run(["user", "list", "-o", "json"])
        #expect(json.code == 0)
        #expect(
            json.out == """
                {"user":"alice","timezone":"Europe/Berlin","remind_at":"20:00","remind_usual":false,"remind":true,"language":null}
                {"user":"bob","timezone":"Asia/Tokyo","remind_at":"07:30","remind_usual":false,"remind":true,"language":null}

                """)
    }

    /// Issue 31, item 13: `user import` takes `lang` as `user add --lang` does; a record without
    /// it keeps the stored language; a bad tag is refused with its line, nothing stored.
    @Test func userImportTakesLangAsUserAddDoes() throws {
        let s = try Sandbox()
        let first = try s.file(
            "a.jsonl",
            #"{"user":"li","tz":"Asia/Shanghai","lang":"zh-hans"}"# + "\n" + #"{"user":"ann","tz":"Europe/London"}"#
                + "\n")
        let r = s.run(["user", "import", first])
        #expect(r.code == 0, "\(r)")
        // Again without lang: li keeps zh-Hans; ann gets en-GB.
        let again = try s.file(
            "b.jsonl",
            #"{"user":"li","tz":"Asia/Tokyo"}"# + "\n" + #"{"user":"ann","tz":"Europe/London","lang":"en-GB"}"# + "\n")
        #expect(s.run(["user", "import", again]).code == 0)
        let users = try jsonLines(s.run(["user", "list", "-o", "json"]).out)
        #expect(
            users.map { "\($0["user"]!) \($0["timezone"]!) \($0["language"] as? String ?? "-")" } == [
                "ann Europe/London en-GB", "li Asia/Tokyo zh-Hans",
            ])
        let bad = try s.file("c.jsonl", #"{"user":"x","tz":"UTC","lang":"english"}"# + "\n")
        let refused = s.run(["user", "import", bad])
        #expect(refused.code == 65 && refused.err.contains("c.jsonl:1: field \"lang\""), "\(refused)")
    }

    @Test func languagesAreBCP47TagsStreakdHasMessagesIn() throws {
        let s = try Sandbox()
        let add = s.run(["user", "add", "li", "--tz", "Asia/Shanghai", "--lang", "zh-hans"])
        #expect(add.code == 0 && add.err == "", "\(add)")
        #expect(add.out == "added user li (Asia/Shanghai, reminders at 20:00, language zh-Hans)\n")
        // Chinese of the mainland without a script is served in Simplified Chinese; a region narrows English.
        #expect(s.run(["user", "add", "wang", "--tz", "Asia/Shanghai", "--lang", "zh-CN"]).code == 0)
        #expect(s.run(["user", "add", "ann", "--tz", "Europe/London", "--lang", "en-GB"]).code == 0)
        s.addUser("bo")
        let set = s.run(["user", "set", "bo", "--lang", "zh-Hans"])
        #expect(set.out == "updated user bo (Europe/Berlin, reminders at 20:00, language zh-Hans)\n")
        // Other changes keep the language.
        #expect(s.run(["user", "set", "bo", "--tz", "Asia/Tokyo"]).code == 0)
        #expect(
            s.run(["user", "list"]).out == """
                USER  ZONE                            REMINDERS  LANGUAGE
                ann   Europe/London                   at 20:00   en-GB
                bo    Asia/Tokyo                      at 20:00   zh-Hans
                li    Asia/Shanghai                   at 20:00   zh-Hans
                wang  Asia/Shanghai                   at 20:00   zh-CN

                """)

        let bad = s.run(["user", "add", "x", "--tz", "UTC", "--lang", "english"])
        #expect(bad.code == 64)
        #expect(
            bad.err
                == error(
                    #"--lang: "english" is not a language tag; use a BCP 47 language tag such as en, en-GB, zh-Hans or pt-BR (a 2- or 3-letter language, then optional script, region and variants)"#
                ))
        let none = s.run(["user", "set", "bo", "--lang", "fr"])
        #expect(none.code == 64)
        #expect(
            none.err
                == error(
                    "--lang: streakd has no messages in fr; use one of en, zh-Hans, or add a [messages.fr] table to the configuration"
                ))
        // Configured, French is a language like the others.
        let config = try s.file("fr.toml", "[messages.fr]\nat_risk = \"Ta série de {length} jours est en danger !\"\n")
        #expect(s.run(["user", "set", "bo", "--lang", "fr-CA", "--config", config]).code == 0)
    }

    @Test func reminderTimesFallOnTheTimersFirings() throws {
        let s = try Sandbox()
        let r = s.run(["user", "add", "a", "--tz", "Europe/Berlin", "--remind-at", "20:10"])
        #expect(r.code == 64)
        #expect(
            r.err
                == error(
                    "--remind-at: 20:10 falls between the timer's firings (every quarter hour, :00, :15, :30 and :45 UTC), "
                        + "so its reminders would come minutes late; use 20:00 or 20:15"))
        // A zone 45 minutes off the hour fires at its own quarter hours.
        #expect(s.run(["user", "add", "k", "--tz", "Asia/Kathmandu", "--remind-at", "07:45"]).code == 0)
        #expect(s.run(["user", "add", "c", "--tz", "Australia/Eucla", "--remind-at", "21:15"]).code == 0)
        let set = s.run(["user", "set", "k", "--remind-at", "23:59"])
        #expect(set.code == 64)
        #expect(set.err.hasSuffix("use 23:45 or 00:00\n"), "\(set)")
        let file = try s.file("u.jsonl", #"{"user":"b","tz":"UTC","remind_at":"08:05"}"# + "\n")
        let imported = s.run(["user", "import", file])
        #expect(imported.code == 65)
        #expect(imported.err.contains(#"field "remind_at": 08:05 falls between the timer's firings"#), "\(imported)")
    }

    @Test func badUserInput() throws {
        let s = try Sandbox()
        s.addUser("alice")
        let r1 = s.run(["user", "add", "bad id", "--tz", "UTC"])
        #expect(r1.code == 64)
        #expect(
            r1.err
                == error(
                    #"ID: "bad id" is not a user id; use 1 to 128 characters: a letter or digit, then letters, digits, '.', '_', '@' or '-'"#
                ))
        let r2 = s.run(["user", "add", "zed", "--tz", "Mars/Olympus"])
        #expect(r2.code == 64)
        #expect(r2.err == error(#"--tz: unknown time zone "Mars/Olympus"; "# + zoneRule))
        let r3 = s.run(["user", "set", "alice", "--remind-at", "25:00"])
        #expect(r3.code == 64)
        #expect(r3.err == error(#"--remind-at: "25:00" is not a time of day; use HH:MM from 00:00 to 23:59, or usual"#))
        let r4 = s.run(["user", "set", "carol", "--tz", "UTC"])
        #expect(r4.code == 65)
        #expect(r4.err == error(#"unknown user "carol"; add it first with: streakd user add carol --tz ZONE"#))
        let r5 = s.run(["user", "add", "zed", "--tz", "posix/Europe/Berlin"])
        #expect(r5.code == 64)
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
        #expect(twice.err == error(#"unknown user "u1"; nothing was removed"#))

        // Added again, the user starts from nothing: no check-ins, no streaks, ids free again.
        s.addUser("u1")
        let fresh = s.run(["status", "u1", "-o", "json"])
        #expect(fresh.code == 0)
        #expect(
            fresh.out == """
                {"user":"u1","streak":"daily","timezone":"Europe/Berlin","today":"2026-11-21","current":0,"longest":0,"freezes":1,"today_count":0,"goal":1,"total_checkins":0,"last_qualifying_date":null,"next_refill":null,"next_reminder":null,"paused_until":null,"repairs_left":1,"remind_at":"20:00","remind_usual":false,"xp":0,"level":1,"next_level_xp":500}

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
                {"user":"a1","timezone":"Asia/Tokyo","remind_at":"07:15","remind_usual":false,"remind":true,"language":null}
                {"user":"a2","timezone":"Europe/Berlin","remind_at":"20:00","remind_usual":false,"remind":true,"language":null}
                {"user":"a3","timezone":"America/New_York","remind_at":"20:00","remind_usual":false,"remind":false,"language":null}

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
                \(path):4: field "remind_at": "9:00" is not a time of day; use HH:MM from 00:00 to 23:59, or usual
                \(path):5: field "x": unknown field; valid fields: user, tz, remind_at, remind, lang
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
