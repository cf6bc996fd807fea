import Foundation
import StreakCore
import StreakDelivery

/// Journal emission: `JournalSink.deliver` (unpaced, as with `[journal] burst = 0`) for N
/// `at_risk` notifications made beforehand, as a tick has them in hand; then what the journal
/// kept, counted by the run's streak id.
struct JournalEmission {
    let count: Int
    let run: String

    func notifications() -> [StreakDelivery.Notification] {
        (0..<count).map { i in
            let user = DataSet.id(i)
            let length = 1 + i % 365
            return StreakDelivery.Notification(
                kind: .atRisk, user: user, streak: run, localDate: LocalDate("2026-11-21")!,
                due: RFC3339.parse("2026-11-21T19:00:00Z")!, timezone: "Europe/Berlin",
                localDue: "2026-11-21T20:00:00+01:00", streakLength: length,
                message: "\(user): your streak \"\(run)\" (\(length) days) ends at midnight; check in before 20:00 …")
        }
    }

    /// Seconds for the loop, and the failed deliveries.
    func send() -> (Double, Int) {
        let sink = JournalSink(pacer: .unlimited)
        let all = notifications()
        var failed = 0
        let (_, seconds) = Measure.time {
            for n in all where sink.deliver(n) != .delivered { failed += 1 }
        }
        return (seconds, failed)
    }

    /// Entries of this run in the journal, counted until the number stops growing (journald
    /// writes asynchronously).
    func kept() throws -> Int {
        var last = -1
        for _ in 0..<40 {
            let p = Process()
            p.executableURL = URL(fileURLWithPath: "/usr/bin/journalctl")
            p.arguments = ["--no-pager", "-q", "-o", "cat", "--output-fields=STREAKD_STREAK", "STREAKD_STREAK=\(run)"]
            let pipe = Pipe()
            p.standardOutput = pipe
            try p.run()
            let data = pipe.fileHandleForReading.readDataToEndOfFile()
            p.waitUntilExit()
            let n = data.reduce(0) { $0 + ($1 == 10 ? 1 : 0) }
            if n == last && n > 0 { return n }
            last = n
            Thread.sleep(forTimeInterval: 0.5)
        }
        return last
    }
}
