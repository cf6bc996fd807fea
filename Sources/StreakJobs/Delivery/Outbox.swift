import StreakCore
import StreakDelivery
import StreakStore

/// Where notifications go: the sinks, and what to do when one gives up.
public struct Delivery: Sendable {
    public var sinks: [any Sink]
    public var retry: RetryPolicy
    /// Called when a sink gives up on a notification (written to the journal for `log`).
    public var recordDead: @Sendable (StreakCore.Notification, _ sink: String, _ attempts: Int, _ error: String) -> Void

    public init(
        sinks: [any Sink], retry: RetryPolicy = RetryPolicy(),
        recordDead: @escaping @Sendable (StreakCore.Notification, String, Int, String) -> Void = { _, _, _, _ in }
    ) {
        self.sinks = sinks
        self.retry = retry
        self.recordDead = recordDead
    }

    /// Seconds the longest delivery may take (a hook's time-out): a run's lease covers it.
    var longestTimeout: Double { sinks.map(\.timeLimit).max() ?? 0 }
}

extension Context {
    /// The sinks of the configuration: the journal always, the desktop for its users, the hooks.
    public func standardDelivery() -> Delivery {
        let journal = JournalSink(
            pacer: JournalPacer(burst: config.journalBurst, interval: .seconds(config.journalInterval)))
        var sinks: [any Sink] = [journal]
        if !config.desktopUsers.isEmpty { sinks.append(DesktopSink(users: Set(config.desktopUsers))) }
        sinks += config.hooks.map { HookSink(command: $0) }
        return Delivery(sinks: sinks) { n, sink, attempts, error in
            _ = journal.recordDead(n, sink: sink, attempts: attempts, error: error)
        }
    }

    /// The notice as every sink receives it, in the user's zone at its due instant.
    func notification(_ n: Notice, user: String, streak: String, history: StreakHistory) -> Notification {
        notification(n, user: user, streak: streak, zone: history.zone(at: n.due))
    }

    /// The notice as every sink receives it, `zone` being the user's at its due instant.
    func notification(_ n: Notice, user: String, streak: String, zone: Zone) -> Notification {
        Notification(
            kind: n.kind, user: user, streak: streak, localDate: n.date,
            due: n.due, timezone: zone.identifier, localDue: local(n.due, in: zone), streakLength: n.length,
            message: Messages.text(n, streak: streak))
    }

    /// `reminders`: the configuration's, when the caller has it already (a run, for each due streak).
    func noticePolicy(for user: User, reminders: ReminderPolicy? = nil) -> NoticePolicy {
        NoticePolicy(
            remindAt: user.remind ? user.remindAt : nil,
            reminders: reminders ?? ReminderPolicy(days: config.reminderDays), maxLate: config.maxLate)
    }
}

extension Notification {
    /// One line for people: `2026-11-21T19:00:00Z at_risk alice/daily 2026-11-21: Your …`.
    var line: String { "\(due) \(kind.rawValue) \(user)/\(streak) \(localDate): \(message)" }
}
