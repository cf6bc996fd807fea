import Foundation
import InputGenerators
import StreakCore
import StreakStore
import StreakTestKit
import Testing

@testable import StreakJobs

/// Issue 17: every parser, fed generated and mutated input in this process (fast;
/// `ParserFuzzCLITests` sends a sample through the binary). None may trap; each
/// answers a value or an error for people: the right exit status, and a message
/// naming the line (in files) and the field. The seed is printed; set
/// STREAKD_FUZZ_SEED to replay a run.
@Suite(.fastTier) struct ParserFuzzTests {
    static let seed = Inputs.seed(ProcessInfo.processInfo.environment)
    static let now = RFC3339.parse(PlainCheckinLineTests.now)!

    init() { print("parser fuzz: seed \(Self.seed) (set STREAKD_FUZZ_SEED to replay)") }

    /// A problem of one record names its field, unless it is about the line as a whole.
    static func namesItsField(_ p: FieldProblem, lineLevel: [String]) -> Bool {
        !p.message.isEmpty && (!p.field.isEmpty || lineLevel.contains { p.message.contains($0) })
    }

    /// Every line of an import's error names the file and line, or is its closing count.
    static func expectFileMessage(_ message: String, file: String, tail: String, _ context: String) {
        let lines = message.split(separator: "\n").map(String.init)
        #expect(lines.last?.hasSuffix(tail) == true, "\(context): \(message)")
        for line in lines.dropLast() where !line.hasPrefix("... and ") {
            let rest = line.hasPrefix(file + ":") ? line.dropFirst(file.count + 1) : ""
            let number = rest.prefix { $0.isNumber }
            #expect(!number.isEmpty && rest.dropFirst(number.count).hasPrefix(": "), "\(context): \(line)")
        }
    }

    static func text(_ bytes: [UInt8]) -> String { String(decoding: bytes.filter { $0 != 10 }, as: UTF8.self) }

    static func file(_ bytes: [UInt8], _ ext: String) throws -> String {
        let path = NSTemporaryDirectory() + "streakd-fuzz-\(UUID().uuidString).\(ext)"
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        return path
    }

    @Test func checkinJSONLines() throws {
        var r = SplitMix64(state: Self.seed)
        var checker = try PlainCheckinLineTests.checker()
        var outcomes = [0, 0]
        for _ in 0..<3000 {
            let line = Self.text(Inputs.maybeMutated(Inputs.checkinLine(&r, now: Self.now.seconds), &r))
            let (quick, full) = try PlainCheckinLineTests.both(line, &checker)
            if let quick { #expect(quick == full, "\(line)") }
            outcomes[full == nil ? 1 : 0] += 1
            if case .failure(let p) = CheckinJSONLines.record(Substring(line)).flatMap({ checker.check($0) }) {
                #expect(Self.namesItsField(p, lineLevel: ["malformed JSON", "unknown field \"\""]), "\(line): \(p)")
            }
        }
        #expect(outcomes[0] > 300 && outcomes[1] > 300)
    }

    @Test func checkinCSVRows() throws {
        var r = SplitMix64(state: Self.seed &+ 1)
        var checker = try PlainCheckinLineTests.checker()
        for _ in 0..<300 {
            let csv = CheckinCSV(names: Inputs.csvHeader(&r))
            for _ in 0..<10 {
                let line = Self.text(
                    Inputs.maybeMutated(Inputs.csvRow(&r, columns: csv.names, now: Self.now.seconds), &r))
                if case .failure(let p) = csv.record(Substring(line)).flatMap({ checker.check($0) }) {
                    #expect(
                        Self.namesItsField(p, lineLevel: ["malformed CSV", "fields, but the header names"]),
                        "\(line): \(p)")
                    #expect(p.field.isEmpty || csv.names.contains(p.field), "\(line): \(p)")
                }
            }
        }
    }

    @Test func userImportLines() throws {
        var r = SplitMix64(state: Self.seed &+ 2)
        let (context, _) = try makeContext(now: PlainCheckinLineTests.now)
        for _ in 0..<2000 {
            let line = Self.text(Inputs.maybeMutated(Inputs.userLine(&r), &r))
            do {
                _ = try context.userRecord(Substring(line))
            } catch let p as FieldProblem {
                #expect(Self.namesItsField(p, lineLevel: ["malformed JSON", "unknown field \"\""]), "\(line): \(p)")
            }
        }
    }

