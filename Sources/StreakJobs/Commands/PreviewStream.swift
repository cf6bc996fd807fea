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

    /// Hands the notices due after now and by `end` (of `kind`, when given) to `emit` in due
    /// order, a batch at a time, each as soon as it is known. Streaks marked changed (every streak,
    /// after a change of the notice settings) have no valid planned run, so their notices may be
    /// due anywhere in the window: they are planned first, into the queue. Then the planned runs
    /// come in their order, and after each batch whatever is due before the last run read goes
    /// out: a streak's notices are due no earlier than its run (`ScheduleReading.plannedStreaks`).
    /// Answers the most notices it held at once.
    @discardableResult
    func eachUpcoming(
        through end: Instant, user id: String? = nil, kind: NotificationKind? = nil,
        emit: (UpcomingBatch) throws -> Void
    ) throws -> Int {
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
                    try plan.add(page.map(\.streak), r, carried: page.map(\.history))
                    position = last.position
                    // Every streak not read yet has its run at or after this one's.
                    let due = plan.take(before: last.position.at)
                    if !due.entries.isEmpty { try emit(due) }
                    limit = min(2 * limit, Self.previewBatch)
                }
            }
            let rest = plan.take(before: nil)
            if !rest.entries.isEmpty { try emit(rest) }
        }
        return plan.queue.peak
    }
}

/// Notices ready to print, in due order, and the zones they name.
struct UpcomingBatch {
    var entries: [UpcomingQueue.Entry]
    var zones: [Zone]

    func zone(of e: UpcomingQueue.Entry) -> Zone { zones[Int(e.zone)] }
}

/// The notices of the streaks read so far that are not printed yet.
struct PreviewPlan {
    let context: Context
    let end: Instant
    let kind: NotificationKind?
    let reminders: ReminderPolicy
    var queue = UpcomingQueue()
    /// Per streak id: its settings epochs, and whether its settings keep histories simple.
    var settings: [String: (epochs: [SettingsEpoch], simple: Bool)] = [:]
    /// The zones of the queued notices, each once.
    var zones: [Zone] = []
    var zoneIndex: [String: Int32] = [:]
    /// Room for one history's check-in instants (the simple walk's input).
    var instants: [Instant] = []
    var notices: [Notice] = []

    /// Notices asked about one by one before the ledger's keys of the window are read at once.
    static let readLedgerAfter = 4096
    var checked = 0
    /// Hashes of the keys recorded about `ledgerDates`, once read.
    var recordedHashes: Set<Int>?
    /// Every date a notice due in the window can be about, in any zone (offsets are within a day
    /// of UTC, and a date's end or reminder within two days of its start), with room to spare;
    /// a notice about another date is asked about on its own.
    let ledgerDates: ClosedRange<LocalDate>

    init(context: Context, end: Instant, kind: NotificationKind?) {
        self.context = context
        self.end = end
        self.kind = kind
        reminders = ReminderPolicy(days: context.config.reminderDays)
        func utcDate(_ t: Instant) -> LocalDate {
            LocalDate(day: Int(t.seconds >= 0 ? t.seconds / Instant.day : (t.seconds + 1) / Instant.day - 1))
        }
        ledgerDates = (utcDate(context.now) - 4)...(utcDate(end) + 2)
    }

    /// Plans a batch of streaks: the histories the store did not hand out with them (`carried`)
    /// read in one call, the ledger asked once for all their notices' keys (on a database across
    /// a socket each call is a round trip).
    mutating func add(_ streaks: [DueStreak], _ reader: any StoreReader, carried: [DueHistory?]? = nil) throws {
        guard !streaks.isEmpty else { return }
        var histories = carried ?? Array(repeating: nil, count: streaks.count)
        let missing = histories.indices.filter { histories[$0] == nil }
        if !missing.isEmpty {
            for (i, read) in zip(missing, try reader.dueHistories(of: missing.map { streaks[$0] })) { histories[i] = read }
        }
        var found: [UpcomingQueue.Entry] = []
        for (d, read) in zip(streaks, histories) {
            guard let read else { continue }
            let policy = context.noticePolicy(for: read.user, reminders: reminders)
            if let zone = try simpleNotices(read.stored, policy: policy, reader) {
                for (i, n) in notices.enumerated() where kind.map({ n.kind == $0 }) ?? true {
                    found.append(
                        UpcomingQueue.Entry(notice: n, user: read.user.id, streak: d.streak, zone: zone, order: Int32(i)))
                }
                continue
            }
            let history = try context.history(of: read.stored, epochs: try settings(of: d.streak, reader).epochs)
            let notices = Notices.upcoming(history, policy: policy, from: context.now, through: end)
            for (i, n) in notices.enumerated() where kind.map({ n.kind == $0 }) ?? true {
                found.append(
                    UpcomingQueue.Entry(
                        notice: n, user: read.user.id, streak: d.streak, zone: zone(history.zone(at: n.due)),
                        order: Int32(i)))
            }
        }
        guard !found.isEmpty else { return }
        try leaveOutRecorded(&found, reader)
        for entry in found { queue.push(entry) }
    }

