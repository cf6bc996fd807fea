// "Next local 20:00" for many (user, zone) pairs spread over every zone of the
// system tzdata, at instants spread over 2026: the TZif tables (TransitionRules)
// against Foundation. Run with Benchmarks/zone-speed [pairs].
import Foundation
import StreakCore

let pairs = CommandLine.arguments.dropFirst().first.flatMap { Int($0) } ?? 1_000_000
let root = "/usr/share/zoneinfo"

func zoneNames() -> [String] {
    var names: [String] = []
    for case let path as String in FileManager.default.enumerator(atPath: root)! {
        let first = path.split(separator: "/").first.map(String.init) ?? path
        if ["posix", "right"].contains(first) || ["localtime", "posixrules", "Factory"].contains(path) { continue }
        if let data = FileManager.default.contents(atPath: root + "/" + path), data.starts(with: "TZif".utf8) {
            names.append(path)
        }
    }
    return names.sorted()
}

func seconds(_ d: Duration) -> Double {
    Double(d.components.seconds) + Double(d.components.attoseconds) / 1e18
}

func report(_ label: String, _ d: Duration, baseline: Double? = nil) -> Double {
    let rate = Double(pairs) / seconds(d)
    let ratio = baseline.map { String(format: "  (%.0f× Foundation Calendar)", rate / $0) } ?? ""
    print(
        label.padding(toLength: 50, withPad: " ", startingAt: 0)
            + String(format: "%8.3f s  %12.0f /s  %8.1f ns each", seconds(d), rate, 1e9 / rate) + ratio)
    return rate
}

let clock = ContinuousClock()
let names = zoneNames()
var fast: [Zone] = []
let built = clock.measure {
    for name in names {
        let bytes = [UInt8](FileManager.default.contents(atPath: root + "/" + name)!)
        fast.append(Zone(identifier: name, rules: TransitionRules(table: TZif.table(bytes)!)))
    }
}
let viaFoundation = names.map { Zone(identifier: $0, rules: FoundationZoneRules(identifier: $0)!) }
let calendars = names.map {
    var c = Calendar(identifier: .gregorian)
    c.timeZone = TimeZone(identifier: $0)!
    return c
}
print("\(names.count) zones; tables built from TZif files in \(String(format: "%.1f", seconds(built) * 1000)) ms")

// Pairs: a zone and a "now" each, from a fixed linear congruential sequence.
var zoneOf = [Int](repeating: 0, count: pairs)
var nowOf = [Int64](repeating: 0, count: pairs)
var x: UInt64 = 42
let start2026: Int64 = 1_767_225_600
for i in 0..<pairs {
    x = x &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
    zoneOf[i] = Int(x >> 33) % names.count
    nowOf[i] = start2026 + Int64((x >> 7) % UInt64(365 * 86400))
}

@inline(never)
func nextEight(_ zones: [Zone], into due: inout [Int64]) {
    for i in 0..<pairs {
        let z = zones[zoneOf[i]]
        let now = Instant(seconds: nowOf[i])
        let today = z.date(of: now)
        let eight = z.instant(of: today, secondsIntoDay: 72000)
        due[i] = (eight > now ? eight : z.instant(of: today + 1, secondsIntoDay: 72000)).seconds
    }
}

@inline(never)
func nextEightCalendar(into due: inout [Int64]) {
    for i in 0..<pairs {
        let calendar = calendars[zoneOf[i]]
        let now = Date(timeIntervalSince1970: TimeInterval(nowOf[i]))
        let today = calendar.startOfDay(for: now)
        var eight = calendar.date(bySettingHour: 20, minute: 0, second: 0, of: today)!
        if eight <= now {
            let tomorrow = calendar.date(byAdding: .day, value: 1, to: today)!
            eight = calendar.date(bySettingHour: 20, minute: 0, second: 0, of: tomorrow)!
        }
        due[i] = Int64(eight.timeIntervalSince1970)
    }
}

var dueFast = [Int64](repeating: 0, count: pairs)
var dueSearch = [Int64](repeating: 0, count: pairs)
var dueCalendar = [Int64](repeating: 0, count: pairs)
print("next local 20:00 for \(pairs) (user, zone) pairs, one thread:")
let calendarRate = report(
    "Foundation Calendar (startOfDay, bySettingHour)", clock.measure { nextEightCalendar(into: &dueCalendar) })
_ = report(
    "Zone over Foundation TimeZone offsets", clock.measure { nextEight(viaFoundation, into: &dueSearch) },
    baseline: calendarRate)
var best = Duration.seconds(1000)
for _ in 0..<5 { best = min(best, clock.measure { nextEight(fast, into: &dueFast) }) }
let fastRate = report("Zone over TZif tables (best of 5)", best, baseline: calendarRate)
print(String(format: "PostgreSQL 15 figure (1M in 0.8 s on 2 workers): %.1f× that", fastRate / 1.25e6))
let differ = (0..<pairs).filter { dueFast[$0] != dueSearch[$0] }.count
let differCalendar = (0..<pairs).filter { dueFast[$0] != dueCalendar[$0] }.count
print("answers differing: tables vs Zone over Foundation offsets \(differ); tables vs Calendar \(differCalendar)")
