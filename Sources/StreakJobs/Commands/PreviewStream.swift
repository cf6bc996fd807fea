import Foundation
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
    /// come in their order, and whatever is due before the runs still to read goes out: a
    /// streak's notices are due no earlier than its run (`ScheduleReading.plannedStreaks`). The
    /// store is read and the notices planned on threads of their own (`previewWorkers`, each
    /// reading the runs of the instants it takes, `PreviewChunks`), a little ahead of this one,
    /// which orders and prints them. Answers the most notices it held at once.
    @discardableResult
    func eachUpcoming(
        through end: Instant, user id: String? = nil, kind: NotificationKind? = nil,
        readLedgerAfter: Int = PreviewPlan.readLedgerAfter, workers: Int = Context.previewWorkers,
        emit: (UpcomingBatch) throws -> Void
    ) throws -> Int {
        let every = id == nil ? try configChanged(write: false) : false
        // Several planning threads keep on while the printing one writes out a large batch (at a
        // few waiting, both waited for it: a core idle); one stays at most two batches ahead.
        let handoff = Handoff<PlannedBatch>(capacity: workers > 1 ? 16 * workers : 2)
        let chunks = PreviewChunks(lookahead: 8 * workers)
        let ledger = SharedLedgerHashes()
        let planning = Background { [self] in
            defer { handoff.finish() }
            do {
                try store.readTogether(id == nil && !every ? workers : 1) { worker, workers, r in
                    do {
                        if workers == 1 {
                            try planUpcoming(
                                through: end, user: id, kind: kind, every: every, readLedgerAfter: readLedgerAfter, r,
                                into: handoff)
                        } else {
                            try planChunks(
                                worker, through: end, kind: kind, readLedgerAfter: readLedgerAfter, r, chunks, ledger,
                                into: handoff)
                        }
                    } catch let error where !(error is PreviewStopped) {
                        _ = handoff.put(.failed(error))  // at once: the others stop when printing does
                        throw PreviewStopped()
                    }
                }
            } catch is PreviewStopped {
            } catch {
                _ = handoff.put(.failed(error))
            }
        }
        defer {
            handoff.close()
            chunks.close()
            _ = try? planning.wait()
        }
        var order = ChunkOrder()
        while let planned = handoff.take() {
            switch planned {
            case .part(let part):
                let due = order.take(part, chunks: chunks)
                if !due.isEmpty { try emit(UpcomingBatch(parts: due, names: order.names)) }
            case .failed(let error):
                throw error
            }
        }
        let rest = order.rest()
        if !rest.isEmpty { try emit(UpcomingBatch(parts: rest, names: order.names)) }
        return order.queue.peak
    }

    /// The planning threads `preview` reads and plans on: as many as there are cores, up to 4.
    static let previewWorkers = min(4, max(1, ProcessInfo.processInfo.activeProcessorCount))

    /// One planning thread's part, of several: the chunks of runs it takes (`PreviewChunks`), each
    /// read in pages on its own connection, their notices handed over with the chunk's place.
    private func planChunks(
        _ worker: Int, through end: Instant, kind: NotificationKind?, readLedgerAfter: Int, _ r: any StoreReader,
        _ chunks: PreviewChunks, _ ledger: SharedLedgerHashes, into handoff: Handoff<PlannedBatch>
    ) throws {
        var plan = PreviewPlan(context: self, end: end, kind: kind)
        plan.readLedgerAfter = readLedgerAfter
        plan.ledger = ledger
        while let chunk = try chunks.claim(next: { after in
            try r.plannedStreaks(through: end, after: after.map { RunPosition(at: $0, row: .max) }, limit: 1).first?
                .position.at
        }) {
            func send(_ batch: NoticeBatch, last: Bool) throws {
                let part = ChunkOrder.Part(
                    seq: chunk.seq, at: chunk.at, worker: worker, batch: batch, names: plan.names, last: last)
                guard handoff.put(.part(part)) else { throw PreviewStopped() }
            }
            if let at = chunk.at {
                // The runs at `at`, in row order: after the last one of the instant before.
                var after = RunPosition(at: at - 1, row: .max)
                var limit = Self.previewFirstBatch
                while true {
                    let (batch, last) = try plan.notices(ofRunsThrough: at, after: after, limit: limit, r)
                    guard let last else { break }
                    try send(batch, last: false)
                    after = last
                    limit = min(2 * limit, Self.previewBatch)
                }
            } else {
                try eachChangedPage(every: false, r) { try send(plan.notices(of: $0, r), last: false) }
            }
            try send(NoticeBatch(), last: true)
        }
    }

    /// The streaks marked changed (`every`: every streak), a page at a time, in row order.
    private func eachChangedPage(every: Bool, _ r: any StoreReader, _ body: ([PlannedStreak]) throws -> Void) throws {
        var after: Int64?
        while true {
            let page = try r.changedStreaks(every: every, after: after, limit: Self.previewBatch)
            guard let last = page.last else { return }
            try body(page.map { PlannedStreak($0) })
            after = last.row
        }
    }

    /// The planning thread's part, when it is the only one: reads the streaks in `eachUpcoming`'s
    /// order and hands their notices over, a batch at a time, as parts of one chunk, each with the
    /// instant before which all is known: every streak not read yet has its run at or after it.
    private func planUpcoming(
        through end: Instant, user id: String?, kind: NotificationKind?, every: Bool, readLedgerAfter: Int,
        _ r: any StoreReader, into handoff: Handoff<PlannedBatch>
    ) throws {
        var plan = PreviewPlan(context: self, end: end, kind: kind)
        plan.readLedgerAfter = readLedgerAfter
        func send(_ batch: NoticeBatch, before frontier: Instant?) throws {
            guard !batch.isEmpty || frontier != nil else { return }
            let part = ChunkOrder.Part(seq: 0, at: frontier, worker: 0, batch: batch, names: plan.names, last: false)
            guard handoff.put(.part(part)) else { throw PreviewStopped() }
        }
        if let id {
            let user = try self.user(id, in: r)
            try send(
                plan.notices(of: r.streaks(of: user.id).map { PlannedStreak(DueStreak(user: user.id, streak: $0)) }, r),
                before: nil)
            return
        }
        try eachChangedPage(every: every, r) { try send(plan.notices(of: $0, r), before: nil) }
        guard !every else { return }
        try r.eachPlannedStreak(through: end, first: Self.previewFirstBatch, most: Self.previewBatch) { page in
            try send(plan.notices(of: page, r), before: page.last?.position.at)
        }
    }
}

