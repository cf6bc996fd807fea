import StreakCore
import StreakStore

/// What `preview`'s planning thread knows as it goes, and how it plans one streak: its settings,
/// the names its notices number, the ledger's keys of the window once read. It plans what the
/// reading thread hands it (`PreviewInput`), and reads what little else it needs (settings
/// epochs, the ledger, a damaged copy's history) on a connection of its own (`readBeside`).
struct PreviewPlan {
    let context: Context
    let end: Instant
    let kind: NotificationKind?
    let reminders: ReminderPolicy
    /// The window's start, the backfill cap and the latest instant a check-in may count at.
    let now: Instant
    let cap: Int64
    let latest: Instant
    /// The zones, streaks and languages of the notices planned, each once; zone names as the
    /// histories' bytes spell them, made into strings once.
    var names = NoticeNames()
    /// Zone numbers by the zone name's bytes, as histories spell them (a lookup a run, no string).
    var zoneNumbers = ByteTable()
    /// Per streak id: its settings epochs, freeze settings, rest days, and whether they keep its
    /// histories simple (goal 1, no leeway, the same rest days, ever).
    var settings: [String: StreakInfo] = [:]
    /// The last streak id and language a run named, as bytes, with what a run needs of them
    /// (most runs name the one before's).
    var lastStreak: (bytes: [UInt8], run: RunStreak?) = ([], nil)
    var lastLanguage: (bytes: [UInt8], number: Int32?) = ([], nil)
    /// Room for one history's check-in instants, and its notices.
    var instants: [Instant] = []
    var notices: [Notice] = []
    /// The ledger's keys, read once a preview has asked about `readLedgerAfter` notices.
    var ledger = PreviewLedger()
    var readLedgerAfter = Self.readLedgerAfter

    /// Notices asked about a batch at a time before the ledger's keys of the window are read at
    /// once: a small preview never reads them (each question is a lookup in the ledger's index).
    static let readLedgerAfter = 4096

    struct StreakInfo {
        var id: String
        var number: Int32
        var epochs: [SettingsEpoch]
        var freeze: FreezeSettings
        var rest: RestDays
        var simple: Bool

        var run: RunStreak { RunStreak(number: number, freeze: freeze, rest: rest, simple: simple) }
    }

    /// What planning a run from its bytes needs of its streak id: plain values (a `StreakInfo`'s
    /// string and array were retained and released at every run).
    struct RunStreak {
        var number: Int32
        var freeze: FreezeSettings
        var rest: RestDays
        var simple: Bool
    }

    /// The policy of the run being planned: its reminder time set for each run, the rest once.
    var policy: NoticePolicy

    init(context: Context, end: Instant, kind: NotificationKind?) {
        self.context = context
        self.end = end
        self.kind = kind
        reminders = ReminderPolicy(days: context.config.reminderDays)
        now = context.now
        cap = Int64(context.config.backfillDays) * Instant.day
        latest = context.now + Engine.clockSkew
        ledger = PreviewLedger(from: context.now, through: end)
        policy = NoticePolicy(remindAt: nil, reminders: reminders, maxLate: context.config.maxLate)
    }

    /// The notices of a batch not in the ledger yet: each planned run from the history it
    /// carries (or the store read for it), each other streak from its history read.
    mutating func notices(of input: PreviewInput) throws -> NoticeBatch {
        var found = NoticeBatch()
        let runs = input.runs
        found.items.reserveCapacity(runs.count)
        // The next of `input.looked` (by index: a copy of the pair at every run was a generic copy).
        var looked = 0
        var damaged: [DueStreak] = []
        try runs.withTexts { texts in
            for i in runs.runs.indices {
                if looked < input.looked.count && input.looked[looked].run == i {
                    if let history = input.looked[looked].history { try add(history, into: &found) }
                    looked += 1
                    continue
                }
                let run = runs.runs[i]
                guard let history = texts.history(i) else { continue }
                policy.remindAt = run.remind ? run.remindAt : nil
                let planned = try plan(
                    history, streak: try streakInfo(texts.streak(i)), user: UnsafeRawBufferPointer(texts.user(i)),
                    language: language(texts.language(i)), into: &found)
                if !planned { damaged.append(runs.dueStreak(i)) }
            }
        }
        for case let history? in input.histories { try add(history, into: &found) }
        // A run whose carried bytes are not a history (a damaged copy): the tables, as they are now.
        if !damaged.isEmpty {
            for history in try context.store.readBeside({ try $0.dueHistories(of: damaged) }) {
                if let history { try add(history, into: &found) }
            }
        }
        try ledger.leaveOutRecorded(&found, names: &names, after: readLedgerAfter, context.store)
        return found
    }

