/// HMAC-SHA256 (RFC 2104) over the project's `SHA256`: the webhooks' signatures (SPEC §12).
public enum HMAC {
    /// The 32-byte authentication code of `message` under `key`.
    public static func sha256(key: some Collection<UInt8>, message: some Collection<UInt8>) -> [UInt8] {
        let blockSize = 64
        var block = key.count > blockSize ? SHA256.digest(Array(key)) : Array(key)
        block += [UInt8](repeating: 0, count: blockSize - block.count)
        let inner = SHA256.digest(block.map { $0 ^ 0x36 } + Array(message))
        return SHA256.digest(block.map { $0 ^ 0x5c } + inner)
    }
}
