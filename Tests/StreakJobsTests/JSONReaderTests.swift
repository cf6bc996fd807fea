import Foundation
import InputGenerators
import StreakTestKit
import Testing

@testable import StreakJobs

/// `JSONReader` reads every valid line as `JSONDecoder` does, and says what is
/// wrong with every other one: the field, the column and the real cause.
@Suite(.fastTier) struct JSONReaderTests {
    /// `JSONDecoder`'s reading, the oracle for valid lines (what streakd used before).
    enum Decoded: Decodable, Equatable {
        case string(String)
        case bool(Bool)
        case integer(Int64)
        case number(Double)
        case null
        case array
        case object([String: Decoded])

        init(from decoder: any Decoder) throws {
            let c = try decoder.singleValueContainer()
            if c.decodeNil() {
                self = .null
            } else if let b = try? c.decode(Bool.self) {
                self = .bool(b)
            } else if let i = try? c.decode(Int64.self) {
                self = .integer(i)
            } else if let d = try? c.decode(Double.self) {
                self = .number(d)
            } else if let s = try? c.decode(String.self) {
                self = .string(s)
            } else if let o = try? c.decode([String: Decoded].self) {
                self = .object(o)
            } else {
                self = .array
            }
        }
    }

    static func decoded(_ line: String) -> Decoded? { try? JSONDecoder().decode(Decoded.self, from: Data(line.utf8)) }

    static func read(_ line: String) -> Result<[String: JSONInput], FieldProblem> {
        var line = line
        return line.withUTF8 { JSONReader.object($0) }
    }

    static func same(_ a: JSONInput, _ b: Decoded) -> Bool {
        switch (a, b) {
        case (.string(let x), .string(let y)): x == y
        case (.bool(let x), .bool(let y)): x == y
        case (.integer(let x), .integer(let y)): x == y
        case (.number(let x), .number(let y)): Double(x) == y
        case (.largeInteger(let x), .number(let y)): Double(x) == y
        case (.null, .null), (.array, .array): true
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
        #"{"a":"x\"y\\z\/\b\f\n\r\t","b":"\u00e9\u20AC\ud834\udd1e","c":"\u0000"}"#,
        #"{"a":9223372036854775807,"b":-9223372036854775808,"c":1.0,"d":1e2,"e":-0,"f":1.5E1,"g":2.5}"#,
        #"{"a":[1,[2,{"b":[]}],"x"],"o":{"p":{"q":{}}}}"#,
        "{\"a\":\"x\"}\t\r", "{}", "\t {}",
    ])
    func readsValidLinesAsJSONDecoderDoes(line: String) throws {
        let read = try Self.read(line).get()
        let decoded = try #require(Self.decoded(line))
        #expect(Self.same(.object(read), decoded), "\(read) is not \(decoded)")
    }

    @Test func wholeNumbersAreIntegersAndTheRestSaySo() throws {
        let o = try Self.read(
            #"{"a":9223372036854775808,"b":-9223372036854775809,"c":123456789012345678901234567890,"d":1e19,"e":1e-1,"f":0.0,"g":100e-2}"#
        ).get()
        #expect(o["a"].map { "\($0)" } == #"largeInteger("9223372036854775808")"#)
        #expect(o["b"].map { "\($0)" } == #"largeInteger("-9223372036854775809")"#)
        #expect(o["c"].map { "\($0)" } == #"largeInteger("123456789012345678901234567890")"#)
        #expect(o["d"].map { "\($0)" } == #"largeInteger("1e19")"#)
        #expect(o["e"].map { "\($0)" } == #"number("1e-1")"#)
        #expect(o["f"].map { "\($0)" } == "integer(0)")
        #expect(o["g"].map { "\($0)" } == "integer(1)")
    }

