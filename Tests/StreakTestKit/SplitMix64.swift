/// SplitMix64, the tests' one seeded generator: the same numbers for the same seed on every
/// machine, so a random test fails the same way every run.
public struct SplitMix64: RandomNumberGenerator {
    public var state: UInt64
    public init(state: UInt64) { self.state = state }
    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// A number from 0 to n - 1.
    public mutating func below(_ n: Int) -> Int { Int(next() % UInt64(n)) }

    /// One of `choices`.
    public mutating func pick<T>(_ choices: [T]) -> T { choices[below(choices.count)] }

    /// True once in `n` times.
    public mutating func oneIn(_ n: Int) -> Bool { below(n) == 0 }
}
