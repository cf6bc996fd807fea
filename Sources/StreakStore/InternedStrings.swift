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

    /// The number of the text asked for last, or -1.
    private var last = -1

    public mutating func string(_ bytes: UnsafeBufferPointer<UInt8>) -> String {
        // Rows in key order often repeat the text of the row before (a user's check-ins, in one
        // zone): compared before hashing.
        if last >= 0, table.withKey(last, { sameBytes($0, bytes) }) { return strings[last] }
        let n = table.intern(bytes)
        if n < strings.count {
            last = n
            return strings[n]
        }
        let made = String(decoding: bytes, as: UTF8.self)
        if strings.count == Self.limit {
            table.removeAll()
            strings.removeAll(keepingCapacity: true)
            _ = table.intern(bytes)
        }
        strings.append(made)
        last = strings.count - 1
        return made
    }
}
