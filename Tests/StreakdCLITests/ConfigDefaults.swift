import Foundation
import StreakTestKit
import Testing

/// The effective configuration `config check` prints: the texts the config tests compare with
/// (ConfigAndUsageTests).
extension ConfigAndUsageTests {
    /// When nothing is configured.
    static let defaults = effective()

    /// The built-in defaults, or a file's (`source`) that sets `[freeze] max` and `[reminders]
    /// max_late` (none by default) and adds `streaks` (its sections, printed before the
    /// achievements, each followed by a blank line).
    static func effective(
        from source: String? = nil, freezeMax: Int = 1, maxLate: String? = nil, streaks: String = ""
    ) -> String {
        """
        # effective configuration \(source.map { "from \($0)" } ?? "(built-in defaults)")
        [import]
        backfill_days = 90

        [freeze]
        initial = 1
        max = \(freezeMax)
        min_streak = 3
        auto_use = true

        [reminders]
        days = [5, 7, 14]
        \(maxLate.map { "max_late = \"\($0)\"\n" } ?? "")usual_earliest = "08:00"
        usual_latest = "21:00"

        [desktop]
        users = []

        [journal]
        burst = 9500
        interval_seconds = 30

        [runs]
        lease_seconds = 300

        [api]
        trust_socket = false
        idle_timeout_seconds = 30
        request_timeout_seconds = 60
        max_connections = 16384

        [pause]
        max_days = 30
        days_per_year = 60

        [repair]
        window_hours = 48
        per_30_days = 1

        \(streaks)\(achievementDefaults)

        \(messagesDefaults)

        """
    }

    /// The messages section, printed last: the default language and the languages there are.
    static let messagesDefaults = """
        [messages]
        default_language = "en"
        # languages: en, zh-Hans (en and zh-Hans are built in)
        """
    static let messagesDefaultsJSON =
        #","messages":{"default_language":"en","languages":["en","zh-Hans"],"templates":{}}"#

    /// The twelve default badges, XP and levels, printed after every other section.
    static let achievementDefaults = """
        [xp]
        per_day = 10

        [levels]
        thresholds = [500, 1500, 4000, 10000]

        [[badges]]
        id = "streak_3"
        title = "Warming Up"
        description = "Reach a 3-day streak."
        category = "streaks"
        requirement = "streak_days"
        value = 3
        xp = 50

        [[badges]]
        id = "streak_7"
        title = "One Week Strong"
        description = "Reach a 7-day streak."
        category = "streaks"
        requirement = "streak_days"
        value = 7
        xp = 50

        [[badges]]
        id = "streak_30"
        title = "Habit Formed"
        description = "Reach a 30-day streak."
        category = "streaks"
        requirement = "streak_days"
        value = 30
        xp = 50

        [[badges]]
        id = "checkins_10"
        title = "First Steps"
        description = "Check in 10 times."
        category = "completeness"
        requirement = "total_checkins"
        value = 10
        xp = 50

        [[badges]]
        id = "checkins_50"
        title = "Regular"
        description = "Check in 50 times."
        category = "completeness"
        requirement = "total_checkins"
        value = 50
        xp = 50

        [[badges]]
        id = "checkins_100"
        title = "Centurion"
        description = "Check in 100 times."
        category = "completeness"
        requirement = "total_checkins"
        value = 100
        xp = 50

        [[badges]]
        id = "social_1"
        title = "Better Together"
        description = "Make your first social check-in."
        category = "social"
        requirement = "tagged_checkins"
        meta = {kind = "social"}
        value = 1
        xp = 50

        [[badges]]
        id = "social_5"
        title = "Good Company"
        description = "Make 5 social check-ins."
        category = "social"
        requirement = "tagged_checkins"
        meta = {kind = "social"}
        value = 5
        xp = 50

        [[badges]]
        id = "social_20"
        title = "Social Butterfly"
        description = "Make 20 social check-ins."
        category = "social"
        requirement = "tagged_checkins"
        meta = {kind = "social"}
        value = 20
        xp = 50

        [[badges]]
        id = "knowledge_1"
        title = "Curious Mind"
        description = "Make your first knowledge check-in."
        category = "knowledge"
        requirement = "tagged_checkins"
        meta = {kind = "knowledge"}
        value = 1
        xp = 50

        [[badges]]
        id = "knowledge_10"
        title = "Bookworm"
        description = "Make 10 knowledge check-ins."
        category = "knowledge"
        requirement = "tagged_checkins"
        meta = {kind = "knowledge"}
        value = 10
        xp = 50

        [[badges]]
        id = "knowledge_50"
        title = "Scholar"
        description = "Make 50 knowledge check-ins."
        category = "knowledge"
        requirement = "tagged_checkins"
        meta = {kind = "knowledge"}
        value = 50
        xp = 50
        """
    static let achievementDefaultsJSON =
        #","xp":{"per_day":10},"levels":{"thresholds":[500,1500,4000,10000]},"badges":[{"id":"streak_3","title":"Warming Up","description":"Reach a 3-day streak.","category":"streaks","requirement":"streak_days","meta":null,"streak":null,"value":3,"xp":50},{"id":"streak_7","title":"One Week Strong","description":"Reach a 7-day streak.","category":"streaks","requirement":"streak_days","meta":null,"streak":null,"value":7,"xp":50},{"id":"streak_30","title":"Habit Formed","description":"Reach a 30-day streak.","category":"streaks","requirement":"streak_days","meta":null,"streak":null,"value":30,"xp":50},{"id":"checkins_10","title":"First Steps","description":"Check in 10 times.","category":"completeness","requirement":"total_checkins","meta":null,"streak":null,"value":10,"xp":50},{"id":"checkins_50","title":"Regular","description":"Check in 50 times.","category":"completeness","requirement":"total_checkins","meta":null,"streak":null,"value":50,"xp":50},{"id":"checkins_100","title":"Centurion","description":"Check in 100 times.","category":"completeness","requirement":"total_checkins","meta":null,"streak":null,"value":100,"xp":50},{"id":"social_1","title":"Better Together","description":"Make your first social check-in.","category":"social","requirement":"tagged_checkins","meta":{"kind":"social"},"streak":null,"value":1,"xp":50},{"id":"social_5","title":"Good Company","description":"Make 5 social check-ins.","category":"social","requirement":"tagged_checkins","meta":{"kind":"social"},"streak":null,"value":5,"xp":50},{"id":"social_20","title":"Social Butterfly","description":"Make 20 social check-ins.","category":"social","requirement":"tagged_checkins","meta":{"kind":"social"},"streak":null,"value":20,"xp":50},{"id":"knowledge_1","title":"Curious Mind","description":"Make your first knowledge check-in.","category":"knowledge","requirement":"tagged_checkins","meta":{"kind":"knowledge"},"streak":null,"value":1,"xp":50},{"id":"knowledge_10","title":"Bookworm","description":"Make 10 knowledge check-ins.","category":"knowledge","requirement":"tagged_checkins","meta":{"kind":"knowledge"},"streak":null,"value":10,"xp":50},{"id":"knowledge_50","title":"Scholar","description":"Make 50 knowledge check-ins.","category":"knowledge","requirement":"tagged_checkins","meta":{"kind":"knowledge"},"streak":null,"value":50,"xp":50}]"#
}
