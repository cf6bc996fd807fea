/// The one table keyed by bytes: short byte strings (user ids, zone names, streak ids) mapped to
/// 64-bit values, its keys numbered 0, 1, 2… in the order they were added.
///
/// Built for a million users looked up seven million times in random order (an import's
/// checks): each entry sits in one array as value, length and bytes, and each slot of the
/// open-addressing table holds the entry's place and part of its hash. A lookup touches two
/// cache lines, a slot and its entry; a million 8-byte ids take about 40 MB (a
/// `[String: UInt32]` needs more, and allocates every id over 15 bytes). Also behind
/// `InternedStrings` (texts a long read repeats).
public struct ByteTable: Sendable {
    /// Entries end to end: value (8 bytes) and key length (4 bytes), little-endian, key bytes.
    private var entries: [UInt8] = []
    /// Where each key's entry starts, by number.
    private var starts: [UInt32] = []
    /// 0 is empty; else the upper half of the key's hash, and its entry's start + 1.
    private var slots: [UInt64]
    private var mask: Int

    public init(capacity: Int = 8) {
        var size = 16
        while size < capacity * 2 { size *= 2 }
        slots = Array(repeating: 0, count: size)
        mask = size - 1
    }

    public var count: Int { starts.count }

    /// The key's value, or nil.
    public func value(_ key: UnsafeBufferPointer<UInt8>) -> UInt64? {
        entry(key, hash: Self.hash(key)).map { start in
            entries.withUnsafeBufferPointer { Self.value(in: $0, at: start) }
        }
    }

    public func value(_ key: String) -> UInt64? {
        var key = key
        return key.withUTF8 { value($0) }
    }

    /// The values of several keys, into `values`. Every key's first slot is read before any
    /// entry, and every entry a first slot names is compared before any key probes further: the
    /// memory reads of one key do not wait for another's, so they overlap, where lookups one
    /// after another wait for each in turn.
    public func values(_ keys: [UnsafeBufferPointer<UInt8>], into values: inout [UInt64?]) {
        values.removeAll(keepingCapacity: true)
        var hashes: [UInt64] = []
        var first: [UInt64] = []
        hashes.reserveCapacity(keys.count)
        first.reserveCapacity(keys.count)
        slots.withUnsafeBufferPointer { slots in
            for key in keys {
                let hash = Self.hash(key)
                hashes.append(hash)
                first.append(slots[Int(truncatingIfNeeded: hash) & mask])
            }
        }
        entries.withUnsafeBufferPointer { entries in
            for (k, key) in keys.enumerated() {
                let slot = first[k]
                guard slot != 0 else {
                    values.append(nil)
                    continue
                }
                let start = Int(slot & 0xFFFF_FFFF) - 1
                if slot & 0xFFFF_FFFF_0000_0000 == hashes[k] & 0xFFFF_FFFF_0000_0000,
                    sameBytes(Self.key(in: entries, at: start), key)
                {
                    values.append(Self.value(in: entries, at: start))
                } else {
                    values.append(nil)  // settled below
                }
            }
        }
        for (k, key) in keys.enumerated() where values[k] == nil && first[k] != 0 {
            values[k] = entry(key, hash: hashes[k]).map { start in
                entries.withUnsafeBufferPointer { Self.value(in: $0, at: start) }
            }
        }
    }

    /// Adds the key with `value` unless it is there; answers the value it had, or nil when it is new.
    @discardableResult
    public mutating func add(_ key: UnsafeBufferPointer<UInt8>, value: UInt64) -> UInt64? {
        let hash = Self.hash(key)
        if let start = entry(key, hash: hash) {
            return entries.withUnsafeBufferPointer { Self.value(in: $0, at: start) }
        }
        if (count + 1) * 2 > slots.count { grow() }
        let start = entries.count
        withUnsafeBytes(of: value.littleEndian) { entries.append(contentsOf: $0) }
        withUnsafeBytes(of: UInt32(key.count).littleEndian) { entries.append(contentsOf: $0) }
        entries.append(contentsOf: key)
        starts.append(UInt32(start))
        place(start, hash: hash)
        return nil
    }

