import StreakCore

/// One notice `preview` has planned, as plain values in 48 bytes (80 as a `Notice` and numbers): its user's id is bytes in its
/// batch's buffer, its streak, language and zone are numbers into a table of names
/// (`NoticeNames`). It moves by copying bytes, with no reference to retain or release, and an
/// evening when most streaks are at risk holds a million of them, waiting for their instant.
struct QueuedNotice {
    private var due: Int64
    private var date: Int32
    private var length: Int32
    private var count: Int32
    private var goal: Int32
    private var freezes: Int32
    /// Where the user id's bytes are in the batch's buffer.
    var userStart: Int32
    var streak: Int32
    private var zoneNumber: UInt16
    private var languageNumber: Int16
    /// Its place among its streak's notices (`Notices.upcoming`'s order breaks ties).
    var order: UInt16
    private var kind: UInt8
    var userCount: UInt8

    init(notice n: Notice, streak: Int32, language: Int32, zone: Int32, order: Int) {
        due = n.due.seconds
        date = Int32(clamping: n.date.day)
        length = Int32(clamping: n.length)
        count = Int32(clamping: n.count)
        goal = Int32(clamping: n.goal)
        freezes = Int32(clamping: n.freezes)
        kind = UInt8(n.kind.number)
        self.streak = streak
        zoneNumber = UInt16(truncatingIfNeeded: zone)
        languageNumber = Int16(truncatingIfNeeded: language)
        self.order = UInt16(clamping: order)
        userStart = 0
        userCount = 0
    }

    var notice: Notice {
        Notice(
            kind: NotificationKind.numbered[Int(kind)], date: LocalDate(day: Int(date)), due: Instant(seconds: due),
            length: Int(length), count: Int(count), goal: Int(goal), freezes: Int(freezes))
    }
    var dueSeconds: Int64 { due }
    var zone: Int32 { Int32(zoneNumber) }
    /// -1: the configuration's default language.
    var language: Int32 { Int32(languageNumber) }
    var isAtRisk: Bool { kind == 0 }

    /// Its user id in `users`, the bytes of its batch's ids.
    func user(in users: UnsafeRawBufferPointer) -> UnsafeRawBufferPointer {
        UnsafeRawBufferPointer(rebasing: users[Int(userStart)..<Int(userStart) + Int(userCount)])
    }
}

/// Notices and the bytes of their user ids.
struct NoticeBatch {
    var items: [QueuedNotice] = []
    var users: [UInt8] = []
    /// The order to read `items` in (nil: as they are).
    var order: [Int32]?

    var isEmpty: Bool { items.isEmpty }
    var count: Int { items.count }

    /// Appends `item`, its user id being `user` (its `userStart` is set here).
    mutating func append(_ item: QueuedNotice, user: UnsafeRawBufferPointer) {
        var item = item
        item.userStart = Int32(users.count)
        item.userCount = UInt8(user.count)
        users.append(contentsOf: user)
        items.append(item)
    }

    mutating func append(_ item: QueuedNotice, user: String) {
        var user = user
        user.withUTF8 { append(item, user: UnsafeRawBufferPointer($0)) }
    }

    func user(_ item: QueuedNotice) -> String {
        users.withUnsafeBytes { String(decoding: item.user(in: $0), as: UTF8.self) }
    }

    /// Each notice in order, with its user id's bytes.
    func forEach(_ body: (QueuedNotice, UnsafeRawBufferPointer) throws -> Void) rethrows {
        try users.withUnsafeBytes { users in
            func one(_ item: QueuedNotice) throws {
                try body(item, item.user(in: users))
            }
            if let order {
                for i in order { try one(items[Int(i)]) }
            } else {
                for item in items { try one(item) }
            }
        }
    }
}

/// The names a batch's notices number: zones, streak ids and languages, each once, in the order
/// first met. The planning thread keeps them and hands a copy along with each batch.
struct NoticeNames: Sendable {
    private(set) var zones: [Zone] = []
    private(set) var streaks: [String] = []
    private(set) var languages: [String] = []
    private var zoneIndex: [String: Int32] = [:]
    private var streakIndex: [String: Int32] = [:]
    private var languageIndex: [String: Int32] = [:]
    /// The last streak and language asked for: most notices name the one before's.
    private var lastStreak: (String, Int32)?
    private var lastLanguage: (String, Int32)?

    func zone(_ i: Int32) -> Zone { zones[Int(i)] }
    func streak(_ i: Int32) -> String { streaks[Int(i)] }
    func language(_ i: Int32) -> String? { i < 0 ? nil : languages[Int(i)] }

    mutating func number(_ zone: Zone) -> Int32 {
        if let i = zoneIndex[zone.identifier] { return i }
        zones.append(zone)
        zoneIndex[zone.identifier] = Int32(zones.count - 1)
        return Int32(zones.count - 1)
    }

    func number(zoneNamed name: String) -> Int32? { zoneIndex[name] }

    mutating func number(streak: String) -> Int32 {
        if let (s, i) = lastStreak, s == streak { return i }
        let i = Self.number(streak, &streaks, &streakIndex)
        lastStreak = (streak, i)
        return i
    }

    mutating func number(language: String?) -> Int32 {
        guard let language else { return -1 }
        if let (s, i) = lastLanguage, s == language { return i }
        let i = Self.number(language, &languages, &languageIndex)
        lastLanguage = (language, i)
        return i
    }

    private static func number(_ name: String, _ list: inout [String], _ index: inout [String: Int32]) -> Int32 {
        if let i = index[name] { return i }
        list.append(name)
        index[name] = Int32(list.count - 1)
        return Int32(list.count - 1)
    }
}

extension NotificationKind {
    /// The kinds in `allCases`' order, made once (`allCases` makes an array each time it is asked).
    static let numbered = NotificationKind.allCases

    /// Its place in `numbered`.
    var number: Int {
        switch self {
        case .atRisk: 0
        case .freezeUsed: 1
        case .streakBroken: 2
        case .freezeRefilled: 3
        case .badgeUnlocked: 4
        case .levelUp: 5
        case .streakRepaired: 6
        }
    }
}
