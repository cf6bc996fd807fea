import StreakCore
import StreakTestKit
import Testing

/// Badges, XP and levels (SPEC §9) from a user's histories.
@Suite(.fastTier)
struct AchievementsTests {
    let ny = "America/New_York"

    // MARK: streak badges

    /// A week of noon check-ins, zones with whole-, half- and 45-minute offsets and both date-line sides:
    /// `streak_3` unlocks at the third, `streak_7` at the seventh.
    @Test(arguments: [
        "Europe/Berlin", "America/New_York", "Asia/Tokyo", "Pacific/Kiritimati", "Pacific/Pago_Pago",
        "America/St_Johns", "Asia/Kathmandu",
    ])
    func streakBadgesUnlockAtTheCheckinThatReachedThem(zoneID: String) {
        let list = daily("2027-03-25", through: "2027-03-31", zoneID)  // over Europe's spring forward
        let s = evaluate([streak("daily", history(list, in: zoneID))], at: list[6].instant + Instant.day)
        #expect(badge(s, "streak_3").unlockedAt == list[2].instant)
        #expect(badge(s, "streak_7").unlockedAt == list[6].instant)
        #expect(badge(s, "streak_7").current == 7 && badge(s, "streak_7").progress == 100)
        #expect(badge(s, "streak_30").unlockedAt == nil && badge(s, "streak_30").progress == 23)
    }

    /// The seventh date done at 01:30 the next morning, inside a 3-hour leeway, unlocks then
    /// (inside the leeway and after; the 12:00 check-in is June 8's own).
    @Test(arguments: ["2027-06-08T02:00:00-04:00", "2027-06-08T12:00:00-04:00", "2027-06-20T12:00:00-04:00"])
    func leewayUnlocksAtTheCheckinAfterMidnight(now: String) {
        let late = checkin("2027-06-08T01:30:00-04:00", ny)
        let list = daily("2027-06-01", through: "2027-06-06", ny) + [late, checkin("2027-06-08T12:00:00-04:00", ny)]
        let s = evaluate([streak("daily", history(list, in: ny, settings: settings(leeway: 3)))], at: at(now))
        #expect(badge(s, "streak_7").unlockedAt == late.instant)
        #expect(badge(s, "streak_3").unlockedAt == list[2].instant)
    }

    @Test func withoutLeewayTheCheckinAfterMidnightIsTheNextDates() {
        let list = daily("2027-06-01", through: "2027-06-06", ny) + [checkin("2027-06-08T01:30:00-04:00", ny)]
        let s = evaluate(
            [streak("daily", history(list, in: ny, settings: settings(initial: 0)))],
            at: at("2027-06-09T12:00:00-04:00"))
        // June 7 is missed and, with no freeze, breaks the run: six days.
        #expect(badge(s, "streak_7").current == 6 && badge(s, "streak_7").unlockedAt == nil)
    }

    /// Goal 2: a date qualifies at its second check-in, and the badge with it.
    @Test func goalTwoUnlocksAtTheGoalthCheckinOfTheDate() {
        let first = daily("2027-06-01", through: "2027-06-07", hour: 8, ny)
        let second = daily("2027-06-01", through: "2027-06-07", hour: 19, ny)
        let s = evaluate(
            [streak("daily", history(first + second, in: ny, settings: settings(goal: 2)))],
            at: at("2027-06-08T12:00:00-04:00"))
        #expect(badge(s, "streak_7").unlockedAt == second[6].instant)
        #expect(badge(s, "streak_3").unlockedAt == second[2].instant)
        // Every check-in counts for the check-in badges, two a day.
        #expect(badge(s, "checkins_10").unlockedAt == second[4].instant)
        #expect(badge(s, "checkins_10").current == 14)
        // Seven qualifying dates, two streak badges and one check-in badge.
        #expect(s.xp == 7 * 10 + 3 * 50)
    }

