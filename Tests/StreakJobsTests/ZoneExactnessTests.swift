import Foundation
import StreakCore
import StreakDelivery
import StreakSQLite
import StreakStore
import StreakTestKit
import Testing

@testable import StreakJobs

/// The zones ZoneBook builds from TZif files answer exactly as Foundation's
/// TimeZone does, for every zone of the system tzdata over 2020–2040.
@Suite(
    .systemTier("every tzdata zone against Foundation, 2020 through 2040: three minutes of both cores"),
    .timeLimit(TestTier.systemLimit))
struct ZoneExactnessTests {
    static let first = LocalDate(year: 2020, month: 1, day: 1)!
    static let last = LocalDate(year: 2040, month: 12, day: 31)!
    /// Wall times asked on every date (seconds into the day): 00:00, 01:30,
    /// 02:30, 20:00. (The edges of every gap and overlap are asked
    /// separately, whatever their times.)
    static let walls = [0, 5400, 9000, 72000]

    @Test func everyZoneEqualsFoundation() throws {
        let zones = allTzdataZones()
        #expect(zones.count > 400)
        let book = ZoneBook()
        let tally = Tally()
        DispatchQueue.concurrentPerform(iterations: zones.count) { n in
            let id = zones[n]
            guard case .success(let fast) = book.zone(id), let reference = FoundationZoneRules(identifier: id) else {
                tally.add(id, Counts(), ["not a zone"])
                return
            }
            tally.add(id, Self.compare(fast, Zone(identifier: id, rules: reference)))
        }
        let c = tally.counts
        #expect(book.fallbacks.isEmpty, "zones using Foundation: \(book.fallbacks.sorted())")
        #expect(tally.problems.isEmpty, "\(tally.problems.prefix(40))")
        #expect(c.transitions > 5000)
    }

    /// A zone made fast around an instant (`steadied(around:)`, as every run's zones are)
    /// answers exactly as its rules: offsets, dates and wall times over ±40 days of instants
    /// every 9 days from 2020 through 2040, and of instants a second and two days either side
    /// of every transition in those years.
    @Test func steadiedZonesAnswerAsTheirRules() throws {
        let zones = allTzdataZones()
        let book = ZoneBook()
        let start = Int64(Self.first.day) * Instant.day
        let end = Int64(Self.last.day + 1) * Instant.day
        let tally = Tally()
        DispatchQueue.concurrentPerform(iterations: zones.count) { n in
            guard case .success(let zone) = book.zone(zones[n]) else {
                tally.add(zones[n], Counts(), ["not a zone"])
                return
            }
            var arounds: [Int64] = []
            var a0 = start
            while a0 < end {
                arounds.append(a0)
                a0 += 9 * Instant.day
            }
            if let rules = zone.rules as? TransitionRules {
                for t in rules.table.times where t >= start && t < end {
                    arounds += [t - 2 * Instant.day - 1, t - 1, t, t + 1, t + 2 * Instant.day + 1]
                }
            }
            var counts = Counts()
            var problems: [String] = []
            for a in arounds {
                let fast = zone.steadied(around: Instant(seconds: a))
                for k in stride(from: -40 * 24, through: 40 * 24, by: 37) {
                    let t = Instant(seconds: a + Int64(k * 3600 + 17))
                    counts.offsets += 1
                    if fast.offset(at: t) != zone.offset(at: t) || fast.date(of: t) != zone.date(of: t) {
                        problems.append("around \(a): offset or date at \(t)")
                    }
                }
                let day = LocalDate(day: Int((a - (a % 86400 + 86400) % 86400) / 86400))
                for dd in stride(from: -40, through: 40, by: 3) {
                    for w in Self.walls + [86399] {
                        counts.walls += 1
                        if fast.instant(of: day + dd, secondsIntoDay: w)
                            != zone.instant(of: day + dd, secondsIntoDay: w)
                        {
                            problems.append("around \(a): \(day + dd) at \(w)")
                        }
                    }
                }
            }
            tally.add(zones[n], counts, problems)
        }
        #expect(tally.problems.isEmpty, "\(tally.problems.prefix(20))")
    }

