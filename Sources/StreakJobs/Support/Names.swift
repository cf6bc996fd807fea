import StreakCore

/// streakd's notification, not Foundation's (both are imported where Foundation is).
typealias Notification = StreakCore.Notification