    /// A freeze keeps the run alive and adds no day: the seventh qualifying date unlocks.
    @Test func aFreezeInTheMiddleAddsNoDay() {
        let list = daily("2027-06-01", through: "2027-06-04", ny) + daily("2027-06-06", through: "2027-06-08", ny)
        let s = evaluate([streak("daily", history(list, in: ny))], at: at("2027-06-09T12:00:00-04:00"))
        #expect(badge(s, "streak_7").current == 7)
        #expect(badge(s, "streak_7").unlockedAt == list[6].instant)
        #expect(s.xp == 7 * 10 + 2 * 50)
        // Without a freeze to take, June 5 breaks the run: 4 is the longest.
        let none = evaluate(
            [streak("daily", history(list, in: ny, settings: settings(initial: 0)))],
            at: at("2027-06-09T12:00:00-04:00"))
        #expect(badge(none, "streak_7").current == 4 && badge(none, "streak_7").unlockedAt == nil)
        #expect(badge(none, "streak_3").unlockedAt == list[2].instant)
    }

    /// A date a check-in in a zone behind the user's qualifies after it ended (it counts all the
    /// same, SPEC §2): the three dates stood together only from that check-in on.
    @Test func aDateQualifiedLateCompletesItsRunThen() {
        let tokyo = "Asia/Tokyo"
        let d1 = checkin("2027-06-01T12:00:00+09:00", tokyo)
        let d3 = checkin("2027-06-03T12:00:00+09:00", tokyo)
        // June 2, 23:00 in Los Angeles: 15:00 June 3 in Tokyo, after June 3's own check-in.
        let d2 = checkin("2027-06-02T23:00:00-07:00", "America/Los_Angeles")
        let s = evaluate([streak("daily", history([d1, d3, d2], in: tokyo))], at: at("2027-06-04T20:00:00+09:00"))
        #expect(badge(s, "streak_3").current == 3)
        #expect(badge(s, "streak_3").unlockedAt == d2.instant)
    }

    /// The first date of a run qualified last (Pago Pago is 25 hours behind Kiritimati): two
    /// dates stood together first without it, three only with it.
    @Test func theEarliestWindowOfTheRunCounts() {
        let kiritimati = "Pacific/Kiritimati"
        let d2 = checkin("2027-06-02T12:00:00+14:00", kiritimati)
        let d3 = checkin("2027-06-03T00:30:00+14:00", kiritimati)
        let d1 = checkin("2027-06-01T23:59:00-11:00", "Pacific/Pago_Pago")  // after d3
        var settings = AchievementSettings()
        settings.badges = [custom("two", .streakDays, 2), custom("three", .streakDays, 3)]
        let s = Achievements.evaluate(
            [streak("daily", history([d1, d2, d3], in: kiritimati))], settings: settings,
            at: at("2027-06-04T12:00:00+14:00"))
        #expect(badge(s, "two").unlockedAt == d3.instant)
        #expect(badge(s, "three").unlockedAt == d1.instant)
    }

    @Test func streakDaysCountsTheLongestOfAnyStreakAndUnlocksAtTheEarliest() {
        let daily5 = daily("2027-06-01", through: "2027-06-05", ny)
        let workout4 = daily("2027-05-20", through: "2027-05-23", hour: 7, ny)
        let s = evaluate(
            [streak("daily", history(daily5, in: ny)), streak("workout", history(workout4, in: ny))],
            at: at("2027-06-10T12:00:00-04:00"))
        #expect(badge(s, "streak_3").unlockedAt == workout4[2].instant)
        #expect(badge(s, "streak_7").current == 5 && badge(s, "streak_7").progress == 71)
    }

    // MARK: check-in badges

