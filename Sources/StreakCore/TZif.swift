/// Reads the bytes of a TZif file (RFC 8536, versions 1 to 4) into a
/// `TransitionTable`. Pure: the caller reads the file.
///
/// - Version 2 and later: the 64-bit data block and the footer's TZ string,
///   which decides after the last transition (expanded through
///   `TransitionTable.lastExpandedYear`, evaluated directly after that).
///   Version 1: the 32-bit block; its last offset holds forever.
/// - Before the first transition the first time type applies.
/// - Refused (nil): a bad header or size, a transition to a type that does not
///   exist, leap-second records (the `right/` zones), a footer this reader
///   cannot parse, offsets of a day or more.
public enum TZif {
    public static func table(_ bytes: [UInt8]) -> TransitionTable? {
        guard var header = Header(bytes, at: 0) else { return nil }
        var start = Header.size
        var wide = false
        if header.version >= 2 {
            let second = start + header.length(wide: false)
            guard let h = Header(bytes, at: second) else { return nil }
            header = h
            start = second + Header.size
            wide = true
        }
        guard header.leaps == 0, header.types > 0, start + header.length(wide: wide) <= bytes.count else { return nil }
        let timeSize = wide ? 8 : 4
        let indexStart = start + header.times * timeSize
        let typeStart = indexStart + header.times
        func offset(ofType k: Int) -> Int { Int(Int32(truncatingIfNeeded: read(bytes, at: typeStart + 6 * k, 4))) }

        var transitions: [(at: Int64, offset: Int)] = []
        transitions.reserveCapacity(header.times)
        for i in 0..<header.times {
            let raw = read(bytes, at: start + i * timeSize, timeSize)
            let at = wide ? Int64(bitPattern: raw) : Int64(Int32(truncatingIfNeeded: raw))
            let type = Int(bytes[indexStart + i])
            guard type < header.types else { return nil }
            transitions.append((at, offset(ofType: type)))
        }
        var rule: PosixTZ?
        if wide {
            let footer = bytes[(start + header.length(wide: true))...]
            guard footer.first == 10, let close = footer.dropFirst().firstIndex(of: 10) else { return nil }
            let text = footer[(footer.startIndex + 1)..<close]
            if !text.isEmpty {
                guard let r = PosixTZ(String(decoding: text, as: UTF8.self)) else { return nil }
                rule = r
            }
        }
        return TransitionTable(initial: offset(ofType: 0), transitions: transitions, rule: rule)
    }

    /// A big-endian unsigned number of `size` bytes.
    static func read(_ bytes: [UInt8], at i: Int, _ size: Int) -> UInt64 {
        var v: UInt64 = 0
        for k in 0..<size { v = v << 8 | UInt64(bytes[i + k]) }
        return v
    }

    /// The fixed 44-byte header before each data block.
    struct Header {
        static let size = 44
        var version: Int
        var utIndicators, stdIndicators, leaps, times, types, chars: Int

        init?(_ bytes: [UInt8], at i: Int) {
            guard i + Self.size <= bytes.count, bytes[i..<(i + 4)].elementsEqual("TZif".utf8) else { return nil }
            let v = bytes[i + 4]
            version = v == 0 ? 1 : Int(v) - 48
            guard version >= 1 else { return nil }
            let counts = (0..<6).map { Int(TZif.read(bytes, at: i + 20 + 4 * $0, 4)) }
            (utIndicators, stdIndicators, leaps, times, types, chars) =
                (counts[0], counts[1], counts[2], counts[3], counts[4], counts[5])
        }

        /// The length of the data block that follows.
        func length(wide: Bool) -> Int {
            let timeSize = wide ? 8 : 4
            return times * (timeSize + 1) + types * 6 + chars + leaps * (timeSize + 4) + stdIndicators + utIndicators
        }
    }
}
