/// The parameters of one statement, in text format, kept in one buffer (each value's text ends
/// with a NUL): adding a value allocates nothing once the buffer has grown. A batch of ten
/// thousand rows goes as a few array parameters (`unnest($1::bigint[], $2::text[])`), each one
/// value here.
public struct PGParameters {
    var bytes: [UInt8] = []
    /// Where each value starts in `bytes`; -1 for NULL.
    var starts: [Int] = []
    /// The first value PostgreSQL could not take (a NUL byte in text), reported when sent.
    var problem: String?

    public init() {}

    /// Room for `bytes` bytes of text, for a large batch built value by value.
    public init(reservingBytes capacity: Int) { bytes.reserveCapacity(capacity) }

    public init(_ values: [any PGEncodable]) {
        for value in values { append(value) }
    }

    public var count: Int { starts.count }

    public mutating func append<T: PGEncodable>(_ value: T) {
        let start = bytes.count
        guard value.appendPGText(to: &bytes) else {
            starts.append(-1)
            return
        }
        if problem == nil, bytes[start...].contains(0) {
            problem = "parameter $\(count + 1) contains a NUL byte, which PostgreSQL text cannot hold"
        }
        bytes.append(0)
        starts.append(start)
    }

    public mutating func appendNull() { starts.append(-1) }

    /// Empties the parameters but keeps their memory, for the next statement of a loop.
    public mutating func removeAll() {
        bytes.removeAll(keepingCapacity: true)
        starts.removeAll(keepingCapacity: true)
        problem = nil
    }

    /// Calls `body` with libpq's `paramValues`: one C string per value, nil for NULL.
    func withValuePointers<R>(_ body: (UnsafePointer<UnsafePointer<CChar>?>?) -> R) -> R {
        bytes.withUnsafeBytes { buffer in
            let pointers: [UnsafePointer<CChar>?] = starts.map { start in
                start < 0 ? nil : (buffer.baseAddress! + start).assumingMemoryBound(to: CChar.self)
            }
            return pointers.withUnsafeBufferPointer { body($0.baseAddress) }
        }
    }
}