    @Test func taggedCheckinsNeedEveryKeyAndValue() {
        let list = daily("2027-06-01", through: "2027-06-08", ny)
        let meta: [Metadata] = [
            [("kind", .string("social"))],
            [("kind", .string("knowledge")), ("pages", .integer(20))],
            [],
            [("friends", .integer(3)), ("kind", .string("social"))],  // more keys than asked: counts
            [("kind", .string("Social"))],  // values compare exactly
            [("kind", .string("social")), ("outdoor", .bool(true))],
            [("kind", .bool(true))],
            [("kind", .string("social")), ("outdoor", .bool(false))],
        ]
        var settings = AchievementSettings()
        settings.badges += [
            custom("outdoor_2", .taggedCheckins(["kind": .string("social"), "outdoor": .bool(true)]), 1),
            custom("pages", .taggedCheckins(["pages": .integer(20)]), 1),
            custom("pages_text", .taggedCheckins(["pages": .string("20")]), 1),
        ]
        let s = Achievements.evaluate(
            [UserStreak(streak: "daily", history: history(list, in: ny), meta: meta)], settings: settings,
            at: at("2027-06-09T12:00:00-04:00"))
        #expect(badge(s, "social_1").unlockedAt == list[0].instant)
        #expect(badge(s, "social_5").current == 4 && badge(s, "social_5").progress == 80)
        #expect(badge(s, "knowledge_1").unlockedAt == list[1].instant)
        #expect(badge(s, "outdoor_2").unlockedAt == list[5].instant)
        #expect(badge(s, "pages").unlockedAt == list[1].instant)
        #expect(badge(s, "pages_text").current == 0)
    }

    /// Check-ins older than the backfill cap when stored are kept and count for nothing.
    @Test func backfilledCheckinsCountForNoBadge() {
        let now = at("2027-06-09T12:00:00-04:00")
        let old = daily("2027-01-01", through: "2027-01-20", ny).map {
            CheckIn(instant: $0.instant, zone: $0.zone, storedAt: now)
        }
        let meta = [Metadata](repeating: [("kind", .string("social"))], count: old.count)
        let s = Achievements.evaluate(
            [UserStreak(streak: "daily", history: history(old, in: ny), meta: meta)],
            settings: AchievementSettings(), at: now)
        #expect(s.badges.allSatisfy { $0.current == 0 && $0.unlockedAt == nil })
        #expect(s.xp == 0 && s.level == 1 && s.levels.isEmpty && s.nextLevelXP == 500)
        // Stored when they happened, the same check-ins count.
        let fresh = evaluate(
            [streak("daily", history(daily("2027-01-01", through: "2027-01-20", ny), in: ny))], at: now)
        #expect(badge(fresh, "checkins_10").current == 20 && badge(fresh, "streak_7").current == 20)
    }

    @Test func totalCheckinsCountEveryStreakInInstantOrder() {
        let a = daily("2027-06-01", through: "2027-06-06", hour: 8, ny)
        let b = daily("2027-06-01", through: "2027-06-06", hour: 18, ny)
        let s = evaluate(
            [streak("reading", history(b, in: ny)), streak("daily", history(a, in: ny))],
            at: at("2027-06-07T12:00:00-04:00"))
        // 8:00 and 18:00 alternate: the tenth is June 5 at 18:00.
        #expect(badge(s, "checkins_10").unlockedAt == b[4].instant)
        #expect(badge(s, "checkins_50").current == 12 && badge(s, "checkins_50").progress == 24)
    }

    /// A check-in up to 5 minutes ahead of now counts at once, as if it happened now.
    @Test func aCheckinAheadOfNowCountsAsNow() {
        let now = at("2027-06-03T12:00:00-04:00")
        let list =
            daily("2027-06-01", through: "2027-06-02", ny) + [
                CheckIn(instant: now + 200, zone: zone(ny), storedAt: now)
            ]
        let s = evaluate([streak("daily", history(list, in: ny))], at: now)
        #expect(badge(s, "streak_3").unlockedAt == now)
        #expect(s.levels.isEmpty && Achievements.events(s, now: now).map(\.due) == [now])
    }

    // MARK: custom definitions

