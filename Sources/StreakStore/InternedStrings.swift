/// The texts a long read repeats (zone names, streak ids, languages), each made into a String
/// once: a value equal to one seen before comes back as that String, without the allocation
/// and UTF-8 check a new one costs. A small table by hash (enough for every zone of the tzdata
/// with few clashes); a clash replaces the older text.
public struct InternedStrings {
    private var slots = [String?](repeating: nil, count: 2048)

    public init() {}

    public mutating func string(_ bytes: UnsafeBufferPointer<UInt8>) -> String {
        var hash: UInt32 = 2_166_136_261  // FNV-1a
        for byte in bytes { hash = (hash ^ UInt32(byte)) &* 16_777_619 }
        let slot = Int(hash & 2047)
        if var known = slots[slot], known.withUTF8({ Self.same($0, bytes) }) {
            return known
        }
        let made = String(decoding: bytes, as: UTF8.self)
        slots[slot] = made
        return made
    }

    private static func same(_ a: UnsafeBufferPointer<UInt8>, _ b: UnsafeBufferPointer<UInt8>) -> Bool {
        guard a.count == b.count else { return false }
        for i in 0..<a.count where a[i] != b[i] { return false }
        return true
    }
}
