/// SplitMix64: a small, fast, deterministic generator. The same seed gives
/// the same data set on every machine with the same tzdata.
struct SplitMix64 {
    var state: UInt64

    init(seed: UInt64) { state = seed }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// Uniform in `0..<n`.
    mutating func below(_ n: Int) -> Int { Int(next() % UInt64(n)) }

    /// A value picked by weight: `choices` are (weight, value) pairs.
    mutating func pick<T>(_ choices: [(Int, T)]) -> T {
        var r = below(choices.reduce(0) { $0 + $1.0 })
        for (w, v) in choices {
            if r < w { return v }
            r -= w
        }
        return choices[choices.count - 1].1
    }
}