    @Test func aStreakFilterCountsThatStreakOnly() {
        let d = daily("2027-06-01", through: "2027-06-10", ny)
        let w = daily("2027-06-01", through: "2027-06-03", hour: 7, ny)
        var settings = AchievementSettings()
        settings.badges = [
            custom("workout_3", .streakDays, 3, streak: "workout"),
            custom("workout_5", .streakDays, 5, streak: "workout"),
            custom("reading_1", .streakDays, 1, streak: "reading"),
            custom("workouts_2", .totalCheckins, 2, streak: "workout"),
            custom("any_5", .streakDays, 5),
        ]
        let s = Achievements.evaluate(
            [
                UserStreak(streak: "daily", history: history(d, in: ny)),
                UserStreak(streak: "workout", history: history(w, in: ny)),
            ],
            settings: settings, at: at("2027-06-11T12:00:00-04:00"))
        #expect(badge(s, "workout_3").unlockedAt == w[2].instant)
        #expect(badge(s, "workout_5").current == 3 && badge(s, "workout_5").progress == 60)
        #expect(badge(s, "reading_1").current == 0 && badge(s, "reading_1").unlockedAt == nil)
        #expect(badge(s, "workouts_2").unlockedAt == w[1].instant)
        #expect(badge(s, "any_5").unlockedAt == d[4].instant)
        #expect(s.badges.map(\.badge.id) == settings.badges.map(\.id))
    }

    /// `min(current / value, 1)` as a whole percent, rounded down.
    @Test(arguments: [
        (0, 3, 0), (1, 3, 33), (2, 3, 66), (3, 3, 100), (7, 3, 100), (199, 200, 99), (1, 200, 0), (1, 1, 100),
        (29, 30, 96), (999_999, 1_000_000, 99),
    ])
    func progressIsAWholePercentRoundedDown(current: Int, value: Int, percent: Int) {
        #expect(BadgeProgress.percent(current: current, value: value) == percent)
    }

    // MARK: XP and levels

    @Test func xpIsTenPerQualifyingDatePlusEachBadge() {
        // 20 dates in one streak, 5 in another, one of them shared: 25 qualifying dates.
        let d = daily("2027-06-01", through: "2027-06-20", ny)
        let w = daily("2027-06-20", through: "2027-06-24", hour: 7, ny)
        let s = evaluate(
            [streak("daily", history(d, in: ny)), streak("workout", history(w, in: ny))],
            at: at("2027-06-24T20:00:00-04:00"))
        let unlocked = s.badges.filter { $0.unlockedAt != nil }.map(\.badge.id)
        #expect(unlocked == ["streak_3", "streak_7", "checkins_10"])
        #expect(s.xp == 25 * 10 + 3 * 50)
        #expect(s.level == 1 && s.nextLevelXP == 500)
        // Level 2 at 500: one more week of both.
        var settings = AchievementSettings()
        settings.xpPerDay = 20
        let t = Achievements.evaluate(
            [
                UserStreak(streak: "daily", history: history(d, in: ny)),
                UserStreak(streak: "workout", history: history(w, in: ny)),
            ], settings: settings,
            at: at("2027-06-24T20:00:00-04:00"))
        #expect(t.xp == 25 * 20 + 3 * 50 && t.level == 2 && t.nextLevelXP == 1500)
    }

    @Test(
        arguments: [
            (0, 1, 500), (499, 1, 500), (500, 2, 1500), (1499, 2, 1500), (1500, 3, 4000), (4000, 4, 10000),
            (9999, 4, 10000), (10000, 5, nil), (1_000_000, 5, nil),
        ] as [(Int, Int, Int?)])
    func levelsByTotalXP(xp: Int, level: Int, next: Int?) {
        #expect(Levels.level(xp: xp, thresholds: AchievementSettings.defaultThresholds) == level)
        #expect(Levels.nextLevelXP(xp: xp, thresholds: AchievementSettings.defaultThresholds) == next)
    }

