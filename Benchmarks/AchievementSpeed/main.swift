// Achievements.evaluate for one user with 3 streaks × 2 years of daily check-ins (2,190
// check-ins, a tenth of them tagged), zones from the system's TZif files as in a run.
// Run with Benchmarks/achievement-speed [evaluations].
import Foundation
import StreakCore

let runs = CommandLine.arguments.dropFirst().first.flatMap { Int($0) } ?? 2000

func zone(_ name: String) -> Zone {
    let bytes = [UInt8](FileManager.default.contents(atPath: "/usr/share/zoneinfo/" + name)!)
    return Zone(identifier: name, rules: TransitionRules(table: TZif.table(bytes)!))
}

let berlin = zone("Europe/Berlin")
let now = RFC3339.parse("2027-06-01T18:00:00Z")!
let first = berlin.date(of: now) - 730
var streaks: [UserStreak] = []
for (s, id) in ["daily", "workout", "reading"].enumerated() {
    var checkins: [CheckIn] = []
    var meta: [Metadata] = []
    for d in 0..<730 {
        // One missed date a month (a freeze covers some), varied hours.
        if (d + 11 * s) % 31 == 30 { continue }
        let t = berlin.instant(of: first + d, secondsIntoDay: 6 * 3600 + (d * 977 + s * 3301) % 50_000)
        checkins.append(CheckIn(instant: t, zone: berlin, id: "e\(s)-\(d)", storedAt: t))
        meta.append(d % 10 == 0 ? [("kind", .string(d % 20 == 0 ? "social" : "knowledge"))] : [])
    }
    let history = StreakHistory(checkins: checkins, zones: [ZoneChange(since: Instant(seconds: 0), zone: berlin)])
    streaks.append(UserStreak(streak: id, history: history, meta: meta))
}
let settings = AchievementSettings()
let clock = ContinuousClock()

func perRun(_ d: Duration) -> Double {
    (Double(d.components.seconds) * 1e6 + Double(d.components.attoseconds) / 1e12) / Double(runs)
}

@inline(never)
func measure(_ label: String, _ body: () -> Int) {
    var best = Double.infinity
    var check = 0
    for _ in 0..<3 {
        var sum = 0
        let d = clock.measure { for _ in 0..<runs { sum &+= body() } }
        best = min(best, perRun(d))
        check = sum
    }
    print(label.padding(toLength: 58, withPad: " ", startingAt: 0) + String(format: "%9.1f µs", best) + "  (\(check))")
}

let sample = Achievements.evaluate(streaks, settings: settings, at: now)
print(
    "\(streaks.map { $0.history.checkins.count }.reduce(0, +)) check-ins in 3 streaks; xp \(sample.xp), level "
        + "\(sample.level), unlocked \(sample.badges.filter { $0.unlockedAt != nil }.count) of \(sample.badges.count)")
measure("Engine.evaluate of the 3 streaks (status does this anyway)") {
    streaks.reduce(0) { $0 + Engine.evaluate($1.history, at: now).longest }
}
measure("Achievements.evaluate, engine included") {
    Achievements.evaluate(streaks, settings: settings, at: now).xp
}
let withStates = streaks.map {
    UserStreak(streak: $0.streak, history: $0.history, meta: $0.meta, state: Engine.evaluate($0.history, at: now))
}
measure("Achievements.evaluate given the engine's states") {
    Achievements.evaluate(withStates, settings: settings, at: now).xp
}
measure("Achievements.events of the result") {
    Achievements.events(sample, now: now).count
}
