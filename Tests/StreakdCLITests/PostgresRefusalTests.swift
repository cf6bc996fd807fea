import Foundation
import StreakTestKit
import Testing

/// Issue 31, item 2: what a PostgreSQL server refuses for good (a role without write rights, a
/// read-only connection or standby, a `search_path` without streakd's tables) is permanent, 77 or
/// 69 with the reason; never 75, which the units count as success.
@Suite(.fastTier, .requires(.postgres))
struct PostgresRefusalTests {
    /// A fresh database set up by its owner, with u1 and a week of check-ins, and a role of its own.
    func setUp() throws -> (s: Sandbox, url: String, role: String) {
        let s = try Sandbox()
        let url = try TestPostgres.freshDatabase()
        #expect(s.runBare(["user", "add", "u1", "--tz", "UTC", "--store", url]).code == 0)
        let role = "refused_" + String(UInt32.random(in: 0...UInt32.max), radix: 36)
        try TestPostgres.psql(url, "CREATE ROLE \(role) LOGIN")
        return (s, url, role)
    }

    func asRole(_ url: String, _ role: String, _ extra: String = "") -> String {
        url.replacingOccurrences(of: "user=postgres", with: "user=\(role)") + extra
    }

    @Test func aRoleWithoutWriteRightsIs77WithTheReason() throws {
        let (s, url, role) = try setUp()
        try TestPostgres.psql(url, "GRANT SELECT ON ALL TABLES IN SCHEMA public TO \(role)")
        let store = asRole(url, role)
        #expect(store != url)
        for args in [["tick"], ["checkin", "u1"], ["user", "add", "u2", "--tz", "UTC"], ["refill"]] {
            let r = s.runBare(args + ["--store", store])
            #expect(r.code == 77, "\(args): \(r)")
            #expect(r.err.contains("permission denied") && r.err.contains("not retried"), "\(args): \(r.err)")
        }
        // Reading is what it was granted.
        #expect(s.runBare(["status", "u1", "--store", store]).code == 0)
    }

    @Test func aReadOnlyConnectionIs69WithTheReason() throws {
        let (s, url, role) = try setUp()
        try TestPostgres.psql(
            url,
            """
            GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA public TO \(role);
            GRANT USAGE ON ALL SEQUENCES IN SCHEMA public TO \(role);
            ALTER ROLE \(role) SET default_transaction_read_only = on
            """)
        for args in [["tick"], ["checkin", "u1"], ["refill"]] {
            let r = s.runBare(args + ["--store", asRole(url, role)])
            #expect(r.code == 69, "\(args): \(r)")
            #expect(r.err.contains("read-only") && r.err.contains("primary"), "\(args): \(r.err)")
        }
    }

    @Test func aSearchPathWithoutTheSchemaIs69WithTheReason() throws {
        let (s, url, _) = try setUp()
        // The owner's own connection, looking in a schema that does not exist.
        let store = url + "&options=-csearch_path%3Dnowhere"
        for args in [["tick"], ["checkin", "u1"], ["status", "u1"]] {
            let r = s.runBare(args + ["--store", store])
            #expect(r.code != 75 && r.code != 0, "\(args): \(r)")
            #expect([69, 66].contains(r.code), "\(args): \(r)")
        }
        let tick = s.runBare(["tick", "--store", store])
        #expect(tick.err.contains("search_path"), "\(tick.err)")
    }
}
