import Foundation
import StreakTestKit
import Testing

/// SPEC §5 and issue 3: 100,000 reminders due in one `tick` are all readable from the journal
/// afterwards, under journald's default rate limit (which kept 37,500 of an unpaced burst).
/// Takes about six minutes: the pacing (9,500 entries per 30 s) is most of it.
@Suite("the 100,000-reminder tick")
struct BurstTests {
    @Test func aHundredThousandRemindersInOneTickAllReachTheJournal() throws {
        try Journal.ensureRunning()
        let count = 100_000
        let s = try Sandbox()
        let streak = "burst_" + String(UUID().uuidString.prefix(8)).lowercased()
        var users = ""
        var checkins = ""
        users.reserveCapacity(count * 40)
        checkins.reserveCapacity(count * 5 * 60)
        for i in 0..<count {
            users += #"{"user":"b\#(i)","tz":"UTC"}"# + "\n"
            for d in 16...20 {
                checkins += #"{"user":"b\#(i)","streak":"\#(streak)","at":"2026-11-\#(d)T10:00:00Z"}"# + "\n"
            }
        }
        #expect(s.run(["user", "import", try s.file("users.jsonl", users)]).code == 0)
        #expect(s.run(["import", try s.file("checkins.jsonl", checkins)]).code == 0)
        s.now = "2026-11-21T20:00:00Z"

        let child = try s.spawn(["tick"])
        let unit = UnitCgroup.enter(pid: child.process.processIdentifier, name: "streakd-burst-\(streak).service")
        let r = child.wait()
        unit?.leave()
        #expect(r.code == 0, "\(r.err.suffix(500))")
        #expect(r.err.contains("\(count) sent, 0 expired; \(count) delivered, 0 failed"), "\(r.err.suffix(500))")
        let keys = Journal.distinctValues(of: "STREAKD_KEY", "STREAKD_STREAK=\(streak)", expected: count)
        print(
            "burst: \(keys.count) of \(count) at_risk entries readable; rate limiter in effect: "
                + (unit.map { "yes (\($0.directory))" } ?? "unknown (cgroup not moved)"))
        #expect(keys.count == count)
    }
}

/// journald rate-limits only clients whose cgroup names a unit. Under a systemd that is not PID 1
/// (as here) processes run in the root cgroup, which it never limits: to put the pacer against
/// the real limiter, the process moves into a cgroup named like a service. Only from the root
/// cgroup v2 path, and only where it may.
struct UnitCgroup {
    let directory: String
    let root: String
    let pid: Int32

    static func enter(pid: Int32, name: String) -> UnitCgroup? {
        guard
            let line = try? String(contentsOfFile: "/proc/\(pid)/cgroup", encoding: .utf8)
                .split(separator: "\n").first(where: { $0.hasPrefix("0::") }),
            line.dropFirst(3) == "/"
        else { return nil }
        guard
            let root = ["/sys/fs/cgroup/unified", "/sys/fs/cgroup"].first(where: {
                FileManager.default.fileExists(atPath: "\($0)/cgroup.procs")
            })
        else { return nil }
        let directory = "\(root)/\(name)"
        do {
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: false)
            try "\(pid)\n".write(toFile: "\(directory)/cgroup.procs", atomically: false, encoding: .utf8)
        } catch {
            rmdir(directory)
            return nil
        }
        return UnitCgroup(directory: directory, root: root, pid: pid)
    }

    /// Removes the cgroup (the process has ended, or moves back to the root).
    func leave() {
        try? "\(pid)\n".write(toFile: "\(root)/cgroup.procs", atomically: false, encoding: .utf8)
        rmdir(directory)
    }
}
