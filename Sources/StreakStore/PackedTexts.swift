/// Texts (or any bytes) end to end in one buffer, each a range of it: a batch of rows as one
/// value, with one allocation for all its texts instead of one per text (a million runs of a
/// preview, or check-ins of an import, would each make several). A text may be absent (nil).
public struct PackedTexts: Sendable {
    /// The texts' bytes, back to back.
    public private(set) var bytes: [UInt8] = []
    /// Each text's start in `bytes` (high 32 bits) and length (low 32), or -1 when absent.
    private var spans: [Int64] = []

    public init() {}

    /// How many texts it holds (absent ones too).
    public var count: Int { spans.count }

    /// Appends `text` (nil: an absent one); answers its number.
    @discardableResult
    public mutating func append(_ text: UnsafeBufferPointer<UInt8>?) -> Int {
        if let text {
            spans.append(Int64(bytes.count) << 32 | Int64(text.count))
            bytes.append(contentsOf: text)
        } else {
            spans.append(-1)
        }
        return spans.count - 1
    }

    @discardableResult
    public mutating func append(_ text: String?) -> Int {
        guard var text else { return append(UnsafeBufferPointer<UInt8>?.none) }
        return text.withUTF8 { append($0) }
    }

    /// Where text `i` is in `bytes`; nil when it is absent.
    public func range(_ i: Int) -> Range<Int>? {
        let span = spans[i]
        guard span >= 0 else { return nil }
        let start = Int(span >> 32)
        return start..<start + Int(span & 0xFFFF_FFFF)
    }

    /// Text `i` as a String (nil when absent).
    public func string(_ i: Int) -> String? {
        range(i).map { r in bytes.withUnsafeBufferPointer { String(decoding: $0[r], as: UTF8.self) } }
    }

    /// Text `i`'s bytes, copied.
    public func array(_ i: Int) -> [UInt8]? { range(i).map { Array(bytes[$0]) } }

    /// Empties it, keeping its room for the next batch.
    public mutating func removeAll() {
        bytes.removeAll(keepingCapacity: true)
        spans.removeAll(keepingCapacity: true)
    }

    /// Makes room for `texts` more texts of `bytes` bytes in all.
    public mutating func reserve(texts: Int, bytes count: Int) {
        spans.reserveCapacity(spans.count + texts)
        bytes.reserveCapacity(bytes.count + count)
    }
}
