import StreakCore

/// streakd's notification (StreakCore's), not Foundation's: the name this module and its users
/// mean where both are imported.
public typealias Notification = StreakCore.Notification
