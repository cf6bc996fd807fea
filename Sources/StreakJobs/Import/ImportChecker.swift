import StreakCore
import StreakStore

/// Checks the check-ins of an `import` against the store's users, one at a time.
///
/// Users and their zones are read once into compact tables; zone names and
/// streak ids are numbered and checked once each. A plain CSV row is checked on
/// its bytes (`quick`); any row that fails there, and every JSON line, takes
/// `CheckinRules`, whose messages are the contract. A value, `Sendable`: the reading thread
/// takes one copy along, while the store's thread reads a file's second half with another.
struct ImportChecker: Sendable {
    var rules: CheckinRules
    /// Every valid user id in the store; the value is the user's number (in the order read)
    /// in the upper half, and their current zone as a number in `zones` in the lower.
    private(set) var users = ByteTable()
    /// The users' zones, then the valid zones met in the input.
    private(set) var zones = ByteTable()
    /// Whether each zone in `zones` is one (a stored zone can leave the tzdata).
    private var zoneIsValid: [Bool?] = []
    /// The valid streak ids met, and whether a valid check-in used each.
    private(set) var streaks = ByteTable()
    private var streakUsed: [Bool] = []
    private let daily: Int

    /// A checker of every user in the store (an import).
    init(store: any StoreReader, rules: CheckinRules) throws {
        self.init(rules: rules)
        try store.userZones { batch in batch.forEach { id, zone in addUser(id, zone: zone) } }
        zoneIsValid = Array(repeating: nil, count: zones.count)
    }

    /// A checker of the users given, by id and current zone (the API's batch: the users it names).
    init(rules: CheckinRules, users known: [(id: String, zone: String)]) {
        self.init(rules: rules)
        for (id, zone) in known {
            var (id, zone) = (id, zone)
            id.withUTF8 { id in zone.withUTF8 { addUser(id, zone: $0) } }
        }
        zoneIsValid = Array(repeating: nil, count: zones.count)
    }

    private init(rules: CheckinRules) {
        self.rules = rules
        daily = streaks.intern("daily")
        streakUsed = [false]
    }

    private mutating func addUser(_ id: UnsafeBufferPointer<UInt8>, zone: UnsafeBufferPointer<UInt8>) {
        // Ids that fail the rules stay unknown here, so the rules explain them.
        guard Validate.isUserID(id) else { return }
        users.add(id, value: UInt64(users.count) << 32 | UInt64(zones.intern(zone)))
    }

    /// The streak ids valid check-ins used.
    var streaksUsed: Set<String> { Set((0..<streaks.count).filter { streakUsed[$0] }.map(streaks.key)) }

    /// Checks a check-in given as strings.
    mutating func check(_ input: CheckinInput) -> Result<NewCheckin, FieldProblem> {
        let result = rules.check(input) { id in users.value(id).map { zones.key(Int($0 & 0xFFFF_FFFF)) } }
        if case .success(let c) = result { markUsed(streaks.intern(c.streak)) }
        return result
    }

    /// Every problem of a check-in `check` refused (`CheckinRules.problems`).
    func problems(_ input: CheckinInput) -> [FieldProblem] {
        rules.problems(input) { id in users.value(id).map { zones.key(Int($0 & 0xFFFF_FFFF)) } }
    }

    /// The check-ins of plain CSV rows that pass every rule on their bytes; nil
    /// where a row needs `check` (which then says what is wrong). The rows'
    /// users are looked up together (`ByteTable.values`).
    mutating func quick(_ lines: [InputFile.Line], _ csv: CheckinCSV, into checkins: inout [QuickCheckin?]) {
        rows.removeAll(keepingCapacity: true)
        for line in lines {
            var f = RowFields()
            // ASCII only: `CheckinCSV.fields` splits characters, and a combining mark after a comma joins it.
            if line.problem == nil && line.isASCII && csv.split(line.text, into: &split) {
                func field(_ column: Int) -> Range<Int>? {
                    column < 0 || split[column].isEmpty ? nil : split[column]
                }
                f.user = split[csv.user]
                f.at = split[csv.at]
                (f.streak, f.tz, f.id) = (field(csv.streak), field(csv.tz), field(csv.id))
            }
            rows.append(f)
        }
        quick(lines, into: &checkins)
    }

    /// The same for JSON lines, read by `PlainCheckinLine`.
    mutating func quickJSON(_ lines: [InputFile.Line], into checkins: inout [QuickCheckin?]) {
        rows.removeAll(keepingCapacity: true)
        for line in lines {
            var f = RowFields()
            if line.problem != nil || !plain.fields(line.text, into: &f) { f = RowFields() }
            rows.append(f)
        }
        quick(lines, into: &checkins)
    }

    /// The check-ins of `rows`, their users looked up together; no user has an empty id.
    private mutating func quick(_ lines: [InputFile.Line], into checkins: inout [QuickCheckin?]) {
        checkins.removeAll(keepingCapacity: true)
        let keys = lines.indices.map { k in UnsafeBufferPointer(rebasing: lines[k].text[rows[k].user]) }
        users.values(keys, into: &userNumbers)
        for (k, line) in lines.enumerated() {
            checkins.append(userNumbers[k].flatMap { quick(line.text, rows[k], user: $0) })
        }
    }

