import StreakDelivery
import StreakSQLite
import StreakStore
import StreakTestKit
import Testing

@testable import StreakJobs

@Suite(.fastTier) struct ByteTableTests {
    @Test func keepsValuesAndNumbersThroughGrowth() {
        var table = ByteTable()
        let keys = (0..<50_000).map { "user-\($0 * 7919 % 100_003)" } + ["", "ü€", String(repeating: "k", count: 300)]
        for (n, key) in keys.enumerated() { #expect(table.add(key, value: UInt32(n)) == nil) }
        #expect(table.count == keys.count)
        for (n, key) in keys.enumerated() {
            #expect(table.value(key) == UInt32(n))
            #expect(table.key(n) == key)
        }
        #expect(table.add("user-0", value: 99) == 0, "adding again answers the value kept")
        #expect(table.value("user-0") == 0)
        #expect(table.value("user-") == nil && table.value("user-00") == nil && table.value("nobody") == nil)
    }

    @Test func batchedLookupsAnswerAsSingleOnes() {
        var table = ByteTable()
        for n in 0..<10_000 { table.add("u\(n)", value: UInt32(n * 3)) }
        var texts = (0..<200).map { "u\($0 * 97 % 10_000)" } + ["", "u", "u10000", "x1"]
        texts.shuffle()
        var values: [UInt64?] = []
        var ranges: [Range<Int>] = []
        var bytes: [UInt8] = []
        for text in texts {
            ranges.append(bytes.count..<(bytes.count + text.utf8.count))
            bytes += text.utf8
        }
        bytes.withUnsafeBufferPointer { all in
            table.values(ranges.map { UnsafeBufferPointer(rebasing: all[$0]) }, into: &values)
        }
        #expect(values == texts.map { table.wideValue($0) })
        #expect(values.compactMap { $0 }.count == 200)
        var wide = ByteTable()
        var key = "u1"
        key.withUTF8 { _ = wide.add($0, value: UInt64(7) << 32 | 5) }
        #expect(wide.wideValue("u1") == UInt64(7) << 32 | 5)
    }

    @Test func internNumbersKeysInOrder() {
        var table = ByteTable()
        #expect(table.intern("daily") == 0)
        #expect(table.intern("workout") == 1)
        #expect(table.intern("daily") == 0)
        #expect(table.key(1) == "workout")
        #expect(table.count == 2)
    }
}
