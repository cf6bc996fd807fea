import StreakCore
import StreakStore
import StreakTestKit
import Testing

/// The import side's toolkit: the byte-keyed table, the packed texts, a batch of check-ins as a
/// value, and the texts a long read interns.
@Suite(.fastTier) struct ByteTableTests {
    @Test func keepsValuesAndNumbersThroughGrowth() {
        var table = ByteTable()
        let keys = (0..<50_000).map { "user-\($0 * 7919 % 100_003)" } + ["", "ü€", String(repeating: "k", count: 300)]
        for (n, key) in keys.enumerated() { #expect(table.add(key, value: UInt64(n)) == nil) }
        #expect(table.count == keys.count)
        for (n, key) in keys.enumerated() {
            #expect(table.value(key) == UInt64(n))
            #expect(table.key(n) == key)
        }
        #expect(table.add("user-0", value: 99) == 0, "adding again answers the value kept")
        #expect(table.value("user-0") == 0)
        #expect(table.value("user-") == nil && table.value("user-00") == nil && table.value("nobody") == nil)
        table.removeAll()
        #expect(table.count == 0 && table.value("user-0") == nil)
        #expect(table.intern("user-0") == 0)
    }

    @Test func batchedLookupsAnswerAsSingleOnes() {
        var table = ByteTable()
        for n in 0..<10_000 { table.add("u\(n)", value: UInt64(n * 3)) }
        var texts = (0..<200).map { "u\($0 * 97 % 10_000)" } + ["", "u", "u10000", "x1"]
        texts.shuffle()
        var values: [UInt64?] = []
        var packed = PackedTexts()
        for text in texts { packed.append(text) }
        packed.withTexts { t in
            table.values((0..<t.count).map { t[$0] }, into: &values)
        }
        #expect(values == texts.map { table.value($0) })
        #expect(values.compactMap { $0 }.count == 200)
        var wide = ByteTable()
        var key = "u1"
        key.withUTF8 { _ = wide.add($0, value: UInt64(7) << 32 | 5) }
        #expect(wide.value("u1") == UInt64(7) << 32 | 5)
    }

    @Test func internNumbersKeysInOrder() {
        var table = ByteTable()
        #expect(table.intern("daily") == 0)
        #expect(table.intern("workout") == 1)
        #expect(table.intern("daily") == 0)
        #expect(table.key(1) == "workout")
        #expect(table.count == 2)
    }

    /// Texts come back as they went in, by number, also after another's are appended.
    @Test func packedTextsKeepTheirTexts() {
        var a = PackedTexts()
        let first = ["", "u1", "ü€", String(repeating: "k", count: 300), ""]
        for t in first { a.append(t) }
        var b = PackedTexts()
        b.append("x")
        b.append("")
        a.append(contentsOf: b)
        #expect(a.count == first.count + 2)
        #expect((0..<a.count).map { a.string($0) } == first + ["x", ""])
        #expect(a.byteCount == first.joined().utf8.count + 1)
        a.removeAll()
        #expect(a.isEmpty && a.byteCount == 0)
    }

    /// A batch keeps each row's fields, an absent event id or metadata apart from an empty one
    /// (the rules refuse an empty id; the batch does not judge).
    @Test func checkinRowsKeepEachField() {
        let t0 = Instant(seconds: 1_700_000_000)
        let checkins = [
            NewCheckin(user: "u1", streak: "daily", instant: t0, zone: "UTC"),
            NewCheckin(user: "u.2", streak: "workout", instant: t0 + 60, zone: "Asia/Tokyo", eventID: "e1"),
            NewCheckin(user: "U3", streak: "b", instant: t0 - 1, zone: "UTC", meta: #"{"n":1}"#),
            NewCheckin(user: "u4", streak: "daily", instant: t0, zone: "UTC", eventID: "", meta: ""),
        ]
        var rows = CheckinRows(checkins)
        #expect((0..<rows.count).map { rows.checkin($0) } == checkins)
        var more = CheckinRows()
        more.append(rows, 1..<3)
        #expect([more.checkin(0), more.checkin(1)] == Array(checkins[1..<3]))
        rows.removeAll()
        #expect(rows.isEmpty && rows.textBytes == 0)
    }

    /// Interned texts are the texts, also past the table's limit (it starts again).
    @Test func internedStringsAreTheTexts() {
        var strings = InternedStrings()
        let texts = (0..<10_000).map { "Zone/\($0 % 5000)" }
        for text in texts + texts {
            var text = text
            #expect(text.withUTF8 { strings.string($0) } == text)
        }
    }
}
