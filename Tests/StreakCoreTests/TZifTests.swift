import StreakCore
import StreakTestKit
import Testing

/// The bytes of a TZif file laid out as zic writes them: a 32-bit block, and
/// for versions 2 and later a 64-bit block and a footer.
func tzifBytes(
    version: UInt8 = UInt8(ascii: "2"), transitions: [(at: Int64, type: UInt8)], offsets: [Int32],
    footer: String = "", leaps: Int = 0
) -> [UInt8] {
    func bigEndian(_ v: UInt64, _ n: Int) -> [UInt8] {
        (0..<n).reversed().map { UInt8(truncatingIfNeeded: v >> (8 * UInt64($0))) }
    }
    func block(wide: Bool) -> [UInt8] {
        let size = wide ? 8 : 4
        var bytes = Array("TZif".utf8) + [version] + [UInt8](repeating: 0, count: 15)
        for count in [0, 0, leaps, transitions.count, offsets.count, 4] { bytes += bigEndian(UInt64(count), 4) }
        for t in transitions { bytes += bigEndian(UInt64(bitPattern: t.at), size) }
        bytes += transitions.map(\.type)
        for o in offsets { bytes += bigEndian(UInt64(UInt32(bitPattern: o)), 4) + [0, 0] }
        bytes += Array("ABC".utf8) + [0]
        for n in 0..<leaps { bytes += bigEndian(UInt64(78_796_800 + n), size) + bigEndian(UInt64(n + 1), 4) }
        return bytes
    }
    var bytes = block(wide: false)
    if version != 0 { bytes += block(wide: true) + Array("\n\(footer)\n".utf8) }
    return bytes
}

/// Hex text to bytes.
func hexBytes(_ text: String) -> [UInt8] {
    let digits = Array(text.utf8).filter { $0 != 10 && $0 != 32 }
    return stride(from: 0, to: digits.count, by: 2).map {
        UInt8(String(decoding: digits[$0..<$0 + 2], as: UTF8.self), radix: 16)!
    }
}

@Suite(.fastTier)
struct TZifTests {
    /// /usr/share/zoneinfo/Asia/Kathmandu from tzdata 2025b, as zic wrote it
    /// (its third transition, in 2038, keeps the same type).
    static let kathmandu = hexBytes(
        """
        545a69663200000000000000000000000000000000000000000000000000
        0000000000030000000300000010a1f27d841e1830a87fffffff01020200
        004ffc000000004d580004000050dc000a4c4d54002b30353330002b3035
        343500545a69663200000000000000000000000000000000000000000000
        0000000000000000030000000300000010ffffffffa1f27d84000000001e
        1830a8000000007fffffff01020200004ffc000000004d580004000050dc
        000a4c4d54002b30353330002b30353435000a3c2b303534353e2d353a34
        350a
        """)

    @Test func realFile() throws {
        let table = try #require(TZif.table(Self.kathmandu))
        #expect(table.times == [at("1919-12-31T18:18:44Z").seconds, at("1985-12-31T18:30:00Z").seconds])
        #expect(table.offsets == [20476, 19800, 20700])
        #expect(table.rule == nil)
        #expect(table.offset(at: at("1900-01-01T00:00:00Z").seconds) == 20476)
        #expect(table.offset(at: at("1985-12-31T18:29:59Z").seconds) == 19800)
        #expect(table.offset(at: at("2300-01-01T00:00:00Z").seconds) == 20700)
    }

    static let march2026 = at("2026-03-08T07:00:00Z").seconds
    static let november2026 = at("2026-11-01T06:00:00Z").seconds

    /// New York's offsets in 2026, then its footer.
    static let newYork = tzifBytes(
        transitions: [(march2026, 1), (november2026, 0)], offsets: [-18000, -14400],
        footer: "EST5EDT,M3.2.0,M11.1.0")

    @Test func footerAfterTheLastTransition() throws {
        let table = try #require(TZif.table(Self.newYork))
        #expect(table.rule == PosixTZ("EST5EDT,M3.2.0,M11.1.0"))
        let cases: [(String, Int)] = [
            ("2026-03-08T06:59:59Z", -18000), ("2026-03-08T07:00:00Z", -14400),
            ("2027-03-14T06:59:59Z", -18000), ("2027-03-14T07:00:00Z", -14400),
            ("2027-11-07T05:59:59Z", -14400), ("2027-11-07T06:00:00Z", -18000),
            ("2200-11-02T06:00:00Z", -18000), ("2200-12-31T12:00:00Z", -18000),
            // Past the expanded years the rule itself answers: 2300-03-11 and 2300-11-04.
            ("2300-03-11T06:59:59Z", -18000), ("2300-03-11T07:00:00Z", -14400),
            ("2300-11-04T05:59:59Z", -14400), ("2300-11-04T06:00:00Z", -18000),
        ]
        for (instant, offset) in cases { #expect(table.offset(at: at(instant).seconds) == offset, "\(instant)") }
        // Two transitions a year from 2026 through 2200, then the rule.
        #expect(table.times.count == 2 * (2200 - 2025))
    }

    @Test func version1UsesThe32BitBlock() throws {
        let bytes = tzifBytes(version: 0, transitions: [(Self.march2026, 1)], offsets: [-18000, -14400])
        let table = try #require(TZif.table(bytes))
        #expect(table.times == [Self.march2026])
        #expect(table.offset(at: at("2300-01-01T00:00:00Z").seconds) == -14400)
    }

    @Test func transitionsThatKeepTheOffsetAreDropped() throws {
        let bytes = tzifBytes(
            transitions: [(0, 1), (1000, 2), (2000, 0)], offsets: [3600, 3600, 7200], footer: "<+01>-1")
        let table = try #require(TZif.table(bytes))
        #expect(table.times == [1000, 2000])
        #expect(table.offsets == [3600, 7200, 3600])
    }

    @Test(arguments: [
        ("leap-second records", tzifBytes(transitions: [(0, 0)], offsets: [0], footer: "UTC0", leaps: 1)),
        ("a footer without rules", tzifBytes(transitions: [(0, 0)], offsets: [-18000], footer: "EST5EDT")),
        ("a footer that is not a TZ string", tzifBytes(transitions: [(0, 0)], offsets: [0], footer: "x")),
        (
            "a footer disagreeing with the last offset",
            tzifBytes(transitions: [(0, 0)], offsets: [0], footer: "<+01>-1")
        ),
        ("a type that does not exist", tzifBytes(transitions: [(0, 3)], offsets: [0], footer: "UTC0")),
        ("an offset of a day", tzifBytes(transitions: [(0, 0)], offsets: [86400], footer: "")),
        ("transitions out of order", tzifBytes(transitions: [(10, 0), (5, 0)], offsets: [0], footer: "")),
        ("a cut footer", Array(newYork.dropLast())),
        ("a cut data block", Array(newYork.prefix(100))),
        ("another magic", Array("TZiF".utf8) + newYork.dropFirst(4)),
        ("nothing", []),
    ])
    func refused(what: String, bytes: [UInt8]) {
        #expect(TZif.table(bytes) == nil, "\(what)")
    }
}
