import Foundation

/// Wall-clock timing and the JSON lines the driver collects.
enum Measure {
    static func time<T>(_ body: () throws -> T) rethrows -> (T, Double) {
        let start = ContinuousClock.now
        let value = try body()
        let d = ContinuousClock.now - start
        return (value, Double(d.components.seconds) + Double(d.components.attoseconds) / 1e18)
    }

    /// The best of `runs` timings (all of them reported too).
    static func best<T>(_ runs: Int, _ body: () throws -> T) rethrows -> (T, Double, [Double]) {
        var times: [Double] = []
        var last: T?
        for _ in 0..<runs {
            let (v, t) = try time(body)
            last = v
            times.append(t)
        }
        return (last!, times.min()!, times)
    }

    static func emit(_ fields: [String: Any]) {
        guard JSONSerialization.isValidJSONObject(fields) else {
            note("streakd-bench: not JSON: \(fields.map { "\($0.key): \(type(of: $0.value))" })")
            return
        }
        let data = try! JSONSerialization.data(withJSONObject: fields, options: [.sortedKeys])
        print(String(decoding: data, as: UTF8.self))
    }

    static func note(_ text: String) {
        FileHandle.standardError.write(Data((text + "\n").utf8))
    }

    static func meta(_ dir: String) throws -> [String: Any] {
        let data = try Data(contentsOf: URL(fileURLWithPath: dir + "/meta.json"))
        return try JSONSerialization.jsonObject(with: data) as! [String: Any]
    }
}