extension PlannedStreak {
    /// A streak with no planned run and nothing carried (a changed one, or one user's): its
    /// history is read from the store.
    init(_ streak: DueStreak) { self.init(streak: streak, position: RunPosition(at: Instant(seconds: 0), row: 0)) }
}

/// What the planning thread hands to the printing one.
enum PlannedBatch: Sendable {
    case part(ChunkOrder.Part)
    case failed(any Error)
}

/// The printing thread stopped (it failed): planning stops too.
struct PreviewStopped: Error {}

/// Notices ready to print, in due order (batch after batch), and the names they number.
struct UpcomingBatch {
    var parts: [NoticeBatch]
    var names: NoticeNames

    /// The notices with their names spelled out.
    var entries: [UpcomingQueue.Entry] {
        var all: [UpcomingQueue.Entry] = []
        for part in parts {
            part.forEach { item, user in
                all.append(
                    UpcomingQueue.Entry(
                        notice: item.notice, user: String(decoding: user, as: UTF8.self),
                        language: names.language(item.language), streak: names.streak(item.streak), zone: item.zone,
                        order: item.order))
            }
        }
        return all
    }

    func zone(of e: UpcomingQueue.Entry) -> Zone { names.zone(e.zone) }
}

extension UpcomingQueue {
    /// One notice with its names spelled out.
    struct Entry {
        var notice: Notice
        var user: String
        /// The user's language (nil: the configuration's default).
        var language: String?
        var streak: String
        /// The user's zone at the due instant, as a number in the batch's names.
        var zone: Int32
        /// Its place among its streak's notices.
        var order: Int32
    }
}

