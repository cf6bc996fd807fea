/// The texts a long read repeats (zone names, streak ids, languages), each made into a String
/// once: a value equal to one seen before comes back as that String, without the allocation
/// and UTF-8 check a new one costs. Its bytes are looked up in a `ByteTable`; past `limit`
/// texts (a column that hardly repeats) it starts again empty, so it never holds more.
public struct InternedStrings {
    private var table = ByteTable(capacity: 1024)
    private var strings: [String] = []
    /// Texts held at most (every zone of the tzdata, many times over).
    static let limit = 4096

    public init() {}

    public mutating func string(_ bytes: UnsafeBufferPointer<UInt8>) -> String {
        let n = table.intern(bytes)
        if n < strings.count { return strings[n] }
        let made = String(decoding: bytes, as: UTF8.self)
        if strings.count == Self.limit {
            table.removeAll()
            strings.removeAll(keepingCapacity: true)
            _ = table.intern(bytes)
        }
        strings.append(made)
        return made
    }
}
