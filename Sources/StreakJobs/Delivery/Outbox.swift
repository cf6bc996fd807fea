import StreakCore
import StreakDelivery
import StreakStore

/// Where notifications go: the sinks, and what to do when one fails or gives up.
public struct Delivery: Sendable {
    public var sinks: [any Sink]
    public var retry: RetryPolicy
    /// Called when a sink gives up on a notification (written to the journal for `log`).
    public var recordDead: @Sendable (StreakCore.Notification, _ sink: String, _ attempts: Int, _ error: String) -> Void
    /// Called when a sink failed on a notification and will try again from an instant (written to
    /// the journal for `log --failed`).
    public var recordFailed:
        @Sendable (StreakCore.Notification, _ sink: String, _ attempts: Int, _ error: String, _ retry: Instant) -> Void
    /// Called when a run ends, with its summary (SPEC §13: written to the journal).
    public var recordSummary: @Sendable (RunSummaryEntry) -> Void

    public init(
        sinks: [any Sink], retry: RetryPolicy = RetryPolicy(),
        recordDead: @escaping @Sendable (StreakCore.Notification, String, Int, String) -> Void = { _, _, _, _ in },
        recordFailed: @escaping @Sendable (StreakCore.Notification, String, Int, String, Instant) -> Void = {
            _, _, _, _, _ in
        },
        recordSummary: @escaping @Sendable (RunSummaryEntry) -> Void = { _ in }
    ) {
        self.recordSummary = recordSummary
        self.sinks = sinks
        self.retry = retry
        self.recordDead = recordDead
        self.recordFailed = recordFailed
    }

    /// Seconds the longest delivery may take (a hook's time-out): a run's lease covers it.
    var longestTimeout: Double { sinks.map(\.timeLimit).max() ?? 0 }
}

/// A run's summary, for its journal entry (`JournalSink.summaryEntry`).
public struct RunSummaryEntry: Sendable {
    public var job: String
    public var counts: [String: Int]
    public var extra: [(String, Int)]
    public var durationMS: Int
}

extension Context {
    /// The sinks of the configuration: the journal always (its entries carry the store's
    /// identity), the desktop for its users, the hooks.
    public func standardDelivery() throws -> Delivery {
        // A stop (SIGTERM) ends a wait for the journal's pace, and a hook or webhook in flight after a grace.
        let stop: @Sendable () -> Bool = { [stop = self.stop] in stop.requested }
        let journal = JournalSink(
            pacer: JournalPacer(burst: config.journalBurst, interval: .seconds(config.journalInterval)),
            stopRequested: stop, store: try store.read { try $0.storeID() })
        var sinks: [any Sink] = [journal]
        if !config.desktopUsers.isEmpty { sinks.append(DesktopSink(users: Set(config.desktopUsers))) }
        sinks += config.hooks.map { HookSink(command: $0, stopRequested: stop) }
        sinks += config.webhooks.map { WebhookSink(target: $0, stopRequested: stop) }
        return Delivery(
            sinks: sinks,
            recordDead: { n, sink, attempts, error in
                _ = journal.recordDead(n, sink: sink, attempts: attempts, error: error)
            },
            recordFailed: { n, sink, attempts, error, retry in
                _ = journal.recordFailed(n, sink: sink, attempts: attempts, error: error, retry: retry)
            },
            recordSummary: { s in
                _ = journal.recordSummary(job: s.job, counts: s.counts, extra: s.extra, durationMS: s.durationMS)
            })
    }

    /// The notice as every sink receives it, in the user's zone at its due instant and in the
    /// user's language.
    func notification(_ n: Notice, user: User, streak: String, history: StreakHistory) -> Notification {
        notification(n, user: user.id, language: user.language, streak: streak, zone: history.zone(at: n.due))
    }

    /// The same, `zone` being the user's at its due instant and `language` theirs.
    func notification(_ n: Notice, user: String, language: String?, streak: String, zone: Zone) -> Notification {
        let (text, title) = config.messages.render(n, streak: streak, tag: language)
        return Notification(
            kind: n.kind, user: user, streak: streak, localDate: n.date,
            due: n.due, timezone: zone.identifier, localDue: local(n.due, in: zone), streakLength: n.length,
            message: text, title: title)
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
    var line: String { "\(due) \(kind.rawValue) \(about) \(localDate): \(message)" }
}