/// What the planning thread knows as it goes: settings, zones, the ledger's keys of the window.
struct PreviewPlan {
    let context: Context
    let end: Instant
    let kind: NotificationKind?
    let reminders: ReminderPolicy
    let maxLate: Int64?
    struct StreakInfo {
        var id: String
        var epochs: [SettingsEpoch]
        var freeze: FreezeSettings
        var simple: Bool
    }
    /// Per streak id: its settings, and the last one asked about.
    var settings: [String: StreakInfo] = [:]
    var lastSettings: StreakInfo?
    /// The last streak id and language a run named, as bytes, with their settings and numbers.
    var lastRunStreak: (bytes: [UInt8], streak: RunStreak)?
    var lastRunLanguage: (bytes: [UInt8], number: Int32)?
    /// The ledger keys' hashes' first steps, by streak number and kind (`KeyHash`).
    var keyHashes: [KeyHash] = []
    /// The window's start, the backfill cap and the latest instant a check-in may count at.
    let now: Instant
    let cap: Int64
    let latest: Instant
    /// The zones, streaks and languages of the notices planned, each once.
    var names = NoticeNames()
    var zoneBytes = ZoneNames()
    /// Room for one history's check-in instants (the simple walk's input).
    var instants: [Instant] = []
    var notices: [Notice] = []

    /// Notices asked about one by one before the ledger's keys of the window are read at once: a
    /// small preview never reads them. Each question is a lookup in the ledger's index (32,768 of
    /// them were a tenth of the CPU at a million users); the read is some 20 ms there, and the
    /// first line still comes in a tenth of a second.
    static let readLedgerAfter = 4096
    var readLedgerAfter = Self.readLedgerAfter
    var checked = 0
    /// Hashes of the keys recorded about `ledgerDates`, once read (by whichever planning thread
    /// needs them first: they all read one snapshot).
    var recordedHashes: KeyHashes?
    var ledger = SharedLedgerHashes()
    /// The dates most notices due in the window are about: a local date is within a day of the
    /// UTC one, and without leeway a notice due after now is about today or later (a leeway makes
    /// a day end, or a reminder, up to a day after its date). A notice about another date is
    /// asked about on its own.
    let ledgerDates: ClosedRange<LocalDate>

    init(context: Context, end: Instant, kind: NotificationKind?) {
        self.context = context
        self.end = end
        self.kind = kind
        reminders = ReminderPolicy(days: context.config.reminderDays)
        maxLate = context.config.maxLate
        now = context.now
        cap = Int64(context.config.backfillDays) * Instant.day
        latest = context.now + Engine.clockSkew
        func utcDate(_ t: Instant) -> LocalDate {
            LocalDate(day: Int(t.seconds >= 0 ? t.seconds / Instant.day : (t.seconds + 1) / Instant.day - 1))
        }
        ledgerDates = (utcDate(context.now) - 1)...(utcDate(end) + 1)
    }

    /// The notices of a batch of streaks not in the ledger yet (`finish`).
    mutating func notices(of streaks: [PlannedStreak], _ reader: any StoreReader) throws -> NoticeBatch {
        var found = NoticeBatch()
        var rest: [PlannedStreak] = []
        for (i, planned) in streaks.enumerated() {
            if i & 255 == 255 { reader.keepUp() }
            if try !planned.withRun({ try plan($0, into: &found, reader) }) { rest.append(planned) }
        }
        return try finish(found, rest, reader)
    }

    /// The notices of a page of planned runs (`ScheduleReading.eachPlannedRun`), each planned from
    /// its bytes as the store reads it; and the last run's position.
    mutating func notices(
        ofRunsThrough through: Instant, after: RunPosition?, limit: Int, _ reader: any StoreReader
    ) throws -> (NoticeBatch, last: RunPosition?) {
        var found = NoticeBatch()
        found.items.reserveCapacity(limit)
        found.users.reserveCapacity(limit * 8)
        let (last, rest) = try reader.eachPlannedRun(through: through, after: after, limit: limit) { run in
            try plan(run, into: &found, reader)
        }
        return (try finish(found, rest, reader), last)
    }

    /// Plans a run straight from its bytes when it carries a simple history (most do): one zone,
    /// no freeze event (`simpleNotices`). False, leaving it to `finish`, when not.
    mutating func plan(_ run: RunInPlace, into found: inout NoticeBatch, _ reader: any StoreReader) throws -> Bool {
        guard let carried = run.carried else { return false }
        let streak = try runStreak(run.streak, reader)
        guard streak.simple else { return false }
        let policy = NoticePolicy(
            remindAt: carried.remind ? carried.remindAt : nil, reminders: reminders, maxLate: maxLate)
        guard let zone = try simpleNotices(packed: carried.history, freeze: streak.freeze, policy: policy) else {
            return false
        }
        let language = runLanguage(carried.language)
        Self.add(notices, of: kind, user: run.user, streak: streak.number, language: language, zone: zone, to: &found)
        return true
    }

