import StreakCore

/// One of streakd's journal entries, read back for `streakd log`: a notification, or a sink
/// giving up on one ("dead").
public struct LogEntry: Equatable, Sendable {
    /// The notification's fields; `message` is the entry's MESSAGE (for a dead entry, the
    /// "gave up" sentence).
    public var notification: Notification
    /// When journald received the entry, in microseconds since 1970 (its realtime).
    public var realtimeMicroseconds: UInt64
    /// Set for a "delivery given up" entry.
    public var dead: DeadDelivery?

    public init(notification: Notification, realtimeMicroseconds: UInt64, dead: DeadDelivery? = nil) {
        self.notification = notification
        self.realtimeMicroseconds = realtimeMicroseconds
        self.dead = dead
    }

    /// The realtime to the second (toward the past), as `log` prints and filters it.
    public var logged: Instant { Instant(seconds: Int64(realtimeMicroseconds / 1_000_000)) }

    /// The `log -o json` object: the keys of `preview -o json`, then `logged`, and for a dead
    /// entry `delivery`, `sink`, `attempts` and `error`.
    public var json: JSON {
        guard case .object(var fields) = notification.json else { return notification.json }
        fields.append(("logged", .string(logged.description)))
        if let dead {
            fields += [
                ("delivery", .string("dead")), ("sink", .string(dead.sink)), ("attempts", .int(dead.attempts)),
                ("error", .string(dead.error)),
            ]
        }
        return .object(fields)
    }

    /// Reads an entry from its journal fields (first value of each name); nil when the fields
    /// are not those of a streakd notification (an entry someone else wrote under streakd's
    /// identifier, or a MESSAGE_ID that is not streakd's).
    public init?(fields: [String: String], realtimeMicroseconds: UInt64) {
        guard let id = fields["MESSAGE_ID"], let message = fields["MESSAGE"],
            let kind = fields["STREAKD_KIND"].flatMap(NotificationKind.init(rawValue:)),
            id == kind.messageID || id == JournalSink.deadMessageID,
            let user = fields["STREAKD_USER"], Validate.userID(user) == nil,
            let streak = fields["STREAKD_STREAK"], Validate.streakID(streak) == nil,
            let date = fields["STREAKD_LOCAL_DATE"].flatMap(LocalDate.init(_:)),
            let due = fields["STREAKD_DUE"].flatMap(RFC3339.parse),
            let length = fields["STREAKD_STREAK_LENGTH"].flatMap({ Int($0) }),
            let timezone = fields["STREAKD_TIMEZONE"]
        else { return nil }
        var dead: DeadDelivery?
        if id == JournalSink.deadMessageID {
            guard let sink = fields["STREAKD_SINK"], let attempts = fields["STREAKD_ATTEMPTS"].flatMap({ Int($0) })
            else { return nil }
            dead = DeadDelivery(sink: sink, attempts: attempts, error: fields["STREAKD_ERROR"] ?? "")
        }
        let notification = Notification(
            kind: kind, user: user, streak: streak, localDate: date, due: due, timezone: timezone,
            localDue: fields["STREAKD_LOCAL_DUE"] ?? "", streakLength: length, message: message)
        self.init(notification: notification, realtimeMicroseconds: realtimeMicroseconds, dead: dead)
    }
}

/// A sink that gave up on a notification after `attempts` failures; `error` is the last one.
public struct DeadDelivery: Equatable, Sendable {
    public var sink: String
    public var attempts: Int
    public var error: String

    public init(sink: String, attempts: Int, error: String) {
        self.sink = sink
        self.attempts = attempts
        self.error = error
    }
}
