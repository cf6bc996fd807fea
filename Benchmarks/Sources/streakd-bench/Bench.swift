import ArgumentParser
import Foundation
import StreakCore
import StreakRecompute

/// The streakd side of the benchmark suite (Benchmarks/run drives it). Each
/// measuring subcommand prints one JSON line: `measure`, `subject`, `seconds`,
/// `items`, and what it checked.
@main
struct Bench: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "streakd-bench",
        abstract: "Data generator and in-process measurements for Benchmarks/run.",
        subcommands: [Generate.self, Plan.self, Recompute.self, Journal.self, Exec.self, Report.self])
}

struct Generate: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Write the deterministic data set.")
    @Option var users = 1_000_000
    @Option var checkins = 7_000_000
    @Option var seed: UInt64 = 2026
    @Flag(help: "An evening when most streaks are at risk: runs of 5, 7 or 14 days ending yesterday.")
    var atRisk = false
    @Argument var directory: String

    func run() throws {
        let started = ContinuousClock.now
        try DataSet(users: users, checkins: checkins, seed: seed, atRisk: atRisk).write(to: directory)
        FileHandle.standardError.write(Data("generated \(directory) in \(ContinuousClock.now - started)\n".utf8))
    }
}

struct Plan: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Next reminder of every user and the due set of one quarter hour.")
    @Option(help: "The streakd store holding the users.") var store: String
    @Option(help: "The data directory (meta.json).") var data: String
    @Option var threads = 2

    func run() throws {
        let meta = try Measure.meta(data)
        let now = RFC3339.parse(meta["now"] as! String)!
        let quarter = RFC3339.parse(meta["quarter_start"] as! String)!
        let (users, loading) = try Measure.time { try Planning.load(store: store, now: now) }
        let (result, best, runs) = Measure.best(3) {
            Planning.plan(users, threads: threads, now: now, quarter: quarter)
        }
        Measure.emit([
            "measure": "planning", "subject": "streakd", "seconds": best, "items": users.zoneOf.count,
            "due": result.due, "checksum": result.checksum, "runs": runs, "threads": threads,
            "load_seconds": loading,
            "how": "Notices.reminderDue over TZif tables, users in memory (loading them from the store: load_seconds)",
        ])
    }
}

struct Recompute: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Every streak recomputed from its full history.")
    @Option(help: "The streakd store.") var store: String
    @Option(help: "The data directory (meta.json).") var data: String
    @Option var threads = 2

    func run() throws {
        let now = RFC3339.parse(try Measure.meta(data)["now"] as! String)!
        let job = Recomputation(store: store, now: now)
        let (t, best, runs) = try Measure.best(3) { try job.run(threads: threads) }
        Measure.emit([
            "measure": "recompute", "subject": "streakd", "seconds": best, "items": t.checkins, "streaks": t.streaks,
            "checksum": "\(t.current) \(t.longest)", "runs": runs, "threads": threads, "packed": t.packed,
            "how":
                "one pass over the schedule's packed histories (stale ones read from the tables), Engine.lengths per streak",
        ])
    }
}

struct Journal: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Journal entries through streakd's journal sink.")
    @Option var count = 200_000
    @Option(name: .customLong("run"), help: "A streak id ([a-z0-9_]) that marks this run's entries.")
    var runID: String

    func run() throws {
        let job = JournalEmission(count: count, run: runID)
        let (seconds, failed) = job.send()
        let kept = try job.kept()
        Measure.emit([
            "measure": "journal", "subject": "streakd", "seconds": seconds, "items": count, "kept": kept,
            "failed_sends": failed, "per_second": Double(count) / seconds,
            "how": "JournalSink.deliver (sd_journal_sendv), unpaced, notifications made beforehand",
        ])
    }
}

struct Exec: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Run a command, best of N fresh processes: wall, CPU and peak memory as one JSON line.")
    @Option var measure: String
    @Option var subject = "streakd"
    @Option var items = 0
    @Option var runs = 1
    @Option(help: "Before each run, copy this store file (unmeasured)...") var copy: String?
    @Option(help: "...to this path.") var to: String?
    @Option(help: "Before each run, this shell command (unmeasured): a fresh copy of a database.")
    var prepare: String?
    @Option(help: "Where the command's standard output goes.") var stdout = "/dev/null"
    @Flag(help: "Read its output from a pipe and note when the first line came (first_line_seconds).")
    var firstLine = false
    @Argument(parsing: .postTerminator) var command: [String]

    func run() throws {
        var all: [Child] = []
        for _ in 0..<runs {
            if let copy, let to { try Stores.copy(copy, to: to) }
            if let prepare {
                let p = try Child.run(["/bin/sh", "-c", prepare])
                guard p.status == 0 else { throw BenchError("\(prepare): exit \(p.status)") }
            }
            let c = try Child.run(command, stdout: stdout, firstLine: firstLine)
            guard c.status == 0 || c.status == 75 else {
                throw BenchError("\(command.joined(separator: " ")): exit \(c.status)")
            }
            all.append(c)
        }
        let best = all.min { $0.seconds < $1.seconds }!
        var fields = best.fields
        fields["measure"] = measure
        fields["subject"] = subject
        fields["items"] = items
        fields["runs"] = all.map(\.seconds)
        let sorted: [Double] = all.map(\.seconds).sorted()
        let median: Double = sorted[sorted.count / 2]
        fields["median_seconds"] = median
        fields["max_rss_mb"] = Double(all.map(\.maxRSSBytes).max()!) / 1_048_576
        let firsts = all.compactMap(\.firstLineSeconds)
        if !firsts.isEmpty {
            // The slowest first line of the runs: what a user may wait for.
            fields["first_line_seconds"] = firsts.max()!
            fields["first_line_runs"] = firsts
        }
        Measure.emit(fields)
    }
}

struct Report: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "The table of figures and ratios from the results file.")
    @Argument var results: String
    @Option(help: "Also write the table here (Markdown).") var markdown: String?

    func run() throws {
        let table = try ResultTable(path: results)
        print(table.text)
        if let markdown { try table.markdown.write(toFile: markdown, atomically: true, encoding: .utf8) }
        if !table.allMet { throw ExitCode(1) }
    }
}
