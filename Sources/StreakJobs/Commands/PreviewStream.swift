import StreakCore
import StreakStore

/// How `preview` finds what is due without holding every streak: it reads the schedule in the
/// order of the planned runs and prints each notice as soon as nothing read later can come
/// before it (docs/RULES.md, "Preview").
extension Context {
    /// Streaks planned per read: each batch's histories and ledger keys are asked in one call.
    static let previewBatch = 8192
    /// The first batch of planned runs is small, so the first lines come out at once.
    static let previewFirstBatch = 256

    /// Hands the notifications due after now and by `end` (of `kind`, when given) to `emit` in due
    /// order, a batch at a time, each as soon as it is known. Streaks marked changed (every streak,
    /// after a change of the notice settings) have no valid planned run, so their notices may be
    /// due anywhere in the window: they are planned first, into the queue. Then the planned runs
    /// come in their order, and after each batch whatever is due before the last run read goes
    /// out: a streak's notices are due no earlier than its run (`ScheduleReading.plannedStreaks`).
    func eachUpcoming(
        through end: Instant, user id: String? = nil, kind: NotificationKind? = nil,
        emit: ([Notification]) throws -> Void
    ) throws {
        var plan = PreviewPlan(context: self, end: end, kind: kind)
        let every = id == nil ? try configChanged(write: false) : false
        try store.read { r in
            if let id {
                let user = try self.user(id, in: r)
                try plan.add(r.streaks(of: user.id).map { DueStreak(user: user.id, streak: $0) }, r)
            } else {
                var after: Int64?
                while true {
                    let page = try r.changedStreaks(every: every, after: after, limit: Self.previewBatch)
                    guard let last = page.last else { break }
                    try plan.add(page, r)
                    after = last.row
                }
                var position: RunPosition?
                var limit = Self.previewFirstBatch
                while !every {
                    let page = try r.plannedStreaks(through: end, after: position, limit: limit)
                    guard let last = page.last else { break }
                    try plan.add(page.map(\.streak), r)
                    position = last.position
                    // Every streak not read yet has its run at or after this one's.
                    let due = plan.take(before: last.position.at)
                    if !due.isEmpty { try emit(due) }
                    if page.count < limit { break }
                    limit = min(2 * limit, Self.previewBatch)
                }
            }
            let rest = plan.take(before: nil)
            if !rest.isEmpty { try emit(rest) }
        }
    }
}

/// The notices of the streaks read so far that are not printed yet.
struct PreviewPlan {
    let context: Context
    let end: Instant
    let kind: NotificationKind?
    let reminders: ReminderPolicy
    var queue = UpcomingQueue()
    var epochs: [String: [SettingsEpoch]] = [:]
    /// The zones of the queued notices, each once.
    var zones: [Zone] = []
    var zoneIndex: [String: Int32] = [:]

    init(context: Context, end: Instant, kind: NotificationKind?) {
        self.context = context
        self.end = end
        self.kind = kind
        reminders = ReminderPolicy(days: context.config.reminderDays)
    }

    /// Plans a batch of streaks: their histories read in one call, the ledger asked once for all
    /// their notices' keys (on a database across a socket each call is a round trip).
    mutating func add(_ streaks: [DueStreak], _ reader: any StoreReader) throws {
        guard !streaks.isEmpty else { return }
        var found: [UpcomingQueue.Entry] = []
        for (d, read) in zip(streaks, try reader.dueHistories(of: streaks)) {
            guard let read else { continue }
            if epochs[d.streak] == nil { epochs[d.streak] = try reader.settingsEpochs(of: d.streak) }
            let history = try context.history(of: read.stored, epochs: epochs[d.streak]!)
            let policy = context.noticePolicy(for: read.user, reminders: reminders)
            let notices = Notices.upcoming(history, policy: policy, from: context.now, through: end)
            for (i, n) in notices.enumerated() where kind.map({ n.kind == $0 }) ?? true {
                found.append(
                    UpcomingQueue.Entry(
                        notice: n, user: read.user.id, streak: d.streak, zone: zone(history.zone(at: n.due)),
                        order: Int32(i)))
            }
        }
        guard !found.isEmpty else { return }
        let recorded = try reader.ledgerStates(keys: found.map { key(of: $0) })
        for entry in found where recorded[key(of: entry)] == nil { queue.push(entry) }
    }

    /// The queued notices due before `instant` (nil: all), in due order, as notifications.
    mutating func take(before instant: Instant?) -> [Notification] {
        queue.pop(before: instant).map { e in
            context.notification(e.notice, user: e.user, streak: e.streak, zone: zones[Int(e.zone)])
        }
    }

    func key(of e: UpcomingQueue.Entry) -> String {
        "\(e.notice.kind.rawValue)/\(e.user)/\(e.streak)/\(e.notice.date)"
    }

    mutating func zone(_ zone: Zone) -> Int32 {
        if let i = zoneIndex[zone.identifier] { return i }
        zones.append(zone)
        zoneIndex[zone.identifier] = Int32(zones.count - 1)
        return Int32(zones.count - 1)
    }
}