    /// Every transition of every table, 1997 through the table's end (2200):
    /// offsets a second before, at and after equal Foundation's; and at the
    /// edges of every gap and overlap in every year (historical clusters of
    /// transitions included), the table's one-search local-time answer equals
    /// the general search over its own offsets. (Before 1997 the system files
    /// carry older histories than Foundation's ICU copy for some 90 zones,
    /// such as Africa/Accra before 1980 or WET before 1996.)
    @Test func everyTransitionThrough2200() throws {
        let book = ZoneBook()
        let from = Int64(LocalDate(year: 1997, month: 1, day: 1)!.day) * Instant.day
        var (transitions, offsets, walls) = (0, 0, 0)
        var problems: [String] = []
        for id in allTzdataZones() {
            guard case .success(let zone) = book.zone(id), let rules = zone.rules as? TransitionRules,
                let reference = FoundationZoneRules(identifier: id)
            else {
                problems.append("\(id): not built from its TZif file")
                continue
            }
            for t in rules.table.times {
                let (a, b) = (
                    Int64(rules.offset(at: Instant(seconds: t - 1))), Int64(rules.offset(at: Instant(seconds: t)))
                )
                for local in [t + a - 1, t + a, t + b - 1, t + b, t + (a + b) / 2, t - Instant.day, t + Instant.day]
                where rules.instant(ofLocal: local) != rules.searchInstant(ofLocal: local) {
                    problems.append(
                        "\(id): local \(local): \(rules.instant(ofLocal: local)), search \(rules.searchInstant(ofLocal: local))"
                    )
                }
                walls += 7
                guard t >= from else { continue }
                transitions += 1
                for s in t - 1...t + 1
                where rules.offset(at: Instant(seconds: s)) != reference.offset(at: Instant(seconds: s)) {
                    problems.append(
                        "\(id): offset at \(Instant(seconds: s)): \(rules.offset(at: Instant(seconds: s))), Foundation \(reference.offset(at: Instant(seconds: s)))"
                    )
                }
                offsets += 3
            }
        }
        #expect(problems.isEmpty, "\(problems.prefix(40))")
    }

    struct Counts {
        var transitions = 0, offsets = 0, walls = 0, dates = 0

        static func + (a: Counts, b: Counts) -> Counts {
            Counts(
                transitions: a.transitions + b.transitions, offsets: a.offsets + b.offsets, walls: a.walls + b.walls,
                dates: a.dates + b.dates)
        }
    }

    /// Compares one zone's answers; returns the counts and the first differences.
    static func compare(_ fast: Zone, _ reference: Zone) -> (Counts, [String]) {
        var counts = Counts()
        var problems: [String] = []
        func note(_ what: @autoclosure () -> String) { if problems.count < 5 { problems.append(what()) } }
        let from = Int64(first.day) * Instant.day
        let to = Int64(last.day + 1) * Instant.day

        // Every transition either side knows of, a second before, at and after.
        var transitions = Set<Int64>()
        if let rules = fast.rules as? TransitionRules {
            transitions.formUnion(rules.table.times.filter { $0 >= from - Instant.day && $0 < to + Instant.day })
        } else {
            note("not built from its TZif file")
        }
        let zone = TimeZone(identifier: fast.identifier)!
        var d = Date(timeIntervalSince1970: TimeInterval(from - Instant.day))
        while let next = zone.nextDaylightSavingTimeTransition(after: d), next.timeIntervalSince1970 < Double(to) {
            transitions.insert(Int64(next.timeIntervalSince1970))
            d = next
        }
        counts.transitions = transitions.count
        func offsetAt(_ t: Int64) {
            let (a, b) = (fast.offset(at: Instant(seconds: t)), reference.offset(at: Instant(seconds: t)))
            if a != b { note("offset at \(Instant(seconds: t)): \(a), Foundation \(b)") }
            counts.offsets += 1
        }
        func wall(_ local: Int64) {
            let date = LocalDate(day: Int((local - (local < 0 ? Instant.day - 1 : 0)) / Instant.day))
            let seconds = Int(local - Int64(date.day) * Instant.day)
            let (a, b) = (
                fast.instant(of: date, secondsIntoDay: seconds), reference.instant(of: date, secondsIntoDay: seconds)
            )
            if a != b { note("\(date) +\(seconds)s: \(a), Foundation \(b)") }
            counts.walls += 1
        }
        for t in transitions.sorted() {
            for s in t - 1...t + 1 { offsetAt(s) }
            // The wall times at the edges of the gap or overlap, and inside it.
            let before = Int64(reference.offset(at: Instant(seconds: t - 1)))
            let after = Int64(reference.offset(at: Instant(seconds: t)))
            for local in [t + before - 1, t + before, t + after - 1, t + after, t + (before + after) / 2] {
                wall(local)
            }
        }
        // Every 6 hours, and at every wall time of every date.
        for t in stride(from: from, to: to, by: Int(6 * Instant.hour)) { offsetAt(t) }
        for day in first.day...last.day {
            let date = LocalDate(day: day)
            for s in walls { wall(Int64(day) * Instant.day + Int64(s)) }
            let (a, b) = (fast.start(of: date), reference.start(of: date))
            if a != b { note("start of \(date): \(a), Foundation \(b)") }
            for t in [a - 1, a, a + 12 * Instant.hour] where fast.date(of: t) != reference.date(of: t) {
                note("date of \(t): \(fast.date(of: t)), Foundation \(reference.date(of: t))")
            }
            counts.dates += 1
        }
        return (counts, problems)
    }

    /// Results gathered from concurrent comparisons.
    final class Tally: @unchecked Sendable {
        private let lock = NSLock()
        private var total = Counts()
        private var found: [String] = []
        var counts: Counts { lock.withLock { total } }
        var problems: [String] { lock.withLock { found } }
        func add(_ id: String, _ result: (Counts, [String])) { add(id, result.0, result.1) }
        func add(_ id: String, _ counts: Counts, _ problems: [String]) {
            lock.withLock {
                total = total + counts
                found += problems.map { "\(id): \($0)" }
            }
        }
    }
}
