/// Texts end to end in one buffer, each known by its number (from 0, in the order added): many
/// short texts (the fields of a batch of rows, the pairs an import touched) held in two arrays,
/// not an allocation each, and handed between threads as a value. The one such buffer of the
/// import's path, from the file's reader to either store.
public struct PackedTexts: Sendable, Equatable {
    private var bytes: [UInt8] = []
    /// Where each text ends in `bytes`; text n starts where text n - 1 ends.
    private var ends: [UInt32] = []

    /// The bytes all texts together may take (their ends are 32-bit).
    public static let maxBytes = Int(UInt32.max)

    public init() {}

    /// Room for `texts` texts of `bytes` bytes in all.
    public init(reservingTexts texts: Int, bytes: Int) {
        ends.reserveCapacity(texts)
        self.bytes.reserveCapacity(bytes)
    }

    /// How many texts.
    public var count: Int { ends.count }
    public var isEmpty: Bool { ends.isEmpty }
    /// The bytes of all texts together.
    public var byteCount: Int { bytes.count }
    /// The memory a text takes besides its bytes.
    public static let costPerText = MemoryLayout<UInt32>.stride

    /// Adds a text; its number is the count before.
    public mutating func append(_ text: UnsafeBufferPointer<UInt8>) {
        precondition(bytes.count + text.count <= Self.maxBytes, "PackedTexts holds at most 4 GiB")
        bytes.append(contentsOf: text)
        ends.append(UInt32(truncatingIfNeeded: bytes.count))
    }

    public mutating func append(_ text: String) {
        var text = text
        text.withUTF8 { append($0) }
    }

    /// Adds the texts of `other`, numbered after these.
    public mutating func append(contentsOf other: PackedTexts) {
        precondition(bytes.count + other.bytes.count <= Self.maxBytes, "PackedTexts holds at most 4 GiB")
        let base = UInt32(truncatingIfNeeded: bytes.count)
        bytes.append(contentsOf: other.bytes)
        ends.reserveCapacity(ends.count + other.ends.count)
        for end in other.ends { ends.append(base + end) }
    }

    /// Drops every text (keeping the room, unless told not to).
    public mutating func removeAll(keepingCapacity: Bool = true) {
        bytes.removeAll(keepingCapacity: keepingCapacity)
        ends.removeAll(keepingCapacity: keepingCapacity)
    }

    /// Text `n` as a String.
    public func string(_ n: Int) -> String { withText(n) { String(decoding: $0, as: UTF8.self) } }

    /// Calls `body` with text `n`'s bytes, read during the call only.
    public func withText<R>(_ n: Int, _ body: (UnsafeBufferPointer<UInt8>) throws -> R) rethrows -> R {
        try withTexts { try body($0[n]) }
    }

    /// Calls `body` with every text at hand (`Texts`), for a loop over many: valid during the call only.
    public func withTexts<R>(_ body: (Texts) throws -> R) rethrows -> R {
        try bytes.withUnsafeBufferPointer { b in try ends.withUnsafeBufferPointer { e in try body(Texts(bytes: b, ends: e)) } }
    }

    /// The texts while `withTexts` runs: text n's bytes by `texts[n]`.
    public struct Texts {
        let bytes: UnsafeBufferPointer<UInt8>
        let ends: UnsafeBufferPointer<UInt32>

        public var count: Int { ends.count }

        public subscript(n: Int) -> UnsafeBufferPointer<UInt8> {
            let start = n == 0 ? 0 : Int(ends[n - 1])
            return UnsafeBufferPointer(rebasing: bytes[start..<Int(ends[n])])
        }
    }
}