    /// What a simple walk needs of the streak id whose bytes are `bytes`, and its number (the
    /// last one's again when the same: most runs are of one streak id).
    private mutating func runStreak(_ bytes: UnsafeRawBufferPointer, _ reader: any StoreReader) throws -> RunStreak {
        if let last = lastRunStreak, last.bytes.withUnsafeBytes({ sameBytes($0, bytes) }) { return last.streak }
        let id = String(decoding: bytes, as: UTF8.self)
        let info = try settings(of: id, reader)
        let found = RunStreak(simple: info.simple, freeze: info.freeze, number: names.number(streak: id))
        lastRunStreak = (Array(bytes), found)
        return found
    }

    /// A streak id's settings as a run planned from its bytes needs them: plain values.
    struct RunStreak {
        var simple: Bool
        var freeze: FreezeSettings
        var number: Int32
    }

    /// The number of the language whose bytes are `bytes` (-1: none).
    private mutating func runLanguage(_ bytes: UnsafeRawBufferPointer?) -> Int32 {
        guard let bytes else { return -1 }
        if let last = lastRunLanguage, last.bytes.withUnsafeBytes({ sameBytes($0, bytes) }) { return last.number }
        let number = names.number(language: String(decoding: bytes, as: UTF8.self))
        lastRunLanguage = (Array(bytes), number)
        return number
    }

    /// The rest of a batch: `found`'s notices not in the ledger yet, and those of the streaks not
    /// planned from their bytes: the histories the store did not hand out with them (`carried`)
    /// read in one call, the ledger asked once for all their notices' keys (on a database across
    /// a socket each call is a round trip).
    private mutating func finish(_ found: NoticeBatch, _ streaks: [PlannedStreak], _ reader: any StoreReader) throws
        -> NoticeBatch
    {
        var found = found
        var histories = [DueHistory?](repeating: nil, count: streaks.count)
        var missing: [Int] = []
        for i in streaks.indices {
            if let h = streaks[i].carried?.history(streak: streaks[i].streak.streak) {
                histories[i] = h
            } else {
                missing.append(i)
            }
        }
        if !missing.isEmpty {
            for (i, read) in zip(missing, try reader.dueHistories(of: missing.map { streaks[$0].streak })) {
                histories[i] = read
            }
        }
        for (planned, read) in zip(streaks, histories) {
            guard let read else { continue }
            let d = planned.streak
            let policy = context.noticePolicy(for: read.user, reminders: reminders)
            let (s, l) = (names.number(streak: d.streak), names.number(language: read.user.language))
            if let zone = try simpleNotices(read.stored, policy: policy, reader) {
                Self.add(self.notices, of: kind, user: read.user.id, streak: s, language: l, zone: zone, to: &found)
                continue
            }
            let history = try context.history(of: read.stored, epochs: try settings(of: d.streak, reader).epochs)
            let notices = Notices.upcoming(history, policy: policy, from: context.now, through: end)
            for (i, n) in notices.enumerated() where kind.map({ n.kind == $0 }) ?? true {
                let item = QueuedNotice(
                    notice: n, userStart: 0, userCount: 0, streak: s, language: l,
                    zone: names.number(history.zone(at: n.due)), order: Int32(i))
                found.append(item, user: read.user.id)
            }
        }
        guard !found.isEmpty else { return found }
        try leaveOutRecorded(&found, reader)
        return found
    }

    /// One streak's notices (of `kind`, when given), all in `zone`. Static: a method called with
    /// `notices` from a mutating one copied the whole plan, context and all, for every streak.
    static func add(
        _ notices: [Notice], of kind: NotificationKind?, user: UnsafeRawBufferPointer, streak: Int32, language: Int32,
        zone: Int32, to found: inout NoticeBatch
    ) {
        for (i, n) in notices.enumerated() where kind.map({ n.kind == $0 }) ?? true {
            let item = QueuedNotice(
                notice: n, userStart: 0, userCount: 0, streak: streak, language: language, zone: zone, order: Int32(i))
            found.append(item, user: user)
        }
    }

