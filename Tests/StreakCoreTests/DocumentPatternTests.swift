import Foundation
import StreakCore
import StreakTestKit
import Testing

/// The API's document (docs/openapi.json) states the shapes of ids, metadata keys and reminder
/// times as patterns, for clients and for schemathesis; each must accept exactly what the server's
/// own checks (`Validate`) accept.
@Suite(.fastTier) struct DocumentPatternTests {
    /// A schema of the document's components, by its path (nil: not there).
    static func schema(_ path: String...) -> [String: Any]? {
        let data = FileManager.default.contents(atPath: packageRoot + "/docs/openapi.json") ?? Data()
        let document = (try? JSONSerialization.jsonObject(with: data)) as? [String: Any]
        var node: Any? = (document?["components"] as? [String: Any])?["schemas"]
        for key in path { node = (node as? [String: Any])?[key] }
        return node as? [String: Any]
    }

    /// Short texts over an alphabet of every kind of character the rules tell apart, and the
    /// edges of each length limit.
    static let samples: [String] = {
        let alphabet = Array("aZ09._@- !~\u{7F}é\u{0}/:+") + ["\u{1F600}"]
        var random = SplitMix64(state: 20_261_128)
        var texts = ["", "usual", "Usual", "20:00", "23:59", "24:00", "7:00", "07:60", "00:00", "0a:00", "20:00 "]
        for n in [1, 63, 64, 65, 127, 128, 129] {
            texts += ["a", "A", "0", "_", "é"].map { String(repeating: $0, count: n) }
            texts.append("a" + String(repeating: "_", count: n - 1))
        }
        for _ in 0..<5_000 {
            let n = Int.random(in: 1...6, using: &random)
            texts.append(String((0..<n).map { _ in alphabet.randomElement(using: &random)! }))
        }
        return texts
    }()

    func check(_ pattern: String?, _ name: String, accepts valid: (String) -> Bool) throws {
        let pattern = try #require(pattern, "\(name) has a pattern")
        let regex = try NSRegularExpression(pattern: pattern)
        for text in Self.samples {
            let matched = regex.firstMatch(in: text, range: NSRange(text.startIndex..., in: text)) != nil
            #expect(matched == valid(text), "\(name) \(pattern) on \(text.debugDescription)")
        }
    }

    @Test func idsAreTheServersIDs() throws {
        try check(Self.schema("UserID")?["pattern"] as? String, "UserID") { Validate.userID($0) == nil }
        try check(Self.schema("StreakID")?["pattern"] as? String, "StreakID") { Validate.streakID($0) == nil }
        try check(Self.schema("EventID")?["pattern"] as? String, "EventID") { Validate.eventID($0) == nil }
    }

    @Test func metadataKeysAreTheServersKeys() throws {
        try check(Self.schema("Meta", "propertyNames")?["pattern"] as? String, "Meta keys") {
            Validate.metaKey($0) == nil
        }
    }

    @Test func reminderTimesAreTheServersTimes() throws {
        let remindAt = Self.schema("UserBody", "properties", "remind_at")?["pattern"] as? String
        try check(remindAt, "remind_at") { $0 == "usual" || Validate.wallTime($0) != nil }
    }
}
