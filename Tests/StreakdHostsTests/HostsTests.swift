import Foundation
import StreakCore
import StreakTestKit
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// SPEC §7 on PostgreSQL: several hosts run the timers against one database; together they send
/// every notification at most once, split the due work, take over what a dead run left after its
/// lease, and decide by the database's clock.
@Suite(
    .serialized, .systemTier("several hosts: streakd processes in UTS namespaces on one PostgreSQL database"),
    .timeLimit(TestTier.systemLimit), .requires(.postgres, .root, .unshare))
struct HostsTests {
    /// Zones whose local 20:00 falls in the five hours of firings from 17:00Z (Moscow, Cairo,
    /// Berlin, London, Azores), and two whose does not (Kolkata, New York).
    static let zones = [
        "Europe/Moscow", "Africa/Cairo", "Europe/Berlin", "Europe/London", "Atlantic/Azores", "Asia/Kolkata",
        "America/New_York",
    ]

    static func firing(_ i: Int) -> String {
        let minutes = 17 * 60 + 15 * i
        return String(format: "2026-11-21T%02d:%02d:00Z", minutes / 60, minutes % 60)
    }

    /// 4 hosts × 20 firings at once over 10,000 users: the ledger holds exactly what `preview`
    /// announced, and the hook and the journal got each key once.
    @Test func fourHostsTwentyFiringsSendWhatPreviewAnnouncedOnce() throws {
        try Journal.ensureRunning()
        let h = try Hosts()
        try h.seed(
            users: 10_000, zones: Self.zones, today: "2026-11-21", at: "2026-11-21T16:45:00Z",
            days: { [5, 6, 7, 14][$0 % 4] }, checkedInToday: { $0 % 10 == 3 })
        // What is due before the window is settled first, by one host.
        let before = try h.run("h0", ["tick"], env: ["STREAKD_NOW": "2026-11-21T16:45:00Z"])
        #expect(before.code == 0, "\(before)")
        let preview = try h.run(
            "h0", ["preview", "--until", Self.firing(19), "-o", "json"], env: ["STREAKD_NOW": "2026-11-21T16:45:00Z"])
        let announced = try jsonLines(preview.out).map { $0["key"] as! String }.sorted()
        #expect(announced.count > 3000, "\(announced.count) announced")
        let config = try h.hookConfig()
        for i in 0..<20 {
            let runs = try (1...4).map {
                try h.start("h\($0)", ["tick", "--config", config], env: ["STREAKD_NOW": Self.firing(i)])
            }
            for r in runs.map({ $0.wait() }) { #expect(r.code == 0, "\(r)") }
        }
        let after = try h.ledgerKeys(dueAfter: RFC3339.parse("2026-11-21T16:45:00Z")!.seconds)
        #expect(after == announced, "the ledger holds what preview announced")
        let hooked = try h.hookLines()
        let keys = hooked.map(\.key)
        #expect(keys.count == Set(keys).count, "no key twice in the hook's log")
        #expect(keys.sorted() == announced, "no key missing in the hook's log")
        let journal = try Journal.entries(["STREAKD_STREAK=\(h.streak)"], count: announced.count + before.out.count)
        let journalKeys = journal.compactMap { $0["STREAKD_KEY"] as? String }.filter { Set(announced).contains($0) }
        #expect(journalKeys.count == Set(journalKeys).count && journalKeys.sorted() == announced)
    }

    /// Ticks killed at random moments, then runs until nothing is pending: no key lost; a key
    /// repeated only for a delivery in flight at a kill (at most one per kill for the hook).
    @Test func fiftyKilledTicksLoseNothing() throws {
        try Journal.ensureRunning()
        let h = try Hosts()
        try h.seed(users: 1500, zones: ["UTC"], today: "2026-11-21", at: "2026-11-21T16:45:00Z", days: { _ in 7 })
        let config = try h.hookConfig(pause: "0.002", timeout: 1, lease: 5)
        let now = ["STREAKD_NOW": "2026-11-21T20:00:00Z"]
        var random = SplitMix64(state: 17)
        var kills = 0
        for k in 0..<50 {
            let child = try h.start("h\(k % 2)", ["tick", "--config", config], env: now)
            usleep(UInt32.random(in: 30_000...400_000, using: &random))
            if child.process.isRunning {
                kill(child.process.processIdentifier, SIGKILL)
                kills += 1
            }
            _ = child.wait()
        }
        // Runs until nothing is pending (another host's dead run: after its lease, 5 s + 1 s).
        var rounds = 0
        let deadline = ContinuousClock.now + .seconds(90)
        while ContinuousClock.now < deadline {
            rounds += 1
            let r = try h.run("h\(rounds % 2)", ["tick", "--config", config], env: now)
            let pending = try h.sql("SELECT count(*) FROM deliveries WHERE state = 'pending'")
            if r.code == 0 && pending == "0" { break }
            usleep(500_000)
        }
        let expected = (0..<1500).map { "at_risk/u\($0)/\(h.streak)/2026-11-21" }
        let keys = try h.hookLines().map(\.key)
        let repeats = keys.count - Set(keys).count
        #expect(Set(keys) == Set(expected), "no key lost")
        #expect(repeats <= kills, "at most one repeat (the delivery in flight) per kill")
        #expect(try h.sql("SELECT count(*) FROM deliveries WHERE state <> 'delivered'") == "0")
        let journal = try Journal.entries(["STREAKD_STREAK=\(h.streak)"], count: 1500)
        let journalKeys = journal.compactMap { $0["STREAKD_KEY"] as? String }
        #expect(Set(journalKeys) == Set(expected), "every key in the journal")
    }

    /// A stopped owner keeps its deliveries while its lease lasts, loses them after, and once it
    /// resumes starts no delivery (the hook log says when each hook began).
    @Test func aStoppedOwnerIsTakenOverAfterItsLeaseAndThenDeliversNothing() throws {
        try Journal.ensureRunning()
        let h = try Hosts()
        try h.seed(users: 150, zones: ["UTC"], today: "2026-11-21", at: "2026-11-21T16:45:00Z", days: { _ in 7 })
        // An unpaced journal: a paced entry may wait for the pacer's interval, which the lease covers.
        // The lease: 5 s, plus the 4 s a hook may take with its time-out and grace.
        let config = try h.hookConfig(pause: "0.05", timeout: 2, lease: 5, extra: "[journal]\nburst = 0\n")
        let now = ["STREAKD_NOW": "2026-11-21T20:00:00Z"]
        let owner = try h.start("h1", ["tick", "--config", config], env: now)
        try h.waitForHooks(20, of: owner)
        kill(owner.process.processIdentifier, SIGSTOP)
        let stopped = ContinuousClock.now
        let early = try h.run("h2", ["tick", "--config", config], env: now)
        #expect(early.err.contains(" 0 retried"), "no take-over while the lease lasts: \(early)")
        #expect(ContinuousClock.now - stopped < .seconds(8), "the first try came within the lease")
        while ContinuousClock.now - stopped < .seconds(10) { usleep(100_000) }
        let late = try h.run("h2", ["tick", "--config", config], env: now)
        #expect(!late.err.contains(" 0 retried"), "taken over after the lease: \(late)")
        let resumedAt = Int64(Date().timeIntervalSince1970 * 1e9)
        kill(owner.process.processIdentifier, SIGCONT)
        let resumed = owner.wait()
        // Whatever the take-over left (a hook that failed under load) goes on the next runs.
        for _ in 0..<10 where try h.sql("SELECT count(*) FROM deliveries WHERE state = 'pending'") != "0" {
            _ = try h.run("h2", ["tick", "--config", config], env: now)
        }
        let lines = try h.hookLines()
        let byOwner = lines.filter { $0.host == "h1" }
        let after = byOwner.filter { $0.started >= resumedAt }.map {
            "\($0.key) (hook pid's parent \($0.pid)) \(Double($0.started - resumedAt) / 1e9) s after the resume"
        }
        #expect(after.isEmpty, "the resumed owner started no hook: \(after); \(resumed)")
        #expect(Set(lines.map(\.key)).count == 150)
        #expect(lines.count - 150 <= 1, "a repeat only for the delivery in flight at the stop")
    }

    /// The database connection killed, or the server restarted, in the middle of a tick: the run
    /// ends within seconds (0 when it could write its outcomes again in time, or 75; never a hang)
    /// and the next one finishes without a repeat. The server stopped for good ("down"): the run
    /// ends with 75 once its outcome's write has been tried for 15 s; after the restart the next
    /// run finishes, repeating at most the delivery whose outcome could not be written.
    @Test(arguments: ["terminate", "restart", "down"]) func losingTheDatabaseMidTickRepairs(how: String) throws {
        try Journal.ensureRunning()
        let cluster = try PostgresCluster.start()
        defer { cluster.discard() }
        let h = try Hosts(url: cluster.url)
        try h.seed(users: 200, zones: ["UTC"], today: "2026-11-21", at: "2026-11-21T16:45:00Z", days: { _ in 7 })
        let config = try h.hookConfig(pause: "0.02", timeout: 1, lease: 5)
        let now = ["STREAKD_NOW": "2026-11-21T20:00:00Z"]
        let run = try h.start("h1", ["tick", "--config", config], env: now)
        try h.waitForHooks(30, of: run)
        let cut = ContinuousClock.now
        if how == "terminate" {
            _ = try h.sql(
                "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE application_name = 'streakd'")
        } else {
            try cluster.stop()
            if how == "restart" { try cluster.restart() }
        }
        let ended = run.wait()
        let took = ContinuousClock.now - cut
        if how == "down" {
            #expect(ended.code == 75, "\(ended)")
            try cluster.restart()
        } else {
            #expect([0, 75].contains(ended.code), "\(ended)")
        }
        #expect(took < .seconds(25), "ended \(took) after the cut")
        var rounds = 0
        while rounds < 10 {
            rounds += 1
            let r = try h.run("h1", ["tick", "--config", config], env: now)
            if r.code == 0, try h.sql("SELECT count(*) FROM deliveries WHERE state = 'pending'") == "0" { break }
            usleep(500_000)
        }
        let keys = try h.hookLines().map(\.key)
        let repeats = keys.count - Set(keys).count
        #expect(Set(keys).count == 200 && repeats <= (how == "down" ? 1 : 0), "every key once: \(keys.count) lines")
    }

    /// Eight hosts using a new database at once: one schema, every command done.
    @Test func eightFirstUsesMakeOneSchema() throws {
        let h = try Hosts()
        let runs = try (0..<8).map { try h.start("h\($0)", ["user", "add", "v\($0)", "--tz", "UTC"]) }
        for r in runs.map({ $0.wait() }) { #expect(r.code == 0, "\(r)") }
        // Each migration applied once (their number grows with the schema: 11 today).
        let applied = try h.sql("SELECT count(*), count(DISTINCT name) FROM schema_migrations").split(separator: "|")
        #expect(applied.count == 2 && applied[0] == applied[1] && Int(applied[0]) ?? 0 >= 11, "\(applied)")
        #expect(try h.sql("SELECT count(*) FROM users") == "8")
    }

    /// Two hosts refilling at once add one freeze per streak, and notify once.
    @Test func twoRefillsAtOnceAddOneFreeze() throws {
        try Journal.ensureRunning()
        let h = try Hosts()
        // Stored a month ago; a 3-day streak took its one freeze on the day after.
        try h.seed(users: 40, zones: ["UTC"], today: "2026-10-20", at: "2026-10-20T12:00:00Z", days: { _ in 3 })
        let now = ["STREAKD_NOW": "2026-11-21T18:00:00Z"]
        let runs = try (1...2).map { try h.start("h\($0)", ["refill"], env: now) }
        for r in runs.map({ $0.wait() }) { #expect(r.code == 0, "\(r)") }
        #expect(try h.sql("SELECT count(*) FROM freeze_events WHERE kind = 'refill'") == "40")
        #expect(try h.sql("SELECT count(*) FROM notifications WHERE kind = 'freeze_refilled'") == "40")
    }

    /// Hosts whose clocks are ten minutes off either way decide alike (the database's clock), and
    /// are warned.
    @Test(.requires(.faketime))
    func skewedHostClocksDecideAlike() throws {
        let h = try Hosts()
        let today = String(ISO8601DateFormatter().string(from: Date()).prefix(10))
        try h.seed(
            users: 30, zones: ["UTC"], today: today, at: ISO8601DateFormatter().string(from: Date()), remindAt: "00:00",
            days: { _ in 7 })
        let ahead = try h.run(
            "h1", ["tick", "--dry-run", "-o", "json"], env: ["FAKETIME": "+10m", "LD_PRELOAD": faketimeLibrary])
        let behind = try h.run(
            "h2", ["tick", "--dry-run", "-o", "json"], env: ["FAKETIME": "-10m", "LD_PRELOAD": faketimeLibrary])
        #expect(ahead.code == 0 && behind.code == 0, "\(ahead)\n\(behind)")
        #expect(!ahead.out.isEmpty && ahead.out == behind.out, "identical decisions")
        #expect(ahead.err.contains("ahead of the store's"), "\(ahead.err)")
        #expect(behind.err.contains("behind the store's"), "\(behind.err)")
    }
}

let faketimeLibrary = "/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1"

func jsonLines(_ text: String) throws -> [[String: Any]] {
    try text.split(separator: "\n").map { try JSONSerialization.jsonObject(with: Data($0.utf8)) as! [String: Any] }
}