    /// Scratch space for `quick`.
    private var split: [Range<Int>] = []
    private var rows: [RowFields] = []
    private var userNumbers: [UInt64?] = []
    private var plain = PlainCheckinLine()

    /// A row's check-in when it passes every rule on its bytes.
    private mutating func quick(_ text: UnsafeBufferPointer<UInt8>, _ f: RowFields, user: UInt64) -> QuickCheckin? {
        func bytes(_ r: Range<Int>) -> UnsafeBufferPointer<UInt8> { UnsafeBufferPointer(rebasing: text[r]) }
        var streak = daily
        if let s = f.streak {
            guard let n = streakNumber(bytes(s)) else { return nil }
            streak = n
        }
        guard let at = RFC3339.parse(utf8: bytes(f.at)),
            at <= rules.now + CheckinRules.futureSlack, at >= rules.now - CheckinRules.maxAge
        else { return nil }
        var zone = Int(user & 0xFFFF_FFFF)
        if let tz = f.tz {
            guard let n = zoneNumber(bytes(tz)) else { return nil }
            zone = n
        }
        guard valid(zone) else { return nil }
        if let id = f.id, !Validate.isEventID(bytes(id)) { return nil }
        var meta: String?
        if let m = f.meta, !plain.metaText(text, m, into: &meta) { return nil }
        markUsed(streak)
        return QuickCheckin(
            user: f.user, userNumber: UInt32(user >> 32), streak: streak, at: at, zone: zone, eventID: f.id, meta: meta)
    }

    /// Adds a checked row to a batch for the store.
    func append(_ c: QuickCheckin, from text: UnsafeBufferPointer<UInt8>, to rows: inout CheckinRows) {
        streaks.withKey(c.streak) { streak in
            zones.withKey(c.zone) { zone in
                var meta = c.meta
                func add(_ meta: UnsafeBufferPointer<UInt8>?) {
                    rows.append(
                        user: UnsafeBufferPointer(rebasing: text[c.user]), streak: streak, at: c.at, zone: zone,
                        eventID: c.eventID.map { UnsafeBufferPointer(rebasing: text[$0]) }, meta: meta)
                }
                if meta == nil { add(nil) } else { meta!.withUTF8 { add($0) } }
            }
        }
    }

    /// A checked check-in given as strings (the full path's), in numbers: its user's, its
    /// streak's and its zone's (the zone added when new: the rules found it valid).
    mutating func numbers(of c: NewCheckin) -> (user: UInt32, streak: Int, zone: Int)? {
        guard let user = users.value(c.user).map({ UInt32($0 >> 32) }), let streak = streaks.value(c.streak) else {
            return nil
        }
        if let zone = zones.value(c.zone) { return (user, Int(streak), Int(zone)) }
        zoneIsValid.append(true)
        return (user, Int(streak), zones.intern(c.zone))
    }

    /// Takes in what a copy of this checker met (it read another part of the file): its
    /// streak ids and zones, numbered here when new. Answers each one's number here, by its
    /// number there.
    mutating func absorb(_ other: ImportChecker) -> (streaks: [Int], zones: [Int]) {
        var streakMap: [Int] = []
        for n in 0..<other.streaks.count {
            let here = other.streaks.withKey(n) { key in
                if let v = streaks.value(key) { return Int(v) }
                streakUsed.append(false)
                return streaks.intern(key)
            }
            streakMap.append(here)
            if other.streakUsed[n] { markUsed(here) }
        }
        var zoneMap: [Int] = []
        for n in 0..<other.zones.count {
            zoneMap.append(
                other.zones.withKey(n) { key in
                    if let v = zones.value(key) { return Int(v) }
                    zoneIsValid.append(other.zoneIsValid[n])
                    return zones.intern(key)
                })
        }
        return (streakMap, zoneMap)
    }

    private mutating func markUsed(_ streak: Int) {
        if streak == streakUsed.count { streakUsed.append(false) }
        streakUsed[streak] = true
    }

    /// A valid streak id's number (added when new).
    private mutating func streakNumber(_ s: UnsafeBufferPointer<UInt8>) -> Int? {
        if let n = streaks.value(s) { return Int(n) }
        guard Validate.isStreakID(s) else { return nil }
        streakUsed.append(false)
        return streaks.intern(s)
    }

    /// A valid zone's number (added when new); invalid names are never kept.
    private mutating func zoneNumber(_ name: UnsafeBufferPointer<UInt8>) -> Int? {
        if let n = zones.value(name) { return Int(n) }
        guard case .success = rules.zones.zone(String(decoding: name, as: UTF8.self)) else { return nil }
        zoneIsValid.append(true)
        return zones.intern(name)
    }

    private mutating func valid(_ zone: Int) -> Bool {
        if let known = zoneIsValid[zone] { return known }
        guard case .success = rules.zones.zone(zones.key(zone)) else {
            zoneIsValid[zone] = false
            return false
        }
        zoneIsValid[zone] = true
        return true
    }
}

/// A row that passed every rule: positions in its line, and numbers in the checker's tables.
struct QuickCheckin {
    var user: Range<Int>
    /// The user's number in the checker's `users`.
    var userNumber: UInt32
    var streak: Int
    var at: Instant
    var zone: Int
    var eventID: Range<Int>?
    /// The metadata as stored (compact JSON), when there is any.
    var meta: String?
}
