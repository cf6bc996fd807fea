import Foundation
import StreakCore
import StreakTestKit
import Testing

/// A request with several bad fields is told of each (SPEC §11: `errors` names each bad field and
/// what would be valid), not only the first, in both of a body's steps: its shape (an unknown
/// field, a wrong type) and the rules (a zone, an instant, an id); 400 when any value does not
/// parse, 422 when each parses and the rules refuse them.
@Suite("serve: every bad field named", .fastTier, .requires(.program("/usr/bin/curl", package: "curl")))
struct ServeProblemTests {
    /// A problem's status and the pointers of its errors, in order.
    func pointers(_ reply: Reply) throws -> (status: Int, pointers: [String]) {
        #expect(reply.header("content-type") == "application/problem+json", "\(reply)")
        let errors = try jsonObject(reply.body)["errors"] as? [[String: Any]] ?? []
        return (reply.status, errors.compactMap { $0["pointer"] as? String })
    }

    @Test func everyBadFieldOfABodyIsNamed() throws {
        let s = try Sandbox()
        s.addUser("u1")
        let admin = try ServeTests.token(s, "app", "admin")
        let server = try Server(s, listen: "127.0.0.1:0")
        func post(_ path: String, _ json: String) throws -> (status: Int, pointers: [String]) {
            try pointers(server.request("POST", path, token: admin, json: json))
        }
        let checkins = "/v1/users/u1/checkins"
        // The shape: unknown fields first (by name), then the others in the body's order.
        let shape = try post(checkins, #"{"at":7,"tz":3,"when":1,"id":false}"#)
        #expect(shape.status == 400 && shape.pointers == ["/when", "/at", "/tz", "/id"], "\(shape)")
        // The rules: an instant that does not parse makes it 400, and the zone and id are named too.
        let rules = try post(checkins, #"{"at":"yesterday","tz":"Mars/Olympus","id":"a b"}"#)
        #expect(rules.status == 400 && rules.pointers == ["/at", "/tz", "/id"], "\(rules)")
        let refused = try post(checkins, #"{"at":"2026-11-22T11:00:00Z","tz":"Mars/Olympus"}"#)
        #expect(refused.status == 422 && refused.pointers == ["/at", "/tz"], "\(refused)")
        let one = try post(checkins, #"{"tz":"Mars/Olympus"}"#)
        #expect(one.status == 422 && one.pointers == ["/tz"], "\(one)")

        func put(_ json: String) throws -> (status: Int, pointers: [String]) {
            try pointers(server.request("PUT", "/v1/users/bo", token: admin, json: json))
        }
        let user = try put(#"{"tz":"Europe/Berln","remind_at":"8:00","lang":"!!"}"#)
        #expect(user.status == 400 && user.pointers == ["/tz", "/remind_at", "/lang"], "\(user)")
        let userRefused = try put(#"{"tz":"Europe/Berln","remind_at":"20:07","lang":"fr"}"#)
        #expect(userRefused.status == 422 && userRefused.pointers == ["/tz", "/remind_at", "/lang"], "\(userRefused)")
        let userShape = try put(#"{"tz":1,"remind":"yes","zone":"UTC"}"#)
        #expect(userShape.status == 400 && userShape.pointers == ["/zone", "/tz", "/remind"], "\(userShape)")

        let freeze = try post("/v1/users/u1/streaks/daily/freezes", #"{"action":"spend","date":"soon"}"#)
        #expect(freeze.status == 400 && freeze.pointers == ["/action", "/date"], "\(freeze)")
        let pause = try post("/v1/users/u1/pauses", #"{"streak":"Bad!","from":"x","until":7}"#)
        #expect(pause.status == 400 && pause.pointers == ["/streak", "/from", "/until"], "\(pause)")

        let batch = try server.request(
            "POST", "/v1/checkins", token: admin,
            json: #"[{"user":"u1","at":"2026-11-22T11:00:00Z","tz":"Mars/Olympus","id":"a b"}]"#)
        #expect(batch.status == 422, "\(batch)")
        let rejected = try jsonObject(batch.body)["rejected"] as? [[String: Any]]
        let errors = rejected?.first?["errors"] as? [[String: Any]]
        #expect(errors?.compactMap { $0["pointer"] as? String } == ["/at", "/tz", "/id"], "\(batch)")
        // A line that is not JSON is the whole item: the pointer is "", not "/" (a member named "").
        let line = try server.request(
            "POST", "/v1/checkins", token: admin, body: "{\"user\":\"u1\"}\nnot json",
            headers: ["Content-Type: application/x-ndjson"])
        let lineErrors =
            (try jsonObject(line.body)["rejected"] as? [[String: Any]])?.last?["errors"] as? [[String: Any]]
        #expect(line.status == 422 && lineErrors?.first?["pointer"] as? String == "", "\(line)")
        // An item's shape, in an array and as a line: each bad field of it, as for one check-in.
        let badShape = #"{"user":"u1","at":7,"tz":3,"when":1,"id":false}"#
        for (body, type) in [("[\(badShape)]", "application/json"), (badShape, "application/x-ndjson")] {
            let shaped = try server.request(
                "POST", "/v1/checkins", token: admin, body: body, headers: ["Content-Type: \(type)"])
            let shapeErrors =
                (try jsonObject(shaped.body)["rejected"] as? [[String: Any]])?.first?["errors"] as? [[String: Any]]
            #expect(
                shaped.status == 422
                    && shapeErrors?.compactMap { $0["pointer"] as? String } == ["/when", "/at", "/tz", "/id"],
                "\(type): \(shaped)")
        }
        #expect(try s.statusObject()["total_checkins"] as? Int == 0, "nothing refused was stored")
        #expect(s.run(["user", "list"]).out.contains("bo") == false)
        server.stop()
    }
}