    /// Plans a streak from its history as the store read it.
    private mutating func add(_ read: DueHistory, into found: inout NoticeBatch) throws {
        let streak = try settings(of: read.stored.streak)
        policy.remindAt = read.user.remind ? read.user.remindAt : nil
        let language = names.number(language: read.user.language)
        if let zone = try simpleNotices(read.stored, streak: streak) {
            add(user: read.user.id, streak: streak.number, language: language, zone: zone, into: &found)
            return
        }
        let history = try context.history(of: read.stored, epochs: streak.epochs)
        notices = Notices.upcoming(history, policy: policy, from: now, through: end)
        var user = read.user.id
        user.withUTF8 { user in
            for (i, n) in notices.enumerated() where kind.map({ n.kind == $0 }) ?? true {
                let item = QueuedNotice(
                    notice: n, streak: streak.number, language: language, zone: names.number(history.zone(at: n.due)),
                    order: i)
                found.append(item, user: UnsafeRawBufferPointer(user))
            }
        }
    }

    /// Plans a run from the packed history it carries (its reminder time in `policy`) when that
    /// is simple (`simpleNotices`), or by the engine; false when the bytes are not a history (the
    /// tables are read then).
    private mutating func plan(
        _ packed: UnsafeBufferPointer<UInt8>, streak: RunStreak, user: UnsafeRawBufferPointer, language: Int32,
        into found: inout NoticeBatch
    ) throws -> Bool {
        if streak.simple, let zone = try simpleNotices(packed: packed, freeze: streak.freeze, rest: streak.rest) {
            Self.add(notices, of: kind, user: user, streak: streak.number, language: language, zone: zone, to: &found)
            return true
        }
        let id = String(decoding: user, as: UTF8.self)
        let info = try settings(of: names.streak(streak.number))
        guard let stored = PackedHistory.unpack(packed, user: id, streak: info.id) else { return false }
        let history = try context.history(of: stored, epochs: info.epochs)
        notices = Notices.upcoming(history, policy: policy, from: now, through: end)
        for (i, n) in notices.enumerated() where kind.map({ n.kind == $0 }) ?? true {
            let item = QueuedNotice(
                notice: n, streak: streak.number, language: language, zone: names.number(history.zone(at: n.due)),
                order: i)
            found.append(item, user: user)
        }
        return true
    }

    /// `notices` (one streak's, just planned) into `found`.
    private mutating func add(user: String, streak: Int32, language: Int32, zone: Int32, into found: inout NoticeBatch) {
        var user = user
        let (notices, kind) = (self.notices, self.kind)
        user.withUTF8 {
            Self.add(
                notices, of: kind, user: UnsafeRawBufferPointer($0), streak: streak, language: language, zone: zone,
                to: &found)
        }
    }

    /// One streak's notices (of `kind`, when given), all in `zone`. Static: a method called with
    /// `notices` from a mutating one copied the whole plan, context and all, for every streak.
    static func add(
        _ notices: [Notice], of kind: NotificationKind?, user: UnsafeRawBufferPointer, streak: Int32, language: Int32,
        zone: Int32, to found: inout NoticeBatch
    ) {
        for (i, n) in notices.enumerated() where kind.map({ n.kind == $0 }) ?? true {
            let item = QueuedNotice(notice: n, streak: streak, language: language, zone: zone, order: i)
            found.append(item, user: user)
        }
    }

    /// The settings of the streak id whose bytes are `bytes` (the last one's again when the same).
    private mutating func streakInfo(_ bytes: UnsafeBufferPointer<UInt8>) throws -> RunStreak {
        if let run = lastStreak.run, lastStreak.bytes.withUnsafeBufferPointer({ sameBytes($0, bytes) }) { return run }
        let run = try settings(of: String(decoding: bytes, as: UTF8.self)).run
        lastStreak = (Array(bytes), run)
        return run
    }

    /// The number of the language whose bytes are `bytes` (-1: none, the default).
    private mutating func language(_ bytes: UnsafeBufferPointer<UInt8>?) -> Int32 {
        guard let bytes else { return -1 }
        if let number = lastLanguage.number, lastLanguage.bytes.withUnsafeBufferPointer({ sameBytes($0, bytes) }) {
            return number
        }
        let number = names.number(language: String(decoding: bytes, as: UTF8.self))
        lastLanguage = (Array(bytes), number)
        return number
    }

    /// A streak id's settings, looked up once.
    mutating func settings(of streak: String) throws -> StreakInfo {
        if let known = settings[streak] { return known }
        let epochs = try context.store.readBeside { try $0.settingsEpochs(of: streak) }
        let s = context.config.settings(for: streak)
        let info = StreakInfo(
            id: streak, number: names.number(streak: streak), epochs: epochs, freeze: s.freeze, rest: s.restDays,
            simple: SimpleHistory.settings(s, epochs: epochs))
        settings[streak] = info
        return info
    }
}
