import Foundation
import StreakCore
import StreakDelivery
import StreakStore
import StreakTestKit
import Synchronization
import Testing

@testable import StreakJobs

/// `[metrics] textfile` is replaced atomically (SPEC §13): a reader polling it while many ticks
/// rewrite it only ever reads a whole file.
@Suite(.fastTier) struct MetricsTextfileTests {
    /// Whether `text` is a whole metrics file: it ends with the last family's sample and a line
    /// break, and every line is a comment or `name{labels} value`.
    static func whole(_ text: String) -> Bool {
        guard text.hasSuffix("\n"), text.contains("\nstreakd_refill_duration_seconds ") else { return false }
        return text.split(separator: "\n").allSatisfy { line in
            line.hasPrefix("# ") || line.wholeMatch(of: #/streakd_[a-z_]+(\{[^}]*\})? [0-9.e+-]+/#) != nil
        }
    }

    @Test func aReaderPollingItNeverSeesAPartFile() throws {
        let folder = NSTemporaryDirectory() + "streakd-textfile-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let path = folder + "/streakd.prom"
        var config = Config()
        config.metricsTextfile = path
        config.hooks = (1...20).map { HookCommand(name: "h\($0)", argv: ["/bin/true"]) }
        let (c, _) = try makeContext(now: "2026-11-14T09:00:00Z", config: config)
        for u in 0..<5 {
            try c.addUser(id: "u\(u)", tz: "Europe/Berlin", remindAt: nil, remind: true)
        }
        // 300 runs: about 10 s on two loaded cores (1,000 took 31 s), the reader spinning beside them.
        let runs = 300
        let done = Atomic(false)
        let reads = Mutex((whole: 0, partial: [String]()))
        let reader = Thread {
            while !done.load(ordering: .acquiring) {
                guard let data = FileManager.default.contents(atPath: path) else { continue }
                let text = String(decoding: data, as: UTF8.self)
                reads.withLock { r in
                    if Self.whole(text) { r.whole += 1 } else if r.partial.count < 3 { r.partial.append(text) }
                }
            }
        }
        reader.start()
        let sink = MemorySink()
        let start = RFC3339.parse("2026-11-14T09:00:00Z")!
        let began = ContinuousClock.now
        for i in 0..<runs {
            let run = Context(
                store: c.store, config: c.config, now: start + Int64(i) * 900, zones: c.zones, printer: c.printer)
            if i % 96 == 0 {
                for u in 0..<5 {
                    try run.checkin(user: "u\(u)", streak: "daily", at: nil, tz: nil, eventID: nil, meta: [])
                }
            }
            try run.tick(delivery: Delivery(sinks: [sink]))
            run.writeMetricsTextfile()
        }
        done.store(true, ordering: .releasing)
        while reader.isExecuting { usleep(1000) }
        let elapsed = ContinuousClock.now - began
        let r = reads.withLock { $0 }
        #expect(r.partial.isEmpty, "a reader saw \(r.partial.count) part files, such as:\n\(r.partial.first ?? "")")
        #expect(r.whole >= runs / 10, "the reader read only \(r.whole) times in \(runs) runs")
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder) == ["streakd.prom"])
        print("MetricsTextfileTests: \(runs) ticks with the textfile in \(elapsed); \(r.whole) whole reads")

        // The reader does catch a file written in place (truncated, then written): the same text,
        // rewritten so, is seen in part.
        let text = try String(contentsOfFile: path, encoding: .utf8)
        let seen = Mutex((whole: 0, partial: 0))
        let stop = Atomic(false)
        let poller = Thread {
            while !stop.load(ordering: .acquiring) {
                let read = String(decoding: FileManager.default.contents(atPath: path) ?? Data(), as: UTF8.self)
                seen.withLock { if Self.whole(read) { $0.whole += 1 } else { $0.partial += 1 } }
            }
        }
        poller.start()
        for _ in 0..<runs {
            let fd = open(path, O_WRONLY | O_TRUNC)
            _ = text.utf8CString.withUnsafeBytes { write(fd, $0.baseAddress, $0.count - 1) }
            close(fd)
        }
        stop.store(true, ordering: .releasing)
        while poller.isExecuting { usleep(1000) }
        print("MetricsTextfileTests: written in place, \(seen.withLock { $0 }) whole and part reads")
        #expect(seen.withLock { $0.partial } > 0, "a file written in place was never seen in part")
    }

    /// `GET /metrics` answers OpenMetrics when `Accept` prefers it by its q-values, not whenever
    /// it names it (a client weighing the text format higher got OpenMetrics).
    @Test func acceptIsWeighedByItsQValues() {
        for (accept, open) in [
            (nil, false), ("*/*", false), ("text/plain", false),
            ("application/openmetrics-text", true),
            (
                "application/openmetrics-text;version=1.0.0;q=0.5,application/openmetrics-text;version=0.0.1;q=0.4,"
                    + "text/plain;version=0.0.4;q=0.3,*/*;q=0.2", true
            ),
            ("text/plain;version=0.0.4;q=0.5,application/openmetrics-text;version=1.0.0;q=0.1", false),
            ("application/openmetrics-text;q=0", false), ("Application/OpenMetrics-Text ; Q=0.9, */*;q=0.1", true),
        ] as [(String?, Bool)] {
            #expect(MetricsText.prefersOpenMetrics(accept) == open, "\(accept ?? "none")")
        }
    }
}
