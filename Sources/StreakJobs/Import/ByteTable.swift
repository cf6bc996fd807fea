/// A compact map from short byte strings (user ids, zone names) to 64-bit
/// values (32-bit through most calls), its keys numbered 0, 1, 2… in the order they were added.
///
/// Built for a million users looked up seven million times in random order:
/// each entry sits in one array as value, length and bytes, and each slot of
/// the open-addressing table holds the entry's place and part of its hash.
/// A lookup touches two cache lines, a slot and its entry; a million 8-byte
/// ids take about 40 MB (a `[String: UInt32]` needs more, and allocates every
/// id over 15 bytes).
struct ByteTable {
    /// Entries end to end: value (8 bytes) and key length (4 bytes), little-endian, key bytes.
    private var entries: [UInt8] = []
    /// Where each key's entry starts, by number.
    private var starts: [UInt32] = []
    /// 0 is empty; else the upper half of the key's hash, and its entry's start + 1.
    private var slots: [UInt64]
    private var mask: Int

    init(capacity: Int = 8) {
        var size = 16
        while size < capacity * 2 { size *= 2 }
        slots = Array(repeating: 0, count: size)
        mask = size - 1
    }

    var count: Int { starts.count }

    /// The key's value, or nil.
    func value(_ key: UnsafeBufferPointer<UInt8>) -> UInt32? { wideValue(key).map { UInt32(truncatingIfNeeded: $0) } }

    func wideValue(_ key: UnsafeBufferPointer<UInt8>) -> UInt64? {
        entry(key, hash: Self.hash(key)).map { start in
            entries.withUnsafeBufferPointer { Self.value(in: $0, at: start) }
        }
    }

    func wideValue(_ key: String) -> UInt64? {
        var key = key
        return key.withUTF8 { wideValue($0) }
    }

    func value(_ key: String) -> UInt32? {
        var key = key
        return key.withUTF8 { value($0) }
    }

    /// The values of several keys, into `values`. Every key's first slot is read
    /// before any entry, and every entry a first slot names is compared before any
    /// key probes further: the memory reads of one key do not wait for another's,
    /// so they overlap, where lookups one after another wait for each in turn.
    func values(_ keys: [UnsafeBufferPointer<UInt8>], into values: inout [UInt64?]) {
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
                    Self.key(in: entries, at: start).elementsEqual(key)
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
    mutating func add(_ key: UnsafeBufferPointer<UInt8>, value: UInt32) -> UInt32? {
        add(key, wideValue: UInt64(value)).map { UInt32(truncatingIfNeeded: $0) }
    }

    @discardableResult
    mutating func add(_ key: UnsafeBufferPointer<UInt8>, wideValue value: UInt64) -> UInt64? {
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
    mutating func add(_ key: String, value: UInt32) -> UInt32? {
        var key = key
        return key.withUTF8 { add($0, value: value) }
    }

    @discardableResult
    mutating func add(_ key: UnsafeBufferPointer<UInt8>, value: UInt64) -> UInt64? { add(key, wideValue: value) }

    /// The key's number, the key added when new: for tables whose values are their keys' numbers.
    mutating func intern(_ key: UnsafeBufferPointer<UInt8>) -> Int {
        Int(add(key, value: UInt32(count)) ?? UInt32(count - 1))
    }

    mutating func intern(_ key: String) -> Int {
        var key = key
        return key.withUTF8 { intern($0) }
    }

    /// Calls `body` with key `n`'s bytes.
    func withKey<R>(_ n: Int, _ body: (UnsafeBufferPointer<UInt8>) throws -> R) rethrows -> R {
        try entries.withUnsafeBufferPointer { try body(Self.key(in: $0, at: Int(starts[n]))) }
    }

    func key(_ n: Int) -> String { withKey(n) { String(decoding: $0, as: UTF8.self) } }

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
                        let stored = Self.key(in: entries, at: start)
                        if stored.count == key.count && memoryEqual(stored, key) { return start }
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

    /// Swift's `Hasher`, seeded at random per process: crafted input cannot make the probes long.
    private static func hash(_ key: UnsafeBufferPointer<UInt8>) -> UInt64 {
        var h = Hasher()
        h.combine(bytes: UnsafeRawBufferPointer(key))
        return UInt64(bitPattern: Int64(h.finalize()))
    }
}

private func memoryEqual(_ a: UnsafeBufferPointer<UInt8>, _ b: UnsafeBufferPointer<UInt8>) -> Bool {
    for i in 0..<a.count where a[i] != b[i] { return false }
    return true
}
