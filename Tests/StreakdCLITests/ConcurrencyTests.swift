import Foundation
import StreakTestKit
import Testing

@Suite("concurrent processes on one SQLite store", .fastTier)
struct ConcurrencyTests {
    /// Four `streakd import`s at once, 2,000 check-ins each, 500 ids shared with the next file.
    @Test func fourImportersAtOnce() throws {
        let s = try Sandbox()
        s.addUser("u1", tz: "UTC")
        let now = Date(timeIntervalSince1970: 1_795_258_800)  // 2026-11-21T11:00:00Z
        let format = ISO8601DateFormatter()
        var paths: [String] = []
        var ids = Set<Int>()
        for p in 0..<4 {
            var text = ""
            for i in 0..<2000 {
                let n = p * 1500 + i
                ids.insert(n)
                text +=
                    checkinLine(format.string(from: now.addingTimeInterval(Double(-n * 7 * 60))), id: "ev\(n)") + "\n"
            }
            paths.append(try s.file("p\(p).jsonl", text))
        }
        #expect(format.string(from: now) == fixedNow)

        let children = try paths.map { try s.spawn(["import", $0, "-o", "json"]) }
        let results = children.map { $0.wait() }
        var imported = 0
        for r in results {
            #expect(r.code == 0, "\(r)")
            #expect(r.err == "")
            let o = try jsonObject(r.out)
            let i = try #require(o["imported"] as? Int)
            #expect(i + (o["duplicates"] as? Int ?? -1) == 2000)
            imported += i
        }
        #expect(imported == ids.count)
        let st = try s.statusObject()
        #expect(st["total_checkins"] as? Int == ids.count)
        #expect(ids.count == 6500)
    }

    /// SPEC §7: the SQLite file is "created on first use ... safe under concurrent
    /// processes". Several first uses at once race in the schema migration.
    @Test func concurrentFirstUseOfAFreshStore() throws {
        do {
            for round in 0..<4 {
                let s = try Sandbox()
                let children = try (0..<5).map { try s.spawn(["user", "add", "v\($0)", "--tz", "UTC"]) }
                for (i, r) in children.map({ $0.wait() }).enumerated() {
                    #expect(r.code == 0, "round \(round), process \(i): \(r)")
                }
                let list = s.run(["user", "list", "-o", "json"])
                #expect(list.out.split(separator: "\n").count == 5, "round \(round): \(list)")
            }
        }
    }
}
