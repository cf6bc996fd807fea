import StreakCore

/// One of streakd's journal entries, read back for `streakd log`: a notification, a sink that
/// failed on one and will try again ("failed"), or a sink giving up on one ("dead").
public struct LogEntry: Equatable, Sendable {
    /// The notification's fields; `message` is the entry's MESSAGE (for a failed or dead entry,
    /// the sentence about the delivery).
    public var notification: Notification
    /// When journald received the entry, in microseconds since 1970 (its realtime).
    public var realtimeMicroseconds: UInt64
    /// Set for a "delivery given up" entry.
    public var dead: DeadDelivery?
    /// Set for a "delivery failed" entry.
    public var failed: FailedDelivery?
    /// The machine that logged it (`_HOSTNAME`, journald's own field), when known.
    public var host: String?
    /// The store whose run wrote it (`STREAKD_STORE`); nil for an entry written before streakd
    /// recorded its store.
    public var store: String?
    /// Every field of the entry as the journal holds it, in its order (`log -o verbose`); empty
    /// unless the reader was asked for them.
    public var allFields: [Field] = []
    /// The entry's cursor, with `allFields`.
    public var cursor: String?
    /// Who sent it, as journald recorded it (fields no sender can set): `JournalTrust` decides
    /// from this whether streakd wrote it.
    public var writer = Writer()

    /// journald's own fields about the sender (`_UID`, `_COMM`, `_EXE`, `_SYSTEMD_UNIT`,
    /// `_TRANSPORT`), nil where the entry has none.
    public struct Writer: Equatable, Sendable {
        public var uid: UInt32?
        public var comm: String?
        public var exe: String?
        public var unit: String?
        public var transport: String?

        public init(
            uid: UInt32? = nil, comm: String? = nil, exe: String? = nil, unit: String? = nil, transport: String? = nil
        ) {
            self.uid = uid
            self.comm = comm
            self.exe = exe
            self.unit = unit
            self.transport = transport
        }
    }

    /// One `NAME=value` of an entry.
    public struct Field: Equatable, Sendable {
        public var name: String
        public var value: String

        public init(_ name: String, _ value: String) {
            self.name = name
            self.value = value
        }
    }

    public init(
        notification: Notification, realtimeMicroseconds: UInt64, dead: DeadDelivery? = nil,
        failed: FailedDelivery? = nil, host: String? = nil, store: String? = nil
    ) {
        self.notification = notification
        self.realtimeMicroseconds = realtimeMicroseconds
        self.dead = dead
        self.failed = failed
        self.host = host
        self.store = store
    }

    /// The realtime to the second (toward the past), as `log` prints and filters it.
    public var logged: Instant { Instant(seconds: Int64(realtimeMicroseconds / 1_000_000)) }

    /// The `log -o json` object: the keys of `preview -o json`, then `logged`, `host` and `store`,
    /// and for a failed or dead entry `delivery` (`failed` or `dead`), `sink`, `attempts` and
    /// `error`, and a failed one's `retry`.
    public var json: JSON {
        guard case .object(var fields) = notification.json else { return notification.json }
        fields += [("logged", .string(logged.description)), ("host", .optional(host)), ("store", .optional(store))]
        if let dead {
            fields += [
                ("delivery", .string("dead")), ("sink", .string(dead.sink)), ("attempts", .int(dead.attempts)),
                ("error", .string(dead.error)),
            ]
        }
        if let failed {
            fields += [
                ("delivery", .string("failed")), ("sink", .string(failed.sink)), ("attempts", .int(failed.attempts)),
                ("error", .string(failed.error)), ("retry", .string(failed.retry.description)),
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
            id == kind.messageID || id == JournalSink.deadMessageID || id == JournalSink.failedMessageID,
            let user = fields["STREAKD_USER"], Validate.userID(user) == nil,
            let streak = kind.isAchievement ? "" : fields["STREAKD_STREAK"],
            kind.isAchievement || Validate.streakID(streak) == nil,
            let date = fields["STREAKD_LOCAL_DATE"].flatMap(LocalDate.init(_:)),
            let due = fields["STREAKD_DUE"].flatMap(RFC3339.parse),
            let length = fields["STREAKD_STREAK_LENGTH"].flatMap({ Int($0) }),
            let timezone = fields["STREAKD_TIMEZONE"]
        else { return nil }
        var dead: DeadDelivery?
        var failed: FailedDelivery?
        if id == JournalSink.deadMessageID || id == JournalSink.failedMessageID {
            guard let sink = fields["STREAKD_SINK"], let attempts = fields["STREAKD_ATTEMPTS"].flatMap({ Int($0) })
            else { return nil }
            let error = fields["STREAKD_ERROR"] ?? ""
            if id == JournalSink.deadMessageID {
                dead = DeadDelivery(sink: sink, attempts: attempts, error: error)
            } else {
                guard let retry = fields["STREAKD_RETRY"].flatMap(RFC3339.parse) else { return nil }
                failed = FailedDelivery(sink: sink, attempts: attempts, error: error, retry: retry)
            }
        }
        var badge: String?
        var level: Int?
        // An achievement names its badge (an id as the configuration allows) or its level.
        switch kind {
        case .badgeUnlocked:
            guard let b = fields["STREAKD_BADGE"], Validate.streakID(b) == nil else { return nil }
            badge = b
        case .levelUp:
            guard let l = fields["STREAKD_LEVEL"].flatMap({ Int($0) }) else { return nil }
            level = l
        default: break
        }
        let notification = Notification(
            kind: kind, user: user, streak: streak, localDate: date, due: due, timezone: timezone,
            localDue: fields["STREAKD_LOCAL_DUE"] ?? "", streakLength: length, message: message, badge: badge,
            level: level)
        self.init(
            notification: notification, realtimeMicroseconds: realtimeMicroseconds, dead: dead, failed: failed,
            host: fields["_HOSTNAME"], store: fields["STREAKD_STORE"])
        writer = Writer(
            uid: fields["_UID"].flatMap { UInt32($0) }, comm: fields["_COMM"], exe: fields["_EXE"],
            unit: fields["_SYSTEMD_UNIT"], transport: fields["_TRANSPORT"])
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

/// A sink that failed on a notification (its `attempts`-th try) and tries again from `retry`.
public struct FailedDelivery: Equatable, Sendable {
    public var sink: String
    public var attempts: Int
    public var error: String
    public var retry: Instant

    public init(sink: String, attempts: Int, error: String, retry: Instant) {
        self.sink = sink
        self.attempts = attempts
        self.error = error
        self.retry = retry
    }
}