    /// One badge's XP crosses two thresholds: two `level_up`s, one per level, at that instant.
    @Test func oneCheckinCrossingTwoThresholdsReachesBothLevels() {
        var settings = AchievementSettings()
        settings.badges = [custom("big", .totalCheckins, 3, xp: 200)]
        settings.levelThresholds = [25, 100, 200, 1000]
        let list = daily("2027-06-01", through: "2027-06-03", ny)
        let s = Achievements.evaluate(
            [UserStreak(streak: "daily", history: history(list, in: ny))], settings: settings,
            at: at("2027-06-04T12:00:00-04:00"))
        // 10, 20, then 30 (level 2 at 25) and the badge's 200 (3 at 100, 4 at 200) at the third.
        #expect(s.xp == 230 && s.level == 4 && s.nextLevelXP == 1000)
        #expect(s.levels == [2, 3, 4].map { LevelReached(level: $0, at: list[2].instant) })
        let events = Achievements.events(s, now: at("2027-06-04T12:00:00-04:00"))
        #expect(
            events.map { $0.key(user: "u1") } == [
                "badge_unlocked/u1/big", "level_up/u1/2", "level_up/u1/3", "level_up/u1/4",
            ])
        #expect(events.allSatisfy { $0.due == list[2].instant && $0.fresh })
    }

    @Test func levelsAreReachedAtTheCheckinThatRaisedXPPastTheThreshold() {
        var settings = AchievementSettings()
        settings.badges = []
        settings.levelThresholds = [30, 60, 90, 1000]
        let list = daily("2027-06-01", through: "2027-06-10", ny)
        let s = Achievements.evaluate(
            [UserStreak(streak: "daily", history: history(list, in: ny))], settings: settings,
            at: at("2027-06-11T12:00:00-04:00"))
        #expect(
            s.levels == [
                LevelReached(level: 2, at: list[2].instant), LevelReached(level: 3, at: list[5].instant),
                LevelReached(level: 4, at: list[8].instant),
            ])
        #expect(s.xp == 100 && s.level == 4 && s.nextLevelXP == 1000)
    }

    // MARK: events

    @Test func eventsAreFreshForADay() {
        let list = daily("2027-06-01", through: "2027-06-10", ny)
        let now = list[9].instant + 23 * Instant.hour
        let s = evaluate([streak("daily", history(list, in: ny))], at: now)
        let events = Achievements.events(s, now: now)
        #expect(
            events.map { $0.key(user: "ann") } == [
                "badge_unlocked/ann/streak_3", "badge_unlocked/ann/streak_7",
                "badge_unlocked/ann/checkins_10",
            ])
        #expect(events.map(\.fresh) == [false, false, true])
        #expect(events.map(\.due) == [list[2].instant, list[6].instant, list[9].instant])
        #expect(events.allSatisfy { $0.kind == .badgeUnlocked && $0.level == nil })
    }

    // MARK: order and the engine

    /// Arrival order never changes a result (SPEC §2, §9): random histories with several streaks,
    /// zones, goals, leeway, backfill and metadata, their check-ins shuffled with their metadata.
    @Test(arguments: Array(UInt64(1)...UInt64(40)))
    func shuffledArrivalGivesTheSameAchievements(seed: UInt64) {
        var rng = SplitMix64(state: seed)
        let (streaks, now) = randomUser(&rng)
        let settings = smallSettings()
        let expected = Achievements.evaluate(streaks, settings: settings, at: now)
        for _ in 0..<3 {
            let shuffled = streaks.shuffled(using: &rng).map { s -> UserStreak in
                let order = s.history.checkins.indices.shuffled(using: &rng)
                var h = s.history
                h.checkins = order.map { s.history.checkins[$0] }
                return UserStreak(streak: s.streak, history: h, meta: order.map { s.meta[$0] })
            }
            #expect(Achievements.evaluate(shuffled, settings: settings, at: now) == expected)
        }
        // The runs rebuilt from the engine's marks are the engine's: a streak badge has an
        // unlock instant exactly when the engine's longest streak reaches it.
        for b in expected.badges { #expect((b.unlockedAt != nil) == (b.current >= b.value), "\(b.badge.id)") }
    }

    /// In one zone, a streak badge unlocks at the first check-in after which, replaying the
    /// check-ins one by one in instant order, the engine's longest streak reached the value.
    @Test(arguments: Array(UInt64(100)...UInt64(130)))
    func streakUnlocksAgreeWithReplayingCheckinsInOrder(seed: UInt64) {
        var rng = SplitMix64(state: seed)
        let z = zone(ny)
        let start = at("2027-03-01T00:00:00-05:00")
        var list: [CheckIn] = []
        var t = start
        for _ in 0..<Int.random(in: 10...50, using: &rng) {
            t = t + Int64.random(in: 3600...(40 * 3600), using: &rng)
            list.append(CheckIn(instant: t, zone: z, storedAt: t))
        }
        let s = settings(
            goal: Int.random(in: 1...2, using: &rng), leeway: Int.random(in: 0...3, using: &rng),
            initial: Int.random(in: 0...1, using: &rng), minStreak: Int.random(in: 1...3, using: &rng))
        let now = t + 2 * Instant.day
        var achievements = AchievementSettings()
        achievements.badges = (1...12).map { custom("s\($0)", .streakDays, $0) }
        let result = Achievements.evaluate(
            [UserStreak(streak: "daily", history: history(list.shuffled(using: &rng), in: ny, settings: s))],
            settings: achievements, at: now)
        for b in result.badges {
            var replayed: Instant?
            for (i, c) in list.enumerated() {
                let prefix = Array(list[...i])
                if Engine.evaluate(history(prefix, in: ny, settings: s), at: now).longest >= b.value {
                    replayed = c.instant
                    break
                }
            }
            #expect(b.unlockedAt == replayed, "\(b.badge.id)")
        }
    }

    // MARK: helpers

    func evaluate(_ streaks: [UserStreak], at now: Instant) -> AchievementState {
        Achievements.evaluate(streaks, settings: AchievementSettings(), at: now)
    }

    func streak(_ id: String, _ h: StreakHistory) -> UserStreak { UserStreak(streak: id, history: h) }

    func badge(_ s: AchievementState, _ id: String) -> BadgeProgress {
        guard let b = s.badges.first(where: { $0.badge.id == id }) else { fatalError("no badge \(id)") }
        return b
    }

    func custom(
        _ id: String, _ requirement: BadgeDefinition.Requirement, _ value: Int, streak: String? = nil, xp: Int = 50
    ) -> BadgeDefinition {
        BadgeDefinition(
            id: id, title: id, description: "", category: "custom", requirement: requirement, value: value,
            streak: streak, xp: xp)
    }

    func smallSettings() -> AchievementSettings {
        var s = AchievementSettings()
        s.badges += [
            custom("w2", .streakDays, 2, streak: "workout"), custom("any2", .streakDays, 2),
            custom("social_2_w", .taggedCheckins(["kind": .string("social")]), 2, streak: "workout"),
        ]
        s.badges += (1...30).map { custom("s\($0)", .streakDays, $0) }
        s.levelThresholds = [300, 900, 1800, 2600]
        return s
    }

    /// Two or three streaks of a user who moves between New York and Berlin, with random times,
    /// goals, leeway, some check-ins stored long after they happened, and random metadata.
    func randomUser(_ rng: inout SplitMix64) -> ([UserStreak], Instant) {
        let zones = ["America/New_York", "Europe/Berlin", "Asia/Tokyo"]
        let start = at("2027-03-01T00:00:00Z")
        let now = start + 60 * Instant.day
        let kinds: [Metadata] = [[], [("kind", .string("social"))], [("kind", .string("knowledge"))]]
        var result: [UserStreak] = []
        for id in ["daily", "workout", "reading"].prefix(Int.random(in: 2...3, using: &rng)) {
            var list: [CheckIn] = []
            var meta: [Metadata] = []
            var t = start
            for _ in 0..<Int.random(in: 20...70, using: &rng) {
                t = t + Int64.random(in: 600...(50 * 3600), using: &rng)
                guard t < now + 200 else { break }
                let storedLate = Int.random(in: 0..<10, using: &rng) == 0
                list.append(
                    CheckIn(
                        instant: t, zone: zone(zones[Int.random(in: 0..<2, using: &rng)]),
                        id: Bool.random(using: &rng) ? "e\(list.count)" : nil,
                        storedAt: storedLate ? t + 40 * Instant.day : t))
                meta.append(kinds[Int.random(in: 0..<3, using: &rng)])
            }
            let h = history(
                list, in: zones[0], moves: Bool.random(using: &rng) ? [("2027-04-01T00:00:00Z", zones[2])] : [],
                settings: settings(
                    goal: Int.random(in: 1...2, using: &rng), leeway: Int.random(in: 0...4, using: &rng),
                    minStreak: Int.random(in: 1...3, using: &rng)),
                backfillDays: 30)
            result.append(UserStreak(streak: id, history: h, meta: meta))
        }
        return (result, now)
    }
}
