/// HMAC-SHA256 (RFC 2104) over the project's `SHA256`: the webhooks' signatures (SPEC §12).
public enum HMAC {
    /// The 32-byte authentication code of `message` under `key`.
    ///
    /// Plain arrays, not generic collections: unspecialized across modules, the copies went a
    /// byte at a time.
    public static func sha256(key: [UInt8], message: [UInt8]) -> [UInt8] {
        let blockSize = 64
        var block = key.count > blockSize ? SHA256.digest(key) : key
        block += repeatElement(0, count: blockSize - block.count)
        // Each buffer made once, with room for SHA-256's padding (`digest` pads it in place).
        var inner: [UInt8] = []
        inner.reserveCapacity(blockSize + message.count + 72)
        for b in block { inner.append(b ^ 0x36) }
        inner += message
        var outer: [UInt8] = []
        outer.reserveCapacity(blockSize + 32 + 72)
        for b in block { outer.append(b ^ 0x5c) }
        outer += SHA256.digest(inner)
        return SHA256.digest(outer)
    }
}
