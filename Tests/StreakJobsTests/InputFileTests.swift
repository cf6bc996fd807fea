import Foundation
import StreakDelivery
import StreakSQLite
import StreakStore
import StreakTestKit
import Testing

@testable import StreakJobs

/// `InputFile` reads in chunks; its lines must be those of the whole file split
/// at once (the reader it replaced, kept here as the oracle), wherever the
/// chunk edges fall.
@Suite(.fastTier) struct InputFileTests {
    /// What the whole-file reader made of `bytes`: every line's number, and its text or problem.
    static func oracle(_ bytes: [UInt8]) -> [(number: Int, text: String?, problem: String?)] {
        var lines: [(Int, String?, String?)] = []
        for raw in bytes.split(separator: 10, omittingEmptySubsequences: false) {
            let number = lines.count + 1
            if raw.count > InputFile.maxLine {
                lines.append((number, nil, "the line is \(raw.count) bytes long; at most \(InputFile.maxLine)"))
            } else if var text = String(validating: raw, as: UTF8.self) {
                if text.hasSuffix("\r") { text.removeLast() }
                if number == 1 && text.hasPrefix("\u{FEFF}") { text.removeFirst() }
                lines.append((number, text, nil))
            } else {
                lines.append((number, nil, "invalid UTF-8; the file must be UTF-8 text"))
            }
        }
        if let last = lines.last, last.1?.isEmpty == true { lines.removeLast() }
        return lines
    }

    static func read(_ bytes: [UInt8], chunk: Int) throws -> [(number: Int, text: String?, problem: String?)] {
        let path = NSTemporaryDirectory() + "streakd-input-\(UUID().uuidString)"
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        defer { try? FileManager.default.removeItem(atPath: path) }
        let file = try InputFile(path, chunk: chunk)
        var lines: [(Int, String?, String?)] = []
        while let line = try file.next() {
            lines.append((line.number, line.problem == nil ? String(line.string) : nil, line.problem))
        }
        return lines
    }

    static func expectSame(_ bytes: [UInt8], chunk: Int, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let got = try read(bytes, chunk: chunk)
        let want = oracle(bytes)
        #expect(got.count == want.count, "chunk \(chunk)", sourceLocation: sourceLocation)
        for (g, w) in zip(got, want) where g.number != w.number || g.text != w.text || g.problem != w.problem {
            Issue.record("chunk \(chunk): line \(g.number) \(g) is not \(w)", sourceLocation: sourceLocation)
            return
        }
    }

    @Test func chunkEdgesFallAnywhere() throws {
        let text =
            "\u{FEFF}user,at\r\nu1,2026-11-20T10:00:00Z\r\n\n  \r\nü€𝄞,x\r\n"
            + "a\r\r\nb\n\r\n\u{FEFF}kept\nlast without a break"
        let invalid: [UInt8] = Array("ok\n".utf8) + [0xE2, 0x82] + Array("\nafter\n".utf8) + [0xFF, 0x0D, 0x0A]
        for bytes in [Array(text.utf8), invalid, Array("x\n".utf8), [], [10], [13], [0xEF, 0xBB, 0xBF], [10, 10]] {
            for chunk in 1...9 { try Self.expectSame(bytes, chunk: chunk) }
        }
    }

    @Test func realChunksSplitALineACharacterAndACRLF() throws {
        let chunk = 1 << 20
        var bytes: [UInt8] = []
        /// Lines of filler up to `end`, the last one ending there.
        func fill(upTo end: Int) {
            while end - bytes.count > 2000 { bytes += [UInt8](repeating: 120, count: 999) + [10] }
            bytes += [UInt8](repeating: 120, count: end - bytes.count - 1) + [10]
        }
        // A line across the first edge; "€" (3 bytes) across the second; "\r" ending the
        // third chunk and its "\n" starting the fourth.
        fill(upTo: chunk - 10)
        bytes += Array("across the first edge\n".utf8)
        fill(upTo: 2 * chunk - 5)
        bytes += Array("abcd€\n".utf8)
        fill(upTo: 3 * chunk - 4)
        bytes += Array("abc\r\nend\r\n".utf8)
        #expect(bytes[(2 * chunk - 1)...(2 * chunk + 1)] == ArraySlice(Array("€".utf8)))
        #expect(bytes[3 * chunk - 1] == 13 && bytes[3 * chunk] == 10)
        try Self.expectSame(bytes, chunk: chunk)
        let texts = try Self.read(bytes, chunk: chunk).compactMap(\.text).filter { !$0.hasPrefix("x") }
        #expect(texts == ["across the first edge", "abcd€", "abc", "end"])
    }