    @Test(arguments: [
        (
            #"{"a":1"#, "",
            "malformed JSON at column 7: expected ',' or '}' after the value of \"a\", found the end of the line"
        ),
        (#"{"a":"x"#, "a", "malformed JSON at column 6: the string is not closed: the line ends inside it"),
        (#"{"a":1,}"#, "", "malformed JSON at column 8: expected a field name in double quotes after ',', found '}'"),
        (#"{a:1}"#, "", "malformed JSON at column 2: expected a field name in double quotes, found 'a'"),
        (#"{"a" 1}"#, "a", "malformed JSON at column 6: expected ':' after the field name \"a\", found '1'"),
        (#"{"a":1} x"#, "", "malformed JSON at column 9: text after the object; write one object per line"),
        (
            #"{"a":tru}"#, "a",
            "malformed JSON at column 6: \"tru\" is not a JSON value; text goes in double quotes, and the words JSON knows are true, false and null"
        ),
        (
            #"{"a":}"#, "a",
            "malformed JSON at column 6: expected a value, found '}'; a value is a string in double quotes, a number, true, false, null, an object or an array"
        ),
        (
            #"{"a":01}"#, "a",
            "malformed JSON at column 6: a number must not start with 0 and more digits (write 7, not 07)"
        ),
        (#"{"a":-x}"#, "a", "malformed JSON at column 6: a number needs a digit after '-'"),
        (#"{"a":1.}"#, "a", "malformed JSON at column 6: a number needs a digit after its '.'"),
        (#"{"a":1e}"#, "a", "malformed JSON at column 6: a number needs a digit after its exponent 'e'"),
        (#"{"a":12ab}"#, "a", "malformed JSON at column 6: \"12a\" is not a number"),
        (
            #"{"a":"\ud800"}"#, "a",
            #"malformed JSON at column 7: \ud800 is the first half of a surrogate pair, and its second half (\udc00 to \udfff) does not follow; a string must be valid Unicode"#
        ),
        (
            #"{"a":"\ud800\u0041"}"#, "a",
            #"malformed JSON at column 7: \ud800 is the first half of a surrogate pair, and its second half (\udc00 to \udfff) does not follow; a string must be valid Unicode"#
        ),
        (
            #"{"a":"é\udfff"}"#, "a",
            #"malformed JSON at column 8: \udfff is the second half of a surrogate pair without its first half (\ud800 to \udbff); a string must be valid Unicode"#
        ),
        (
            #"{"a":"\x"}"#, "a",
            #"malformed JSON at column 7: \x is not an escape; use \", \\, \/, \b, \f, \n, \r, \t or \u and 4 hex digits"#
        ),
        (
            #"{"a":"\u12g4"}"#, "a",
            #"malformed JSON at column 7: \u must be followed by 4 hex digits (0-9, a-f), as in \u00e9"#
        ),
        (
            "{\"a\":\"x\ty\"}", "a",
            #"malformed JSON at column 8: a control character (U+0009) inside a string; write it as the escape \u0009"#
        ),
        (#"{"a":[1 2]}"#, "a", "malformed JSON at column 9: expected ',' or ']' in the array, found '2'"),
        (#"{"a":1,"b":2,"a":3}"#, "a", "given twice in one object; give each field once"),
        (#"{"meta":{"n":1,"n":2}}"#, "meta", #"key "n" is given twice; give each key once"#),
        (#"{"meta":{"x":{"n":1,"n":2}}}"#, "meta", #"key "n" is given twice; give each key once"#),
        ("[1]", "", "malformed JSON: expected one object {...} per line"),
        ("nope", "", "malformed JSON: expected one object {...} per line"),
        (
            "{\"a\":" + String(repeating: "[", count: 40) + String(repeating: "]", count: 40) + "}", "a",
            "malformed JSON at column 37: objects and arrays nested deeper than 32"
        ),
    ])
    func saysWhatIsWrong(line: String, field: String, message: String) {
        switch Self.read(line) {
        case .success(let o): Issue.record("\(line) was read as \(o)")
        case .failure(let p):
            #expect(p.field == field, "\(line)")
            #expect(p.message == message, "\(line)")
        }
    }

    /// An HTTP request's body is not a line: the messages say "the body".
    @Test(arguments: [
        ("[1,2]", "malformed JSON: the body must be one object {...}"),
        (#"{"a":1} {"b":2}"#, "malformed JSON at column 9: text after the object; the body must be one object {...}"),
        (#"{"a":"x"#, "malformed JSON at column 6: the string is not closed: the body ends inside it"),
        (
            #"{"a":1"#,
            "malformed JSON at column 7: expected ',' or '}' after the value of \"a\", found the end of the body"
        ),
    ])
    func saysWhatIsWrongWithABody(body: String, message: String) {
        switch JSONInput.object(body[...], in: .body) {
        case .success(let o): Issue.record("\(body) was read as \(o)")
        case .failure(let p): #expect(p.message == message, "\(body)")
        }
    }

    /// Random lines from pieces of JSON, some broken: whatever the reader
    /// accepts, `JSONDecoder` reads alike; what it refuses, it explains.
    @Test func randomLinesAgree() {
        var random = SplitMix64(state: 17)
        let keys = ["user", "at", "tz", "id", "meta", "n", "ü", "a\\\"b"]
        let values = [
            #""x""#, #""""#, "0", "-7", "42", "9223372036854775807", "9223372036854775808", "true", "false", "null",
            "{}", #"{"k":1}"#, #"{"k":"v","b":true}"#, "1.5", "1e3", "[1]", #""a\"b""#, #""\u00e9\ud83d\ude00""#,
            #""\ud83d""#, "01", "-", "tru", "[", "]", "{",
        ]
        for _ in 0..<2000 {
            let fields = (0..<random.below(5)).map { _ in
                "\"\(keys[random.below(keys.count)])\":\(values[random.below(values.count)])"
            }
            let line = "{" + fields.joined(separator: [",", " , ", ",,"][random.below(3)]) + "}"
            switch Self.read(line) {
            case .success(let o):
                let decoded = Self.decoded(line)
                #expect(decoded.map { Self.same(.object(o), $0) } == true, "\(line)")
            case .failure(let p):
                #expect(!p.message.isEmpty)
            }
        }
    }
}
