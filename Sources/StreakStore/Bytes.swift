import Glibc

/// Byte strings compared as SQLite's BINARY collation and PostgreSQL's collation C compare text:
/// by `memcmp`, a shorter prefix first. Below, equal to or above 0. The one order streakd sorts
/// and checks bytes by (the import's rows, the stores' pairs).
public func compareBytes(_ a: UnsafeBufferPointer<UInt8>, _ b: UnsafeBufferPointer<UInt8>) -> Int {
    let n = min(a.count, b.count)
    if n > 0, case let c = memcmp(a.baseAddress!, b.baseAddress!, n), c != 0 { return Int(c) }
    return a.count - b.count
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
