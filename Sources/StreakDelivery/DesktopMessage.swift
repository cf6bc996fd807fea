import StreakCore

/// The urgency hint of a desktop notification (the Desktop Notifications Specification's byte).
public enum DesktopUrgency: UInt8, Sendable {
    case low = 0
    case normal = 1
    case critical = 2
}

/// What a desktop notification says: the arguments of `org.freedesktop.Notifications.Notify`.
public struct DesktopMessage: Equatable, Sendable {
    public var appName = "streakd"
    /// An icon of the theme (`make install` puts `streakd.svg` in the hicolor theme).
    public var appIcon = "streakd"
    public var summary: String
    public var body: String
    public var urgency: DesktopUrgency
    /// `x-streakd.KIND`, for notification servers' rules.
    public var category: String
    /// -1: the server decides how long it stays.
    public var expireTimeout: Int32 = -1

    /// The notification's message as the body and its title as the summary (both in the user's
    /// language; the English heading by kind for one recorded before titles); urgency by kind,
    /// mirroring the journal priority (4 warning → critical, 5 notice → normal, 6 info → low).
    public init(_ notification: Notification) {
        summary = notification.title ?? notification.kind.englishTitle
        body = notification.message
        urgency = Self.urgency(notification.kind)
        category = "x-streakd." + notification.kind.rawValue
    }

    public static func urgency(_ kind: NotificationKind) -> DesktopUrgency {
        switch kind.priority {
        case ...4: .critical
        case 5: .normal
        default: .low
        }
    }
}
