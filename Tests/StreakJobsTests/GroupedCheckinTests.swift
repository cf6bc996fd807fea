import Foundation
import StreakCore
import StreakPostgres
import StreakSQLite
import StreakStore
import StreakTestKit
import Synchronization
import Testing

@testable import StreakJobs

/// The API's check-ins that wait together are stored as one step (`WriteGroups.run`,
/// `storeCheckins`): each answered byte for byte as if they had come one after another, an id
/// given twice in one group stored once; on PostgreSQL, groups of the same users at once (two
/// hosts) neither deadlock nor store anything twice.
@Suite(.fastTier) struct GroupedCheckinTests {
    typealias Engine = StoreEngine

    static let now = "2026-11-21T12:00:00Z"

    /// A store with three users (u3 reminded at their usual hour) and a week of check-ins each.
    func seeded(_ engine: Engine) throws -> Context {
        let (c, _) = try makeContext(now: Self.now, store: try engine.open())
        let t0 = RFC3339.parse("2026-11-01T00:00:00Z")!
        try c.store.write { w in
            for (u, usual) in [("u1", false), ("u2", false), ("u3", true)] {
                _ = try w.addUser(User(id: u, zone: "Europe/Berlin", remindUsual: usual), at: t0)
            }
        }
        for u in ["u1", "u2", "u3"] {
            for d in 14...19 {
                try c.checkin(
                    user: u, streak: "daily", at: "2026-11-\(d)T0\(d % 3 + 6):00:00Z", tz: nil, eventID: nil, meta: [])
            }
        }
        return c
    }

    /// The inputs of one group: ids given twice (in one user's inputs, and in two users'), plain
    /// ones, another streak, metadata, an unknown user and inputs the rules refuse.
    static let inputs: [CheckinInput] = [
        CheckinInput(user: "u1", streak: nil, at: nil, tz: nil, id: "e1"),
        CheckinInput(user: "u2", streak: nil, at: "2026-11-20T09:00:00Z", tz: nil, id: nil),
        CheckinInput(user: "u1", streak: nil, at: nil, tz: nil, id: "e1"),
        CheckinInput(user: "u3", streak: nil, at: "2026-11-20T18:00:00Z", tz: nil, id: "e1"),
        CheckinInput(user: "u1", streak: "read", at: nil, tz: nil, id: nil, meta: [("pages", .integer(20))]),
        CheckinInput(user: "nobody", streak: nil, at: nil, tz: nil, id: nil),
        CheckinInput(user: "u2", streak: nil, at: nil, tz: "Mars/Base", id: nil),
        CheckinInput(user: "u1", streak: nil, at: nil, tz: nil, id: "e2"),
        CheckinInput(user: "u3", streak: nil, at: nil, tz: nil, id: "e1"),
        CheckinInput(user: "u2", streak: nil, at: "yesterday", tz: nil, id: nil),
        CheckinInput(user: "u1", streak: nil, at: nil, tz: nil, id: nil),
    ]

    static func answers(_ c: Context, _ inputs: [CheckinInput], together: Bool) throws -> [String] {
        let works = inputs.map { CheckinWork(context: c, input: $0) }
        let answers =
            together
            ? try c.store.write { w in try WriteGroups.run(works.map { .checkin($0) }, in: w) }
            : try works.map { work in try c.store.write { w in try Context.apiCheckins([work], in: w)[0] } }
        return answers.map { "\($0.made.status) \($0.made.body)" }
    }

    @Test(arguments: Engine.allCases) func aGroupAnswersAsCheckinsOneAfterAnother(engine: Engine) throws {
        if engine == .postgres { try Prerequisite.postgres.require() }
        let grouped = try Self.answers(try seeded(engine), Self.inputs, together: true)
        let alone = try Self.answers(try seeded(engine), Self.inputs, together: false)
        #expect(grouped == alone)
        #expect(
            grouped.map { $0.prefix(3) } == [
                "201", "201", "200", "201", "201", "422", "422", "201", "200", "400", "201",
            ])
        #expect(grouped[2].contains(#""today_count":1"#) && grouped[10].contains(#""today_count":3"#))
    }

    /// Two hosts' groups of the same users, in opposite orders, with the same ids and without,
    /// many times at once: no deadlock, each id stored once, every plain check-in stored.
    @Test func twoGroupsOfTheSameUsersAtOnceOnPostgreSQL() throws {
        try Prerequisite.postgres.require()
        let url = try TestPostgres.freshDatabase()
        let (c, _) = try makeContext(now: Self.now, store: try PostgresStore(url: url))
        let users = (0..<16).map { "g\($0)" }
        try c.store.write { w in
            for u in users { _ = try w.addUser(User(id: u, zone: "UTC"), at: RFC3339.parse("2026-11-01T00:00:00Z")!) }
        }
        let rounds = 8
        let created = Atomic<Int>(0)
        let failures = Mutex<[String]>([])
        let hosts = try [false, true].map { reversed in
            let (host, _) = try makeContext(now: Self.now, store: try PostgresStore(url: url))
            let thread = Thread { [host] in
                do {
                    for r in 0..<rounds {
                        let order = reversed ? Array(users.reversed()) : users
                        let inputs = order.flatMap { u in
                            [
                                CheckinInput(user: u, streak: nil, at: nil, tz: nil, id: "r\(r)"),
                                CheckinInput(user: u, streak: nil, at: nil, tz: nil, id: nil),
                            ]
                        }
                        let answers = try Self.answers(host, inputs, together: true)
                        created.add(answers.filter { $0.hasPrefix("201") }.count, ordering: .relaxed)
                    }
                } catch {
                    failures.withLock { $0.append("\(error)") }
                }
            }
            thread.start()
            return thread
        }
        while hosts.contains(where: { !$0.isFinished }) { Thread.sleep(forTimeInterval: 0.05) }
        #expect(failures.withLock { $0 } == [])
        // Each id once per user (one host's 201, the other's 200), every plain check-in.
        #expect(created.load(ordering: .relaxed) == users.count * rounds * 3)
        let total = try c.store.read { r in try users.map { try r.checkins(of: $0, streak: "daily").count } }
        #expect(total == Array(repeating: rounds * 3, count: users.count))
    }
}
