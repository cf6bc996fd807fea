import Synchronization

/// A set of hashes that are mixed already (`PreviewPlan.hash`), by open addressing on their top
/// bits: `Set<Int>` hashed each one again (SipHash), for each of a million notices. A slot keeps
/// the low 32 bits (half the table, more of it in the processor's caches): two hashes alike in
/// their slot and those bits answer "maybe", and a maybe is asked about, so this only ever costs
/// a question.
struct KeyHashes {
    private var slots: [UInt32]
    /// 64 minus log2 of the table's size: a hash's top bits pick its first slot.
    private var shift: UInt64

    /// The set of `hashes`, in a table at least twice their number.
    init(_ hashes: [Int]) {
        var size = 1024
        var shift: UInt64 = 54
        while size < 2 * hashes.count {
            size *= 2
            shift -= 1
        }
        self.shift = shift
        slots = [UInt32](repeating: 0, count: size)
        for hash in hashes { Self.place(Self.key(hash), in: &slots, shift: shift) }
    }

    func contains(_ hash: Int) -> Bool {
        let key = Self.key(hash)
        let mask = slots.count - 1
        var i = Int(truncatingIfNeeded: key.first >> shift)
        while true {
            let slot = slots[i]
            if slot == key.kept { return true }
            if slot == 0 { return false }
            i = (i + 1) & mask
        }
    }

    /// The slot's first choice (top bits) and what it keeps (low bits; 0 marks an empty slot,
    /// so 0 is kept as 1, which only makes a false "maybe").
    private static func key(_ hash: Int) -> (first: UInt64, kept: UInt32) {
        let h = UInt64(bitPattern: Int64(hash))
        return (h, max(1, UInt32(truncatingIfNeeded: h)))
    }

    private static func place(_ key: (first: UInt64, kept: UInt32), in slots: inout [UInt32], shift: UInt64) {
        let mask = slots.count - 1
        var i = Int(truncatingIfNeeded: key.first >> shift)
        while slots[i] != 0 {
            if slots[i] == key.kept { return }
            i = (i + 1) & mask
        }
        slots[i] = key.kept
    }
}

/// The ledger's key hashes, read once for every planning thread of one preview.
final class SharedLedgerHashes: Sendable {
    private let state = Mutex<(hashes: KeyHashes?, reading: Bool)>((nil, false))

    /// The hashes, from `build` the first time; nil while another thread builds them (the caller
    /// asks about its notices one by one meanwhile: waiting for the read kept a core idle).
    func hashes(_ build: () throws -> KeyHashes) throws -> KeyHashes? {
        let mine = state.withLock { s -> Bool? in
            if s.hashes != nil { return nil }
            if s.reading { return false }
            s.reading = true
            return true
        }
        switch mine {
        case nil: return state.withLock { $0.hashes }
        case false?: return nil
        case true?:
            do {
                let built = try build()
                state.withLock { $0 = (built, false) }
                return built
            } catch {
                state.withLock { $0.reading = false }
                throw error
            }
        }
    }
}