    @Test func longLinesAreCountedNotHeld() throws {
        let long = [UInt8](repeating: 65, count: 3 * InputFile.maxLine + 5)
        let exact = [UInt8](repeating: 66, count: InputFile.maxLine)
        for bytes in [
            long + [10] + Array("next\n".utf8), exact + [10] + exact + [13, 10], Array("a\n".utf8) + long,
            exact + [13, 10],
        ] {
            for chunk in [1000, 4096, 1 << 16, 1 << 20] { try Self.expectSame(bytes, chunk: chunk) }
        }
        let lines = try Self.read(long + [10] + Array("next\n".utf8), chunk: 4096)
        #expect(lines.map(\.problem) == ["the line is 196613 bytes long; at most 65536", nil])
        #expect(lines.map(\.number) == [1, 2])
    }

    @Test func randomBytesAtRandomChunks() throws {
        var random = SystemRandomNumberGenerator()
        let alphabet: [[UInt8]] = [
            [10], [13], [13, 10], [32], [65], [0xEF, 0xBB, 0xBF], [0xC3, 0xBC], [0xFF], [0xE2, 0x82],
        ]
        for _ in 0..<200 {
            let bytes = (0..<Int.random(in: 0...40, using: &random)).flatMap { _ in
                alphabet.randomElement(using: &random)!
            }
            try Self.expectSame(bytes, chunk: Int.random(in: 1...8, using: &random))
        }
    }

    @Test func recordsSkipBlankLinesAndBatchesStayValid() throws {
        let path = NSTemporaryDirectory() + "streakd-input-\(UUID().uuidString)"
        let text = (1...500).map { $0 % 7 == 0 ? " \t" : "line \($0)" }.joined(separator: "\n") + "\n"
        try Data(text.utf8).write(to: URL(fileURLWithPath: path))
        defer { try? FileManager.default.removeItem(atPath: path) }
        let file = try InputFile(path, chunk: 100)
        #expect(try file.estimatedLines() ?? 0 > 300)
        var lines: [InputFile.Line] = []
        var seen: [String] = []
        while try file.nextRecords(into: &lines, max: 64) { seen += lines.map { "\($0.number):\($0.string)" } }
        #expect(seen == (1...500).filter { $0 % 7 != 0 }.map { "\($0):line \($0)" })
    }

    /// No text holds a NUL byte, and no file of lines a line of over 16 MiB: reading stops
    /// there, wherever the chunk edges fall, naming the line.
    @Test func notTextStopsTheReading() throws {
        let long = [UInt8](repeating: 97, count: InputFile.maxCounted + 2)
        for (bytes, message) in [
            (Array("a\nb\u{0}c\nd\n".utf8), "2: a NUL byte"),
            (Array("a\n\n".utf8) + [UInt8](repeating: 98, count: 3 * InputFile.maxLine) + [0], "3: a NUL byte"),
            (Array("ok\n".utf8) + long, "2: the line goes on for over 16 MiB"),
            (Array("ok\n".utf8) + long + [10], "2: the line goes on for over 16 MiB"),
        ] {
            for chunk in [4096, 1 << 20] {
                do {
                    _ = try Self.read(bytes, chunk: chunk)
                    Issue.record("read to the end: \(message)")
                } catch let stop as InputFile.NotText {
                    #expect(stop.message.contains(":\(message)"), "\(stop.message)")
                }
            }
        }
    }
}