    /// Whole files of mutated lines, bytes as they come (NULs, broken UTF-8, line
    /// breaks): what `import` and `user import` answer is a success or exit 65
    /// naming file and line.
    @Test func wholeFiles() throws {
        var r = SplitMix64(state: Self.seed &+ 3)
        let (context, _) = try makeContext(now: PlainCheckinLineTests.now)
        for user in Inputs.users { try context.addUser(id: user, tz: "Europe/Berlin", remindAt: nil, remind: true) }
        for n in 0..<60 {
            var bytes: [UInt8] = []
            let kind = n % 3
            let columns = Inputs.csvHeader(&r)
            if kind == 1 { bytes = Array((columns.joined(separator: ",") + "\n").utf8) }
            for _ in 0..<12 {
                let line =
                    kind == 0
                    ? Inputs.checkinLine(&r, now: Self.now.seconds)
                    : kind == 1 ? Inputs.csvRow(&r, columns: columns, now: Self.now.seconds) : Inputs.userLine(&r)
                bytes += (r.oneIn(4) ? Inputs.mutate(Array(line.utf8), &r) : Array(line.utf8)) + [10]
            }
            let path = try Self.file(bytes, kind == 1 ? "csv" : "jsonl")
            defer { try? FileManager.default.removeItem(atPath: path) }
            do {
                if kind == 2 {
                    try context.importUsers(path: path)
                } else {
                    try context.importCheckins(path: path, format: nil, skipInvalid: r.oneIn(2))
                }
            } catch let e as StreakdError {
                #expect(e.status == .dataError, "\(e.message)")
                let tail = kind == 2 ? "no user was added or changed" : "nothing was imported"
                Self.expectFileMessage(e.message, file: path, tail: kind == 2 ? tail : "", "file \(n)")
                #expect(e.message.contains(tail), "\(e.message)")
            }
        }
    }

    @Test func configurations() {
        var r = SplitMix64(state: Self.seed &+ 4)
        var valid = 0
        for _ in 0..<1500 {
            let text = String(decoding: Inputs.maybeMutated(Inputs.toml(&r), &r), as: UTF8.self)
            do {
                _ = try ConfigLoader.parse(text, file: "fuzz.toml")
                valid += 1
            } catch let e as StreakdError {
                #expect(e.status == .config, "\(text)")
                let rest = e.message.dropFirst("fuzz.toml:".count)
                let number = rest.prefix { $0.isNumber }
                #expect(
                    e.message.hasPrefix("fuzz.toml:") && !number.isEmpty
                        && rest.dropFirst(number.count).hasPrefix(": "),
                    "\(e.message)\n\(text)")
            } catch {
                Issue.record("not an error for people: \(error)\n\(text)")
            }
        }
        #expect(valid > 300)
    }

    /// `--at`, and RFC 3339 instants anywhere (`--now` takes the same parser).
    @Test func instants() throws {
        var r = SplitMix64(state: Self.seed &+ 5)
        let rules = CheckinRules(zones: ZoneBook(), now: Self.now, names: Context.checkinOptions)
        for _ in 0..<3000 {
            let text = String(
                decoding: Inputs.maybeMutated(Inputs.instant(&r, now: Self.now.seconds), &r), as: UTF8.self)
            if let instant = RFC3339.parse(text) {
                #expect(RFC3339.parse(instant.description) == instant, "\(text)")
            }
            let input = CheckinInput(user: "u1", streak: nil, at: text, tz: nil, id: nil)
            if case .failure(let p) = rules.check(input, userZone: { _ in "Europe/Berlin" }) {
                #expect(p.field == "--at", "\(text): \(p)")
            }
        }
    }

    /// `preview --until`.
    @Test func durations() throws {
        var r = SplitMix64(state: Self.seed &+ 6)
        let (context, _) = try makeContext(now: PlainCheckinLineTests.now)
        for _ in 0..<3000 {
            let text = String(
                decoding: Inputs.maybeMutated(
                    r.oneIn(4) ? Inputs.instant(&r, now: Self.now.seconds) : Inputs.duration(&r), &r),
                as: UTF8.self)
            if let seconds = DurationText.seconds(text) { #expect(seconds >= 0, "\(text)") }
            do {
                #expect(try context.untilInstant(text) >= context.now, "\(text)")
            } catch let e as StreakdError {
                #expect(e.status == .usage && e.message.hasPrefix("--until: "), "\(text): \(e.message)")
            }
        }
    }

    /// `checkin --meta k=v`.
    @Test func metaArguments() throws {
        var r = SplitMix64(state: Self.seed &+ 7)
        let rules = CheckinRules(zones: ZoneBook(), now: Self.now, names: Context.checkinOptions)
        for _ in 0..<2000 {
            let items = (0...r.below(3)).map { _ in
                String(decoding: Inputs.maybeMutated(Inputs.metaArgument(&r), &r).filter { $0 != 0 }, as: UTF8.self)
            }
            do {
                let meta = try Context.metadata(items)
                let input = CheckinInput(user: "u1", streak: nil, at: nil, tz: nil, id: nil, meta: meta)
                if case .failure(let p) = rules.check(input, userZone: { _ in "Europe/Berlin" }) {
                    #expect(p.field == "--meta", "\(items): \(p)")
                }
            } catch let e as StreakdError {
                // A value not of its option's form is a usage error (docs/RULES.md, issue 34).
                #expect(e.status == .usage && e.message.hasPrefix("--meta: "), "\(items): \(e.message)")
            }
        }
    }
}