    /// Leaves out the notices whose keys the ledger has. Past a few thousand, the keys recorded
    /// about the window's dates are read once (`eachLedgerKey`, as hashes): a notice whose key's
    /// hash is not among them is not recorded, and only the few that are get asked about.
    mutating func leaveOutRecorded(_ found: inout [UpcomingQueue.Entry], _ reader: any StoreReader) throws {
        checked += found.count
        if recordedHashes == nil && checked > Self.readLedgerAfter {
            var hashes = Set<Int>()
            try reader.eachLedgerKey(dates: ledgerDates) { kind, user, streak, date in
                hashes.insert(Self.hash(kind, user, streak, date))
            }
            recordedHashes = hashes
        }
        var ask = Array(found.indices)
        if let hashes = recordedHashes {
            ask = ask.filter { i in
                let n = found[i].notice
                return !ledgerDates.contains(n.date)
                    || hashes.contains(Self.hash(n.kind.rawValue, found[i].user, found[i].streak, n.date))
            }
        }
        guard !ask.isEmpty else { return }
        let recorded = try reader.ledgerStates(keys: ask.map { key(of: found[$0]) })
        guard !recorded.isEmpty else { return }
        found.removeAll { recorded[key(of: $0)] != nil }
    }

    static func hash(_ kind: String, _ user: String, _ streak: String, _ date: LocalDate) -> Int {
        var h = Hasher()
        h.combine(kind)
        h.combine(user)
        h.combine(streak)
        h.combine(date.day)
        return h.finalize()
    }

    /// The notices of a simple history (`Notices.upcoming(zone:instants:…)`) into `notices`, and
    /// its zone's index; nil, leaving them for the engine, when it is not one. No history is
    /// built: the stored check-ins' instants are all the walk needs.
    mutating func simpleNotices(_ stored: StoredStreak, policy: NoticePolicy, _ reader: any StoreReader) throws
        -> Int32?
    {
        guard stored.zones.count == 1, stored.freezeEvents.isEmpty, try settings(of: stored.streak, reader).simple
        else { return nil }
        let name = stored.zones[0].zone
        let cap = Int64(context.config.backfillDays) * Instant.day
        let latest = context.now + Engine.clockSkew
        instants.removeAll(keepingCapacity: true)
        for c in stored.checkins where c.instant >= c.storedAt - cap {
            guard c.instant <= latest, c.zone == name else { return nil }
            instants.append(c.instant)
        }
        let index = try zone(named: name)
        notices.removeAll(keepingCapacity: true)
        let simple = instants.withUnsafeMutableBufferPointer { [zones, context, end] in
            Notices.upcoming(
                zone: zones[Int(index)], instants: $0, freeze: context.config.settings(for: stored.streak).freeze,
                policy: policy, from: context.now, through: end, into: &notices)
        }
        return simple ? index : nil
    }

    mutating func settings(of streak: String, _ reader: any StoreReader) throws -> (
        epochs: [SettingsEpoch], simple: Bool
    ) {
        if let known = settings[streak] { return known }
        let epochs = try reader.settingsEpochs(of: streak)
        let s = context.config.settings(for: streak)
        let simple = s.goal == 1 && s.leewayHours == 0 && epochs.allSatisfy { $0.goal == 1 && $0.leewayHours == 0 }
        settings[streak] = (epochs, simple)
        return (epochs, simple)
    }

    /// The queued notices due before `instant` (nil: all), in due order.
    mutating func take(before instant: Instant?) -> UpcomingBatch {
        UpcomingBatch(entries: queue.pop(before: instant), zones: zones)
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

    mutating func zone(named name: String) throws -> Int32 {
        if let i = zoneIndex[name] { return i }
        return zone(try context.zones.stored(name))
    }
}
