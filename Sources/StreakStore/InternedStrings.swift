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
        if var known = slots[slot], known.withUTF8({ sameBytes($0, bytes) }) {
            return known
        }
        let made = String(decoding: bytes, as: UTF8.self)
        slots[slot] = made
        return made
    }

    /// Eight bytes at a time (`eachHashWord`; a byte at a time was most of the cost).
    private static func slot(_ bytes: UnsafeBufferPointer<UInt8>) -> Int {
        var hash: UInt64 = 0xCBF2_9CE4_8422_2325
        eachHashWord(UnsafeRawBufferPointer(bytes)) { hash = (hash ^ $0) &* 0x9E37_79B9_7F4A_7C15 }
        return Int(truncatingIfNeeded: hash >> 53)
    }

}

/// Whether two runs of bytes are equal (memcmp: a loop of bytes, or the generic `elementsEqual`,
/// cost a percent of a preview).
public func sameBytes(_ a: UnsafeBufferPointer<UInt8>, _ b: UnsafeBufferPointer<UInt8>) -> Bool {
    sameBytes(UnsafeRawBufferPointer(a), UnsafeRawBufferPointer(b))
}

public func sameBytes(_ a: UnsafeRawBufferPointer, _ b: UnsafeRawBufferPointer) -> Bool {
    guard a.count == b.count else { return false }
    guard let x = a.baseAddress, let y = b.baseAddress else { return true }
    return memcmp(x, y, a.count) == 0
}

/// Bytes as 64-bit words to hash: eight at a time, then the rest with the count in the top byte
/// (so that parts hashed one after another, "ab" and "c" or "a" and "bc", differ).
@inlinable
public func eachHashWord(_ bytes: UnsafeRawBufferPointer, _ body: (UInt64) -> Void) {
    var i = 0
    while i + 8 <= bytes.count {
        body(bytes.loadUnaligned(fromByteOffset: i, as: UInt64.self))
        i += 8
    }
    var tail = UInt64(truncatingIfNeeded: bytes.count) << 56
    var shift: UInt64 = 0
    while i < bytes.count {
        tail |= UInt64(bytes[i]) << shift
        shift += 8
        i += 1
    }
    body(tail)
}
