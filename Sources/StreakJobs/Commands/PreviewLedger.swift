import StreakCore
import StreakStore

/// The ledger as `preview` asks it which notices are recorded already (they are left out). A
/// batch's notices are asked about in one call; once a preview has asked about a few thousand,
/// the keys recorded about the window's dates are read at once (`LedgerReading.eachLedgerKey`,
/// the unique index's leading date) and kept as hashes: then only a notice whose key's hash is
/// among them is asked about (most notices of a window are not recorded, and asking about each
/// was a lookup in the ledger's index). A notice about a date outside those is asked about on
/// its own. Equal hashes only mean "ask": a collision costs a question, never a notice. Asked on
/// the planning thread's own connection: at most a moment later than the queue's snapshot, and a
/// key recorded meanwhile (a tick sent it) is left out too.
struct PreviewLedger {
    /// The dates most notices due in the window are about: a local date is within a day of the
    /// UTC one, and without leeway a notice due after now is about today or later (a leeway makes
    /// a day end, or a reminder, up to a day after its date).
    let dates: ClosedRange<LocalDate>
    /// Notices asked about so far.
    private var asked = 0
    /// The hashes of the keys recorded about `dates`, once read, and whether any is of a kind
    /// about a date (`slot`): a notice of another kind or date is not looked up (on an evening,
    /// the ledger holds today's reminders, and half of the notices are about other dates or kinds).
    private var recorded: (hashes: Set<Int>, any: [Bool])?

    init(from now: Instant = Instant(seconds: 0), through end: Instant = Instant(seconds: 0)) {
        func utcDate(_ t: Instant) -> LocalDate {
            LocalDate(day: Int(t.seconds >= 0 ? t.seconds / Instant.day : (t.seconds + 1) / Instant.day - 1))
        }
        dates = (utcDate(now) - 1)...(utcDate(end) + 1)
    }

    /// Leaves out of `found` the notices whose keys the ledger has, reading the window's keys at
    /// once when more than `after` notices have been asked about.
    mutating func leaveOutRecorded(
        _ found: inout NoticeBatch, names: inout NoticeNames, after: Int, _ store: any Store
    ) throws {
        guard !found.isEmpty else { return }
        asked += found.count
        if recorded == nil && asked > after {
            var hashes = Set<Int>()
            var any = [Bool](repeating: false, count: Self.slot(.atRisk, dates.upperBound, in: dates) + 8)
            let dates = self.dates
            try store.readBeside { r in
                try r.eachLedgerKey(dates: dates) { kind, user, streak, date in
                    guard let kind = NotificationKind(rawValue: kind), dates.contains(date) else { return }
                    var user = user
                    let s = names.number(streak: streak)
                    hashes.insert(user.withUTF8 { Self.hash(kind, UnsafeRawBufferPointer($0), s, date) })
                    any[Self.slot(kind, date, in: dates)] = true
                }
            }
            recorded = (hashes, any)
        }
        var ask: [Int] = []
        if let recorded {
            let dates = self.dates
            found.users.withUnsafeBytes { users in
                for (i, item) in found.items.enumerated() {
                    let n = item.notice
                    guard dates.contains(n.date) else {
                        ask.append(i)
                        continue
                    }
                    if recorded.any[Self.slot(n.kind, n.date, in: dates)],
                        recorded.hashes.contains(Self.hash(n.kind, item.user(in: users), item.streak, n.date))
                    {
                        ask.append(i)
                    }
                }
            }
        } else {
            ask = Array(found.items.indices)
        }
        guard !ask.isEmpty else { return }
        let batch = found
        let keys = ask.map { Self.key(of: batch.items[$0], in: batch, names) }
        let states = try store.readBeside { try $0.ledgerStates(keys: keys) }
        guard !states.isEmpty else { return }
        found.items.removeAll { states[Self.key(of: $0, in: batch, names)] != nil }
    }

    /// The place of a kind and a date of `dates` in `recorded.any`.
    static func slot(_ kind: NotificationKind, _ date: LocalDate, in dates: ClosedRange<LocalDate>) -> Int {
        (date.day - dates.lowerBound.day) * 8 + kind.number
    }

    /// A key's hash, from its parts: the kind, the streak by its number, the date, and the user
    /// id's bytes eight at a time (a `Hasher` for each of a million notices cost twice as much).
    static func hash(_ kind: NotificationKind, _ user: UnsafeRawBufferPointer, _ streak: Int32, _ date: LocalDate) -> Int
    {
        var h = UInt64(truncatingIfNeeded: date.day) << 32 ^ UInt64(UInt32(bitPattern: streak)) << 3
            ^ UInt64(kind.number)
        h = (h ^ h >> 29) &* 0xBF58_476D_1CE4_E5B9
        eachHashWord(user) { h = (h ^ $0) &* 0x9E37_79B9_7F4A_7C15 }
        return Int(truncatingIfNeeded: h ^ h >> 31)
    }

    /// The notification key of a notice (`Notification.key`).
    static func key(of item: QueuedNotice, in batch: NoticeBatch, _ names: NoticeNames) -> String {
        "\(item.notice.kind.rawValue)/\(batch.user(item))/\(names.streak(item.streak))/\(item.notice.date)"
    }
}
