/// Users' ids and current zones, a batch as read from the store (`UserReading.userZones`): user
/// k's id is text 2k of `texts`, their zone text 2k + 1.
public struct UserZones: Sendable {
    public private(set) var texts = PackedTexts()

    /// Users a batch holds before a store hands it over.
    public static let batch = 4096

    public init() {}

    public var count: Int { texts.count / 2 }

    public mutating func append(id: UnsafeBufferPointer<UInt8>, zone: UnsafeBufferPointer<UInt8>) {
        texts.append(id)
        texts.append(zone)
    }

    public mutating func append(id: String, zone: String) {
        texts.append(id)
        texts.append(zone)
    }

    public mutating func removeAll() { texts.removeAll() }

    /// Calls `body` with each user's id and zone, bytes read during the call only.
    public func forEach(_ body: (_ id: UnsafeBufferPointer<UInt8>, _ zone: UnsafeBufferPointer<UInt8>) throws -> Void)
        rethrows
    {
        try texts.withTexts { t in
            for k in 0..<count { try body(t[2 * k], t[2 * k + 1]) }
        }
    }
}