    @discardableResult
    public mutating func add(_ key: String, value: UInt64) -> UInt64? {
        var key = key
        return key.withUTF8 { add($0, value: value) }
    }

    /// The key's number, the key added when new: for tables whose values are their keys' numbers.
    public mutating func intern(_ key: UnsafeBufferPointer<UInt8>) -> Int {
        Int(add(key, value: UInt64(count)) ?? UInt64(count - 1))
    }

    public mutating func intern(_ key: String) -> Int {
        var key = key
        return key.withUTF8 { intern($0) }
    }

    /// Calls `body` with key `n`'s bytes.
    public func withKey<R>(_ n: Int, _ body: (UnsafeBufferPointer<UInt8>) throws -> R) rethrows -> R {
        try entries.withUnsafeBufferPointer { try body(Self.key(in: $0, at: Int(starts[n]))) }
    }

    public func key(_ n: Int) -> String { withKey(n) { String(decoding: $0, as: UTF8.self) } }

    /// Empties the table, keeping its room.
    public mutating func removeAll() {
        entries.removeAll(keepingCapacity: true)
        starts.removeAll(keepingCapacity: true)
        for i in slots.indices { slots[i] = 0 }
    }

    /// Where the key's entry starts, or nil.
    private func entry(_ key: UnsafeBufferPointer<UInt8>, hash: UInt64) -> Int? {
        let tag = hash & 0xFFFF_FFFF_0000_0000
        var i = Int(truncatingIfNeeded: hash) & mask
        return slots.withUnsafeBufferPointer { slots in
            entries.withUnsafeBufferPointer { entries in
                while true {
                    let slot = slots[i]
                    if slot == 0 { return nil }
                    if slot & 0xFFFF_FFFF_0000_0000 == tag {
                        let start = Int(slot & 0xFFFF_FFFF) - 1
                        if sameBytes(Self.key(in: entries, at: start), key) { return start }
                    }
                    i = (i + 1) & mask
                }
            }
        }
    }

    private mutating func place(_ start: Int, hash: UInt64) {
        var i = Int(truncatingIfNeeded: hash) & mask
        while slots[i] != 0 { i = (i + 1) & mask }
        slots[i] = (hash & 0xFFFF_FFFF_0000_0000) | UInt64(start + 1)
    }

    private mutating func grow() {
        slots = Array(repeating: 0, count: slots.count * 2)
        mask = slots.count - 1
        for n in 0..<count {
            let start = Int(starts[n])
            place(start, hash: withKey(n) { Self.hash($0) })
        }
    }

    private static func value(in entries: UnsafeBufferPointer<UInt8>, at start: Int) -> UInt64 {
        UnsafeRawPointer(entries.baseAddress! + start).loadUnaligned(as: UInt64.self).littleEndian
    }

    private static func key(in entries: UnsafeBufferPointer<UInt8>, at start: Int) -> UnsafeBufferPointer<UInt8> {
        let length = Int(UnsafeRawPointer(entries.baseAddress! + start + 8).loadUnaligned(as: UInt32.self).littleEndian)
        return UnsafeBufferPointer(rebasing: entries[(start + 12)..<(start + 12 + length)])
    }

    /// Seeded at random per process, so input cannot be made to clash on purpose without
    /// knowing the seed; eight bytes a step (`eachHashWord`), each multiplied in and its upper
    /// bits folded down. Swift's `Hasher` (SipHash) took half again as long for the texts
    /// `InternedStrings` reads, where hashing is most of the work.
    private static let seed: UInt64 = {
        var h = Hasher()
        h.combine(0x5EED)
        return UInt64(bitPattern: Int64(h.finalize()))
    }()

    private static func hash(_ key: UnsafeBufferPointer<UInt8>) -> UInt64 {
        var h = seed
        eachHashWord(UnsafeRawBufferPointer(key)) { word in
            h = (h ^ word) &* 0x9E37_79B9_7F4A_7C15
            h ^= h >> 29
        }
        return h
    }
}
