import ArgumentParser
import Foundation
import StreakCore

/// The streakd side of the benchmark suite (Benchmarks/run drives it). Each
/// measuring subcommand prints one JSON line: `measure`, `subject`, `seconds`,
/// `items`, and what it checked.
@main
struct Bench: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "streakd-bench",
        abstract: "Data generator and in-process measurements for Benchmarks/run.",
        subcommands: [Generate.self, Plan.self, Recompute.self])
}

struct Generate: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Write the deterministic data set.")
    @Option var users = 1_000_000
    @Option var checkins = 7_000_000
    @Option var seed: UInt64 = 2026
    @Argument var directory: String

    func run() throws {
        let started = ContinuousClock.now
        try DataSet(users: users, checkins: checkins, seed: seed).write(to: directory)
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
        let (users, loading) = try Measure.time { try Planning.load(store: store) }
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
            "checksum": "\(t.current) \(t.longest)", "runs": runs, "threads": threads,
            "how": "one ordered pass over the store's covering indexes, Engine.evaluate per streak",
        ])
    }
}