    /// The same, the user's id as a string.
    static func add(
        _ notices: [Notice], of kind: NotificationKind?, user: String, streak: Int32, language: Int32, zone: Int32,
        to found: inout NoticeBatch
    ) {
        var user = user
        user.withUTF8 {
            add(notices, of: kind, user: UnsafeRawBufferPointer($0), streak: streak, language: language, zone: zone, to: &found)
        }
    }

    /// `simpleNotices` on a packed history's bytes, without unpacking it (`PackedHistory.oneZone`):
    /// one zone all along and for every check-in, no freeze event.
    mutating func simpleNotices(packed: UnsafeRawBufferPointer, freeze: FreezeSettings, policy: NoticePolicy) throws
        -> Int32?
    {
        let (cap, latest) = (self.cap, self.latest)
        var list = instants
        instants = []
        defer { instants = list }
        list.removeAll(keepingCapacity: true)
        var counts = true
        // The bytes of a history (SQLite's row, or an array's) as bytes: nothing else binds them.
        let bytes = UnsafeBufferPointer(start: packed.baseAddress?.assumingMemoryBound(to: UInt8.self), count: packed.count)
        let one = PackedHistory.oneZone(bytes) { at, storedAt in
            guard at >= storedAt - cap else { return }  // never counts (backfill)
            if at > latest { counts = false }
            list.append(at)
        }
        guard let one, one.firstFreezeEvent == nil, counts else { return nil }
        // The zone by its name's bytes when known; by its name when not.
        let index: Int32
        if let known = zoneBytes.find(one.zone) {
            index = known
        } else {
            index = try zone(named: String(decoding: one.zone, as: UTF8.self))
            zoneBytes.insert(one.zone, index)
        }
        return walk(&list, zone: index, freeze: freeze, policy: policy)
    }

    /// `Notices.upcoming` over `list` (the instants that count) in zone `index`, into `notices`:
    /// `index`, or nil when the history turns out not to be simple.
    private mutating func walk(_ list: inout [Instant], zone index: Int32, freeze: FreezeSettings, policy: NoticePolicy)
        -> Int32?
    {
        notices.removeAll(keepingCapacity: true)
        // Nothing of `self` in the closure: a captured context is a dozen references to retain.
        let (zone, from, through) = (names.zone(index), now, end)
        var found = notices
        notices = []
        let simple = list.withUnsafeMutableBufferPointer {
            Notices.upcoming(
                zone: zone, instants: $0, freeze: freeze, policy: policy, from: from, through: through, into: &found)
        }
        notices = found
        return simple ? index : nil
    }

    /// Leaves out the notices whose keys the ledger has. Past a few thousand, the keys recorded
    /// about the window's dates are read once (`eachLedgerKey`, as hashes): a notice whose key's
    /// hash is not among them is not recorded, and only the few that are get asked about.
    mutating func leaveOutRecorded(_ found: inout NoticeBatch, _ reader: any StoreReader) throws {
        checked += found.count
        if recordedHashes == nil && checked > readLedgerAfter {
            let dates = ledgerDates
            recordedHashes = try ledger.hashes {
                var hashes: [Int] = []
                try reader.eachLedgerKey(dates: dates) { kind, user, streak, date in
                    var user = user
                    hashes.append(user.withUTF8 { Self.hash(kind, streak, UnsafeRawBufferPointer($0), date) })
                }
                return KeyHashes(hashes)
            }
        }
        var ask: [Int] = []
        if let hashes = recordedHashes {
            // The hashes first, then the lookups: a loop of lookups alone lets the processor wait
            // for several slots of the table at once.
            var keys = [Int](repeating: 0, count: found.count)
            // Each (streak, kind)'s first steps once.
            let kinds = NotificationKind.allCases
            while keyHashes.count < names.streaks.count * kinds.count {
                let (streak, kind) = keyHashes.count.quotientAndRemainder(dividingBy: kinds.count)
                keyHashes.append(KeyHash(kinds[kind].rawValue, names.streak(Int32(streak))))
            }
            found.users.withUnsafeBytes { users in
                for (i, item) in found.items.enumerated() {
                    let user = item.user(in: users)
                    let first = keyHashes[Int(item.streak) * kinds.count + kinds.firstIndex(of: item.notice.kind)!]
                    keys[i] = first.finish(user, item.notice.date)
                }
            }
            for (i, item) in found.items.enumerated()
            where !ledgerDates.contains(item.notice.date) || hashes.contains(keys[i]) {
                ask.append(i)
            }
        } else {
            ask = Array(found.items.indices)
        }
        guard !ask.isEmpty else { return }
        let recorded = try reader.ledgerStates(keys: ask.map { key(of: found.items[$0], in: found) })
        guard !recorded.isEmpty else { return }
        let batch = found
        found.items.removeAll { recorded[key(of: $0, in: batch)] != nil }
    }

