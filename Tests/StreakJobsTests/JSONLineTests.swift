import Foundation
import StreakDelivery
import StreakSQLite
import StreakStore
import StreakTestKit
import Testing

@testable import StreakJobs

/// The quick JSON reader must agree with `JSONDecoder` on every line it
/// accepts, and leave every other line to it.
@Suite struct JSONLineTests {
    static func decoded(_ line: String) -> [String: JSONInput]? {
        guard case .object(let o)? = try? JSONDecoder().decode(JSONInput.self, from: Data(line.utf8)) else {
            return nil
        }
        return o
    }

    static func quick(_ line: String) -> [String: JSONInput]? {
        var line = line
        return line.withUTF8 { JSONLine.object($0) }
    }

    static func same(_ a: JSONInput, _ b: JSONInput) -> Bool {
        switch (a, b) {
        case (.string(let x), .string(let y)): x == y
        case (.bool(let x), .bool(let y)): x == y
        case (.integer(let x), .integer(let y)): x == y
        case (.number, .number), (.null, .null), (.array, .array): true
        case (.object(let x), .object(let y)):
            x.count == y.count && x.allSatisfy { key, value in y[key].map { same(value, $0) } ?? false }
        default: false
        }
    }

    @Test(arguments: [
        #"{"user":"u1","tz":"Asia/Tokyo","remind_at":"20:00"}"#,
        #"{"user":"u1","at":"2026-11-20T19:03:00-05:00","id":"e1","meta":{"reps":20,"ok":true,"note":"x"}}"#,
        #"{ "user" : "u1" , "meta" : { } , "n" : null }  "#,
        #"{"a":0,"b":-3,"c":123456789012345678,"d":false,"e":"ünïcödé €𝄞","f":"\#u{7F}"}"#,
        "{\"a\":\"x\"}\t\r",
        "{}",
    ])
    func acceptsPlainLinesAsJSONDecoderReadsThem(line: String) throws {
        let quick = try #require(Self.quick(line))
        let decoded = try #require(Self.decoded(line))
        #expect(Self.same(.object(quick), .object(decoded)), "\(quick) is not \(decoded)")
    }

    @Test(arguments: [
        #"{"a":"x\"y"}"#, #"{"a":"\u00e9"}"#, #"{"a":1.5}"#, #"{"a":1e2}"#, #"{"a":1.0}"#, #"{"a":-0}"#,
        #"{"a":01}"#, #"{"a":1234567890123456789}"#, #"{"a":[1]}"#, #"{"a":1,"a":2}"#,
        #"{"m":{"a":1,"a":2}}"#, #"{"m":{"n":{}}}"#, #"{"a":1,}"#, #"{"a":1} x"#, #"{"a":tru}"#,
        #"{"a":truex}"#, "{\"a\":\"\u{1}\"}", #"{"a" 1}"#, #"{"a":1"#, " {}", #"["a"]"#, #"{"a":nul}"#,
    ])
    func leavesEverythingElseToJSONDecoder(line: String) {
        #expect(Self.quick(line) == nil)
    }

    @Test func randomLinesAgree() {
        var random = SystemRandomNumberGenerator()
        let keys = ["user", "at", "tz", "id", "meta", "n", "ü"]
        let values = [
            #""x""#, #""""#, "0", "-7", "42", "9223372036854775807", "true", "false", "null", "{}", #"{"k":1}"#,
            #"{"k":"v","b":true}"#, "1.5", "[1]", #""a\"b""#,
        ]
        for _ in 0..<500 {
            let fields = (0..<Int.random(in: 0...4, using: &random)).map { _ in
                "\"\(keys.randomElement(using: &random)!)\":\(values.randomElement(using: &random)!)"
            }
            let line = "{" + fields.joined(separator: [",", " , "].randomElement(using: &random)!) + "}"
            guard let quick = Self.quick(line) else { continue }
            let decoded = Self.decoded(line)
            #expect(decoded.map { Self.same(.object(quick), .object($0)) } == true, "\(line)")
        }
    }
}
