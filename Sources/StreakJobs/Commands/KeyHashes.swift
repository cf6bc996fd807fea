import Synchronization

/// A set of hashes that are mixed already (`PreviewPlan.hash`), by open addressing on their top
/// bits: `Set<Int>` hashed each one again (SipHash), for each of a million notices.
struct KeyHashes {
    private var slots = [UInt64](repeating: 0, count: 1024)
    private var count = 0
    /// 64 minus log2 of the table's size: a hash's top bits pick its first slot.
    private var shift: UInt64 = 54

    init() {}

    mutating func insert(_ hash: Int) {
        if 2 * (count + 1) > slots.count { grow() }
        if Self.place(Self.key(hash), in: &slots, shift: shift) { count += 1 }
    }

    func contains(_ hash: Int) -> Bool {
        let key = Self.key(hash)
        let mask = slots.count - 1
        var i = Int(truncatingIfNeeded: key >> shift)
        while true {
            let slot = slots[i]
            if slot == key { return true }
            if slot == 0 { return false }
            i = (i + 1) & mask
        }
    }

    /// 0 marks an empty slot, so a hash of 0 is kept as 1 (it only makes a false "maybe").
    private static func key(_ hash: Int) -> UInt64 { max(1, UInt64(bitPattern: Int64(hash))) }

    private static func place(_ key: UInt64, in slots: inout [UInt64], shift: UInt64) -> Bool {
        let mask = slots.count - 1
        var i = Int(truncatingIfNeeded: key >> shift)
        while slots[i] != 0 {
            if slots[i] == key { return false }
            i = (i + 1) & mask
        }
        slots[i] = key
        return true
    }

    private mutating func grow() {
        var bigger = [UInt64](repeating: 0, count: 2 * slots.count)
        shift -= 1
        for key in slots where key != 0 { _ = Self.place(key, in: &bigger, shift: shift) }
        slots = bigger
    }
}

/// The ledger's key hashes, read once for every planning thread of one preview.
final class SharedLedgerHashes: Sendable {
    private let read = Mutex<KeyHashes?>(nil)

    /// The hashes, from `build` the first time.
    func hashes(_ build: () throws -> KeyHashes) throws -> KeyHashes {
        try read.withLock { known in
            if let known { return known }
            let built = try build()
            known = built
            return built
        }
    }
}
