import Glibc

/// The texts a long read repeats (zone names, streak ids, languages), each made into a String
/// once: a value equal to one seen before comes back as that String, without the allocation
/// and UTF-8 check a new one costs. A small table by hash (enough for every zone of the tzdata
/// with few clashes); a clash replaces the older text.
public struct InternedStrings {
    private var slots = [String?](repeating: nil, count: 2048)

    public init() {}

    public mutating func string(_ bytes: UnsafeBufferPointer<UInt8>) -> String {
        let slot = Self.slot(bytes)
        if var known = slots[slot], known.withUTF8({ Self.same($0, bytes) }) {
            return known
        }
        let made = String(decoding: bytes, as: UTF8.self)
        slots[slot] = made
        return made
    }

    /// Eight bytes at a time, the length last (a byte at a time was most of the cost).
    private static func slot(_ bytes: UnsafeBufferPointer<UInt8>) -> Int {
        let raw = UnsafeRawBufferPointer(bytes)
        var hash: UInt64 = 0xCBF2_9CE4_8422_2325
        var i = 0
        while i + 8 <= raw.count {
            hash = (hash ^ raw.loadUnaligned(fromByteOffset: i, as: UInt64.self)) &* 0x9E37_79B9_7F4A_7C15
            i += 8
        }
        var tail = UInt64(truncatingIfNeeded: raw.count) << 56
        var shift: UInt64 = 0
        while i < raw.count {
            tail |= UInt64(raw[i]) << shift
            shift += 8
            i += 1
        }
        hash = (hash ^ tail) &* 0x9E37_79B9_7F4A_7C15
        return Int(truncatingIfNeeded: hash >> 53)
    }

    private static func same(_ a: UnsafeBufferPointer<UInt8>, _ b: UnsafeBufferPointer<UInt8>) -> Bool {
        guard a.count == b.count else { return false }
        guard let x = a.baseAddress, let y = b.baseAddress else { return true }
        return memcmp(x, y, a.count) == 0
    }
}
