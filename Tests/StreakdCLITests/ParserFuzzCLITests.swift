import Foundation
import InputGenerators
import StreakCore
import StreakTestKit
import Testing

/// Issue 17: a sample of generated and mutated input through the built binary,
/// every parser a command line reaches (`ParserFuzzTests` sends many more
/// through the parsers in-process). Each run ends with 0, or 64/65/78 and a
/// message naming the line and field, or the option; never a trap.
@Suite("parser fuzz, through the binary", .fastTier, .serialized)
struct ParserFuzzCLITests {
    static let seed = Inputs.seed(ProcessInfo.processInfo.environment)
    static let now = RFC3339.parse(fixedNow)!.seconds

    /// Problems about a line as a whole, which name no field.
    static let lineLevel = [
        "malformed JSON", "malformed CSV", "invalid UTF-8", "bytes long", "fields, but the header",
        "unknown field \"\"",
        "a NUL byte", "the line goes on", "header",
    ]

    /// An import's error: each problem names file and line, and its field unless it is about the line.
    static func expectProblems(_ r: RunResult, file: String, _ what: String) {
        #expect([0, 65].contains(r.code), "\(what): \(r)")
        guard r.code == 65 else { return }
        let lines = r.err.split(separator: "\n").map(String.init)
        #expect(lines.first?.hasPrefix("streakd: error: \(file):") == true, "\(what): \(r.err)")
        for line in lines.dropLast() where !line.hasPrefix("... and ") {
            let rest = line.replacingOccurrences(of: "streakd: error: ", with: "").dropFirst(file.count + 1)
            let number = rest.prefix { $0.isNumber }
            #expect(!number.isEmpty && rest.dropFirst(number.count).hasPrefix(": "), "\(what): \(line)")
            #expect(
                rest.contains(#": field ""#) || lineLevel.contains { rest.contains($0) },
                "\(what): names no field: \(line)")
        }
        #expect(lines.last?.contains("nothing was imported") == true || lines.last?.contains("no user was") == true)
    }

    /// An option's error names the option (ours), or is the argument parser's usage error.
    static func expectOption(_ r: RunResult, _ option: String, codes: [Int32], _ what: String) {
        #expect(codes.contains(r.code), "\(what): \(r)")
        guard r.code != 0 else { return }
        #expect(r.err.hasPrefix("streakd: error: "), "\(what): \(r.err)")
    }

    static func argument(_ bytes: [UInt8]) -> String { String(decoding: bytes.filter { $0 != 0 }, as: UTF8.self) }

    @Test func importsAndConfigurations() throws {
        print("parser fuzz through the binary: seed \(Self.seed) (set STREAKD_FUZZ_SEED to replay)")
        var r = SplitMix64(state: Self.seed &+ 100)
        let s = try Sandbox()
        for user in Inputs.users { s.addUser(user) }
        for n in 0..<21 {
            let kind = n % 7 < 4 ? 0 : n % 7 < 6 ? 1 : 2  // JSON lines, CSV, users
            let columns = Inputs.csvHeader(&r)
            var bytes = kind == 1 ? Array((columns.joined(separator: ",") + "\n").utf8) : []
            for _ in 0..<20 {
                let line =
                    kind == 0
                    ? Inputs.checkinLine(&r, now: Self.now)
                    : kind == 1 ? Inputs.csvRow(&r, columns: columns, now: Self.now) : Inputs.userLine(&r)
                bytes += (r.oneIn(2) ? Inputs.mutate(Array(line.utf8), &r) : Array(line.utf8)) + [10]
            }
            let path = try s.file("f\(n).\(kind == 1 ? "csv" : "jsonl")", bytes: bytes)
            let run = kind == 2 ? s.run(["user", "import", path]) : s.run(["import", path])
            Self.expectProblems(run, file: path, "file \(n)")
        }
        for n in 0..<30 {
            let path = try s.file("c\(n).toml", bytes: Inputs.maybeMutated(Inputs.toml(&r), &r))
            let run = s.run(["config", "check", "--config", path])
            #expect([0, 78].contains(run.code), "config \(n): \(run)")
            if run.code == 78 {
                let rest = run.err.dropFirst("streakd: error: \(path):".count)
                #expect(run.err.hasPrefix("streakd: error: \(path):") && rest.first?.isNumber == true, "\(run.err)")
            }
        }
    }

    @Test func options() throws {
        var r = SplitMix64(state: Self.seed &+ 101)
        let s = try Sandbox()
        s.addUser()
        for _ in 0..<20 {
            let at = Self.argument(Inputs.maybeMutated(Inputs.instant(&r, now: Self.now), &r))
            Self.expectOption(s.run(["checkin", "u1", "--at=\(at)"]), "--at", codes: [0, 64, 65], "--at \(at)")
            let now = Self.argument(Inputs.maybeMutated(Inputs.instant(&r, now: Self.now), &r))
            Self.expectOption(s.run(["config", "check", "--now=\(now)"]), "--now", codes: [0, 64], "--now \(now)")
            let meta = (0...r.below(2)).map { _ in Self.argument(Inputs.maybeMutated(Inputs.metaArgument(&r), &r)) }
            Self.expectOption(
                s.run(["checkin", "u1"] + meta.map { "--meta=\($0)" }), "--meta", codes: [0, 64, 65], "--meta \(meta)")
        }
        // preview --until: a horizon of up to two weeks (a longer one is issue 17's bounded
        // horizon, and slow on purpose of nothing here).
        var sent = 0
        while sent < 20 {
            let until = Self.argument(
                Inputs.maybeMutated(r.oneIn(4) ? Inputs.instant(&r, now: Self.now) : Inputs.duration(&r), &r))
            let horizon = DurationText.seconds(until) ?? RFC3339.parse(until).map { $0.seconds - Self.now } ?? 0
            guard horizon <= 14 * 86400 else { continue }
            sent += 1
            Self.expectOption(s.run(["preview", "--until=\(until)"]), "--until", codes: [0, 64], "--until \(until)")
        }
    }
}