    /// A key's hash, eight bytes of its parts at a time, each part ended by its length (cheaper
    /// than `Hasher` over three strings, or a byte at a time, a million times). Equal hashes only
    /// mean "ask the ledger": a collision costs a question, never a notice.
    static func hash(_ kind: String, _ streak: String, _ user: UnsafeRawBufferPointer, _ date: LocalDate) -> Int {
        KeyHash(kind, streak).finish(user, date)
    }

    /// `hash` in steps: the kind and streak (the same for many notices) first.
    struct KeyHash {
        private var h: UInt64 = 0xCBF2_9CE4_8422_2325

        init(_ kind: String, _ streak: String) {
            mix(kind)
            mix(streak)
        }

        private mutating func mix(_ word: UInt64) {
            h = (h ^ word) &* 0x9E37_79B9_7F4A_7C15
            h ^= h >> 32
        }

        private mutating func mix(_ part: String) {
            var part = part
            part.withUTF8 { mix(UnsafeRawBufferPointer($0)) }
        }

        private mutating func mix(_ bytes: UnsafeRawBufferPointer) { eachHashWord(bytes) { mix($0) } }

        /// The hash with the user id's bytes and the date.
        func finish(_ user: UnsafeRawBufferPointer, _ date: LocalDate) -> Int {
            var k = self
            k.mix(user)
            return Int(truncatingIfNeeded: (k.h ^ UInt64(bitPattern: Int64(date.day))) &* 0x9E37_79B9_7F4A_7C15)
        }
    }

    /// The notices of a simple history (`Notices.upcoming(zone:instants:…)`) into `notices`, and
    /// its zone's index; nil, leaving them for the engine, when it is not one. No history is
    /// built: the stored check-ins' instants are all the walk needs.
    mutating func simpleNotices(_ stored: StoredStreak, policy: NoticePolicy, _ reader: any StoreReader) throws
        -> Int32?
    {
        guard stored.zones.count == 1, stored.freezeEvents.isEmpty else { return nil }
        let streak = try settings(of: stored.streak, reader)
        guard streak.simple else { return nil }
        let name = stored.zones[0].zone
        let (cap, latest) = (self.cap, self.latest)
        var list = instants
        instants = []
        defer { instants = list }
        list.removeAll(keepingCapacity: true)
        for c in stored.checkins where c.instant >= c.storedAt - cap {
            guard c.instant <= latest, c.zone == name else { return nil }
            list.append(c.instant)
        }
        return walk(&list, zone: try zone(named: name), freeze: streak.freeze, policy: policy)
    }

    /// A streak id's settings epochs, freeze settings, and whether its settings keep histories
    /// simple: looked up once (the last one asked about kept at hand: most streaks are `daily`).
    mutating func settings(of streak: String, _ reader: any StoreReader) throws -> StreakInfo {
        if let last = lastSettings, last.id == streak { return last }
        let info: StreakInfo
        if let known = settings[streak] {
            info = known
        } else {
            let epochs = try reader.settingsEpochs(of: streak)
            let s = context.config.settings(for: streak)
            let simple = s.goal == 1 && s.leewayHours == 0 && epochs.allSatisfy { $0.goal == 1 && $0.leewayHours == 0 }
            info = StreakInfo(id: streak, epochs: epochs, freeze: s.freeze, simple: simple)
            settings[streak] = info
        }
        lastSettings = info
        return info
    }

    func key(of item: QueuedNotice, in batch: NoticeBatch) -> String {
        "\(item.notice.kind.rawValue)/\(batch.user(item))/\(names.streak(item.streak))/\(item.notice.date)"
    }

    mutating func zone(named name: String) throws -> Int32 {
        if let i = names.number(zoneNamed: name) { return i }
        return names.number(try context.zones.stored(name))
    }
}
