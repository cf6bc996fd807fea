import StreakCore
import StreakTestKit
import Testing

@Suite(.fastTier) struct DayTableTests {
    @Test func storesDatesInAnyOrderAndIteratesInDateOrder() {
        var t = DayTable<Int>()
        let d = LocalDate("2026-11-21")!
        #expect(t[d] == nil)
        t[d] = 1
        t[d + 3] = 4
        t[d - 2] = -2
        t[d + 3] = 5
        #expect(t[d] == 1 && t[d + 3] == 5 && t[d - 2] == -2)
        #expect(t[d + 1] == nil && t[d - 3] == nil && t[d + 4] == nil)
        #expect(t.keys == [d - 2, d, d + 3])
        #expect(t.map(\.value) == [-2, 1, 5])
        #expect(t.values == [-2, 1, 5])
        t[d] = nil
        #expect(t.keys == [d - 2, d + 3])
    }
}
