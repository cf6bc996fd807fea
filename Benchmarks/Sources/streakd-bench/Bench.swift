import ArgumentParser
import Foundation

/// The streakd side of the benchmark suite (Benchmarks/run drives it). Each
/// measuring subcommand prints one JSON line: `measure`, `subject`, `seconds`,
/// `items`, and what it checked.
@main
struct Bench: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "streakd-bench",
        abstract: "Data generator and in-process measurements for Benchmarks/run.",
        subcommands: [Generate.self])
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
