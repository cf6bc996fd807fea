import Foundation
import StreakCore
import StreakDelivery
import StreakSQLite
import StreakStore
import StreakTestKit
import Testing

@testable import StreakJobs

@Suite(.fastTier) struct ZoneBookTests {
    @Test func zonesComeFromTZifTablesReadOnce() throws {
        let book = ZoneBook()
        let first = try book.zone("Europe/Berlin").get()
        let again = try book.zone("Europe/Berlin").get()
        #expect(first.rules is TransitionRules)
        #expect(first.rules === again.rules)
        #expect(book.fallbacks.isEmpty)
    }

    /// A directory holding `files` (path: bytes), removed afterwards by the caller.
    func directory(_ files: [String: [UInt8]]) throws -> String {
        let root = NSTemporaryDirectory() + "zonebook-\(UUID().uuidString)"
        for (path, bytes) in files {
            let full = root + "/" + path
            try FileManager.default.createDirectory(
                atPath: (full as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
            try Data(bytes).write(to: URL(fileURLWithPath: full))
        }
        return root
    }

    @Test func aFileTheReaderRefusesFallsBackToFoundation() throws {
        let cut = Array("TZif2".utf8) + [UInt8](repeating: 0, count: 10)
        let root = try directory(["Europe/Berlin": cut, "Mars/Olympus_Mons": cut, "Europe/Paris": Array("nope".utf8)])
        defer { try? FileManager.default.removeItem(atPath: root) }
        let book = ZoneBook(directory: root)
        let berlin = try book.zone("Europe/Berlin").get()
        #expect(berlin.rules is FoundationZoneRules)
        #expect(berlin.offset(at: RFC3339.parse("2027-06-10T00:00:00Z")!) == 7200)
        #expect(book.fallbacks == ["Europe/Berlin"])
        // Neither the reader nor Foundation knows it; not a TZif file; no file.
        for name in ["Mars/Olympus_Mons", "Europe/Paris", "Europe/Rome"] {
            guard case .failure(let e) = book.zone(name) else {
                Issue.record("\(name) accepted")
                continue
            }
            #expect(e.message.hasPrefix("unknown time zone"), "\(name)")
        }
    }
}
