import StreakStore

/// Zone indexes by their name's bytes, in an open-addressing table keyed by the name's length and
/// its first and last eight bytes: a lookup for each of a million histories makes no string.
public struct ZoneNames {
    public init() {}

    private var keys = [UInt64](repeating: 0, count: 4096)
    private var slots = [Int32](repeating: -1, count: 4096)
    /// The names' bytes back to back (an array each was a reference to retain at each lookup).
    private var bytes: [UInt8] = []
    private var spans: [Range<Int>] = []
    private var indexes: [Int32] = []

    static func key(_ name: UnsafeBufferPointer<UInt8>) -> UInt64 {
        let raw = UnsafeRawBufferPointer(name)
        var key = UInt64(name.count)
        if name.count >= 8 {
            key = (key &* 0x9E37_79B9_7F4A_7C15) ^ raw.loadUnaligned(as: UInt64.self)
            key = (key &* 0x9E37_79B9_7F4A_7C15) ^ raw.loadUnaligned(fromByteOffset: name.count - 8, as: UInt64.self)
        } else {
            for b in name { key = (key << 8) | UInt64(b) }
        }
        return key &* 0xBF58_476D_1CE4_E5B9
    }

    public func find(_ name: UnsafeBufferPointer<UInt8>) -> Int32? {
        let key = Self.key(name)
        var slot = Int(truncatingIfNeeded: key >> 52)
        while slots[slot] >= 0 {
            let entry = Int(slots[slot])
            if keys[slot] == key && bytes.withUnsafeBufferPointer({ sameBytes(.init(rebasing: $0[spans[entry]]), name) }) {
                return indexes[entry]
            }
            slot = (slot + 1) & 4095
        }
        return nil
    }

    /// Remembers up to 2,048 names (a full table still answers, by string); false when full.
    @discardableResult
    public mutating func insert(_ name: UnsafeBufferPointer<UInt8>, _ index: Int32) -> Bool {
        guard spans.count < 2048 else { return false }
        let key = Self.key(name)
        var slot = Int(truncatingIfNeeded: key >> 52)
        while slots[slot] >= 0 { slot = (slot + 1) & 4095 }
        spans.append(bytes.count..<bytes.count + name.count)
        bytes.append(contentsOf: name)
        indexes.append(index)
        slots[slot] = Int32(spans.count - 1)
        keys[slot] = key
        return true
    }
}
