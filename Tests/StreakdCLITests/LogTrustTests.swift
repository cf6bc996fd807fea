import Foundation
import StreakTestKit
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// Issue 31's `log` cases: entries another user forged under streakd's name, and times past any
/// journal's.
extension LogTests {
    /// Issue 31, item 4: any local user can write an entry with streakd's identifier, MESSAGE_IDs,
    /// fields and the store's identity (`logger --journald`); only journald's own fields say who
    /// sent it. `log` leaves such an entry out, saying so, and `--untrusted` shows it, marked.
    @Test(.requires(.root))
    func entriesAnotherUserWroteUnderStreakdsNameAreLeftOutOrMarked() throws {
        try Journal.ensureRunning()
        let (s, id) = try Self.storeSandbox()
        let user = Self.user("forged")
        try Self.write([TestJournal.notification("at_risk", user: user, store: id)], user: user, total: 1, in: s)
        let forged = TestJournal.notification("streak_broken", user: user, message: "FORGED: pay here", store: id)
        let sent = run(
            [
                "/usr/bin/setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups", "/usr/bin/logger",
                "--journald",
            ],
            stdin: forged.joined(separator: "\n") + "\n")
        try #require(sent.code == 0, "\(sent)")
        let deadline = ContinuousClock.now + .seconds(20)
        while try jsonLines(s.run(["log", "--user", user, "--untrusted", "-o", "json"]).out).count < 2 {
            try #require(ContinuousClock.now < deadline, "the forged entry never became readable")
            usleep(100_000)
        }
        let plain = s.run(["log", "--user", user, "-o", "json"])
        #expect(plain.code == 0)
        let shown = try jsonLines(plain.out)
        #expect(shown.count == 1 && shown.first?["kind"] as? String == "at_risk", "\(plain)")
        // (journald adds _COMM only when it reads the sender's /proc entry before it exits.)
        #expect(plain.err.contains("left out 1 entry that streakd did not write (by uid 65534"), "\(plain.err)")
        #expect(plain.err.contains("--untrusted shows them"))

        let all = try jsonLines(s.run(["log", "--user", user, "--untrusted", "-o", "json"]).out)
        #expect(all.count == 2)
        let marked = try #require(all.first { $0["kind"] as? String == "streak_broken" })
        #expect(marked["trusted"] as? Bool == false && marked["uid"] as? Int == 65534)
        #expect(["logger", nil].contains(marked["comm"] as? String))
        #expect(all.first { $0["kind"] as? String == "at_risk" }?["trusted"] == nil)
        let short = s.run(["log", "--user", user, "--untrusted"]).out.split(separator: "\n")
        #expect(short.count == 2)
        #expect(short.last?.contains(" UNTRUSTED (uid 65534") == true, "\(short)")
        #expect(short.last?.contains(") streak_broken \(user)/daily 2026-11-21: FORGED: pay here") == true, "\(short)")
        #expect(short.first?.contains("UNTRUSTED") == false)
        let cat = s.run(["log", "--user", user, "--untrusted", "-o", "cat"]).out
        #expect(cat.contains("UNTRUSTED (uid 65534") && cat.contains(") FORGED: pay here"), "\(cat)")
    }

    /// Issue 31, item 6: a time past what a journal holds trapped (SIGILL) converting it.
    @Test func timesOutOfRangeAreUsageErrorsNotTraps() throws {
        let (s, _) = try Self.storeSandbox()
        let range = "use a time from 1970-01-01T00:00:00Z (@0) to 9999-12-31T23:59:59Z (@253402300799)"
        for (option, value) in [
            ("--since", "@99999999999999"), ("--until", "@9223372036854775807"), ("--since", "@99999999999999999999"),
            ("--until", "+31000y"), ("--since", "-60y"), ("--until", "@253402300800"),
        ] {
            let r = s.run(["log", option, value, "--utc"])
            #expect(r.code == 64, "\(option) \(value): \(r)")
            #expect(r.err == error("\(option): \"\(value)\" is out of range; \(range)"), "\(option) \(value)")
        }
        for (option, value) in [("--since", "@0"), ("--until", "@253402300799")] {
            let r = s.run(["log", option, value, "-q"])
            #expect(r.code == 0, "\(option) \(value): \(r)")
        }
    }
}
