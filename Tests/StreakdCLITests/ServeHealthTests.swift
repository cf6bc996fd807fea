import Foundation
import StreakTestKit
import Testing

/// `GET /v1/health` after the store is damaged under a running serve: SQLite reads only the pages
/// a query needs, so health's few rows may still read from its cache while every other request
/// meets the damage (503). Once a request has met it, health answers 503 too (SPEC §11: 503
/// when the store cannot be read), as `status --check` exits 74.
@Suite(
    "serve: health after damage", .fastTier, .requires(.program("/usr/bin/curl", package: "curl")),
    .enabled(if: !TestStore.postgres, "the damage of a SQLite file"))
struct ServeHealthTests {
    @Test func healthIsUnavailableOnceARequestMetDamage() throws {
        let s = try Sandbox()
        s.addUser("u1")
        #expect(s.run(["checkin", "u1", "--at", "2026-11-21T09:00:00Z"]).code == 0)
        let read = try ServeTests.token(s, "monitor", "read")
        let server = try Server(s, listen: "127.0.0.1:0")
        #expect(try server.request("GET", "/v1/health").status == 200)
        // 120 KiB of noise over the file, in place, as a failing disk might leave it.
        let file = try #require(FileHandle(forWritingAtPath: s.store))
        var noise = SplitMix64(state: 7)
        try file.write(contentsOf: Data((0..<120 * 1024).map { _ in UInt8(truncatingIfNeeded: noise.next()) }))
        try file.close()
        let streak = try server.request("GET", "/v1/users/u1/streaks/daily", token: read)
        #expect(streak.status == 503 && streak.body.contains("malformed"), "\(streak)")
        let health = try server.request("GET", "/v1/health")
        #expect(health.status == 503, "\(health)")
        let object = try jsonObject(health.body)
        #expect(object["status"] as? String == "unavailable", "\(health)")
        #expect((object["detail"] as? String)?.hasPrefix("a request found the store damaged: ") == true, "\(health)")
        server.stop()
    }
}
