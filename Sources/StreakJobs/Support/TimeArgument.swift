import StreakCore

/// The times `log --since/--until` and `checkin --at` take: journalctl's (systemd.time(7)), read
/// in a zone (`log`: the local one, or UTC with `--utc`; `checkin`: the check-in's).
enum TimeArgument {
    /// The times a journal can hold and `log` takes: from 1970-01-01T00:00:00Z (journald's
    /// realtime is unsigned) to 9999-12-31T23:59:59Z.
    static let range = Instant(seconds: 0)...Instant(seconds: 253_402_300_799)

    static let rule =
        "use a time as journalctl takes it: \"2026-11-23 20:00[:00]\", \"2026-11-23\" (its midnight), \"21:00\" "
        + "(today), now, today, yesterday, tomorrow, \"yesterday 21:00\", \"2 hours ago\", -2h, +1d, \"@1795287600\", "
        + "or RFC 3339 such "
        + "as 2026-11-23T19:00:00Z (a date or time may end in UTC, an offset such as +01:00, or a zone name)"

    /// The instant `text` names, relative forms counted from `now`, local forms read in `zone`
    /// (`zones` looks up a zone named at the end); nil when it names none.
    static func parse(_ text: String, now: Instant, zone: Zone, zones: ZoneBook? = nil) -> Instant? {
        let text = text.trimmingSpaces
        guard !text.isEmpty, text.utf8.count <= 100 else { return nil }
        let today = zone.date(of: now)
        switch text {
        case "now": return now
        case "today": return zone.start(of: today)
        case "yesterday": return zone.start(of: today - 1)
        case "tomorrow": return zone.start(of: today + 1)
        default: break
        }
        // A day's name for its date, then a time: "yesterday 21:00".
        for (word, days) in [("today", 0), ("yesterday", -1), ("tomorrow", 1)] where text.hasPrefix(word + " ") {
            let rest = text.dropFirst(word.count)
            return absolute((today + days).description + rest, today: today, zone: zone, zones: zones)
        }
        if text.hasPrefix("@") {
            // Past any time a journal holds: refused by the caller's range, never converted with a trap.
            guard let seconds = Self.number(text.dropFirst()) else { return nil }
            return Instant(seconds: seconds < 1e15 ? Int64(seconds.rounded(.down)) : 1_000_000_000_000_000)
        }
        if let relative = relative(text) { return now + relative }
        return absolute(text, today: today, zone: zone, zones: zones)
    }

    /// `+SPAN`, `-SPAN`, `SPAN ago`, `SPAN left`: seconds from now (rounded toward the past).
    static func relative(_ text: String) -> Int64? {
        if text.hasSuffix(" ago"), let s = span(String(text.dropLast(4))) { return -s }
        if text.hasSuffix(" left"), let s = span(String(text.dropLast(5))) { return s }
        if text.hasPrefix("-"), let s = span(String(text.dropFirst())) { return -s }
        if text.hasPrefix("+"), let s = span(String(text.dropFirst())) { return s }
        return nil
    }

    /// A time span of systemd.time(7): numbers with units, `2h`, `2 hours`, `1h 30min`, `1.5d`.
    static func span(_ text: String) -> Int64? {
        let chars = Array(text)
        var i = 0
        var total = 0.0
        var parts = 0
        while i < chars.count {
            while i < chars.count && chars[i] == " " { i += 1 }
            guard i < chars.count else { break }
            let start = i
            while i < chars.count && (chars[i].isASCII && chars[i].isNumber || chars[i] == ".") { i += 1 }
            guard let n = number(String(chars[start..<i])[...]) else { return nil }
            while i < chars.count && chars[i] == " " { i += 1 }
            let unitStart = i
            while i < chars.count && chars[i].isLetter { i += 1 }
            guard let unit = unitSeconds[String(chars[unitStart..<i])] else { return nil }
            total += n * unit
            parts += 1
        }
        guard parts > 0, total < 1e12 else { return nil }
        return Int64(total.rounded(.down))
    }

    /// The units of systemd.time(7) (a month is 30.44 days, a year 365.25).
    static let unitSeconds: [String: Double] = {
        var units: [String: Double] = [:]
        let table: [([String], Double)] = [
            (["us", "usec", "µs"], 1e-6), (["ms", "msec"], 1e-3),
            (["s", "sec", "secs", "second", "seconds"], 1), (["m", "min", "mins", "minute", "minutes"], 60),
            (["h", "hr", "hrs", "hour", "hours"], 3600), (["d", "day", "days"], 86400),
            (["w", "week", "weeks"], 604_800), (["M", "month", "months"], 2_629_800),
            (["y", "year", "years"], 31_557_600),
        ]
        for (names, seconds) in table { for n in names { units[n] = seconds } }
        return units
    }()

    /// A plain decimal number: digits, and a fraction.
    static func number(_ text: Substring) -> Double? {
        guard !text.isEmpty, text.allSatisfy({ $0.isASCII && $0.isNumber || $0 == "." }),
            text.filter({ $0 == "." }).count <= 1, text.first != ".", text.count <= 20
        else { return nil }
        return Double(text)
    }

    /// `[Weekday] YYYY-MM-DD[( |T)HH:MM[:SS[.frac]]][ZONE]` or `HH:MM[:SS][ZONE]` (today): ZONE is
    /// `Z`, ` UTC`, an offset (`+01:00`, `+0100`) or ` Area/City`.
    static func absolute(_ text: String, today: LocalDate, zone: Zone, zones: ZoneBook?) -> Instant? {
        var words = text.split(separator: " ").map(String.init)
        var weekday: Int?
        if let first = words.first, let day = weekdays[first.lowercased()] {
            weekday = day
            words.removeFirst()
        }
        // A zone at the end: its own word, or stuck to the time.
        var fixedOffset: Int?
        var named: Zone?
        if words.count > 1, let last = words.last {
            if last == "UTC" || last == "Z" {
                fixedOffset = 0
                words.removeLast()
            } else if let offset = offsetValue(last) {
                fixedOffset = offset
                words.removeLast()
            } else if last.contains("/") || last.allSatisfy({ $0.isLetter }), let zones,
                case .success(let z) = zones.zone(last)
            {
                named = z
                words.removeLast()
            }
        }
        var dateText: String?
        var timeText: String?
        switch words.count {
        case 1:
            let word = words[0]
            if let t = word.firstIndex(where: { $0 == "T" || $0 == "t" }) {
                dateText = String(word[..<t])
                timeText = String(word[word.index(after: t)...])
            } else if word.contains(":") {
                timeText = word
            } else {
                dateText = word
            }
        case 2:
            dateText = words[0]
            timeText = words[1]
        default:
            return nil
        }
        if var t = timeText, fixedOffset == nil, named == nil {
            if t.hasSuffix("Z") || t.hasSuffix("z") {
                fixedOffset = 0
                t.removeLast()
            } else if let sign = t.lastIndex(where: { $0 == "+" || $0 == "-" }),
                let offset = offsetValue(String(t[sign...]))
            {
                fixedOffset = offset
                t = String(t[..<sign])
            }
            timeText = t
        }
        let date: LocalDate
        if let dateText {
            guard dateText.utf8.count == 10, let d = LocalDate(dateText) else { return nil }
            date = d
        } else {
            date = today
        }
        if let weekday, weekday != date.isoWeekday { return nil }
        var seconds = 0
        if let timeText {
            guard let s = timeOfDay(timeText) else { return nil }
            seconds = s
        }
        if let fixedOffset {
            return Instant(seconds: Int64(date.day) * Instant.day + Int64(seconds) - Int64(fixedOffset))
        }
        return (named ?? zone).instant(of: date, secondsIntoDay: seconds)
    }

    /// `HH:MM`, `HH:MM:SS`, `HH:MM:SS.frac`: seconds into the day (the fraction dropped).
    static func timeOfDay(_ text: String) -> Int? {
        let parts = text.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count == 2 || parts.count == 3 else { return nil }
        var secondsPart = parts.count == 3 ? parts[2] : "00"
        if let dot = secondsPart.firstIndex(of: ".") {
            let fraction = secondsPart[secondsPart.index(after: dot)...]
            guard !fraction.isEmpty, fraction.count <= 9, fraction.allSatisfy({ $0.isASCII && $0.isNumber }) else {
                return nil
            }
            secondsPart = secondsPart[..<dot]
        }
        guard parts[0].count == 2, parts[1].count == 2, secondsPart.count == 2,
            let h = Int(parts[0]), let m = Int(parts[1]), let s = Int(secondsPart), (0..<24).contains(h),
            (0..<60).contains(m), (0..<61).contains(s)
        else { return nil }
        return h * 3600 + m * 60 + min(s, 59)
    }

    /// `+01:00`, `-0500`, `+05`: seconds east of UTC.
    static func offsetValue(_ text: String) -> Int? {
        guard let sign = text.first, sign == "+" || sign == "-" else { return nil }
        let digits = text.dropFirst().filter { $0 != ":" }
        guard digits.count == 2 || digits.count == 4, digits.allSatisfy({ $0.isASCII && $0.isNumber }),
            text.dropFirst().filter({ $0 == ":" }).count <= (digits.count == 4 ? 1 : 0)
        else { return nil }
        let h = Int(digits.prefix(2)) ?? 99
        let m = digits.count == 4 ? Int(digits.suffix(2)) ?? 99 : 0
        guard h < 24, m < 60 else { return nil }
        return (h * 3600 + m * 60) * (sign == "-" ? -1 : 1)
    }

    static let weekdays: [String: Int] = [
        "mon": 1, "monday": 1, "tue": 2, "tuesday": 2, "wed": 3, "wednesday": 3, "thu": 4, "thursday": 4,
        "fri": 5, "friday": 5, "sat": 6, "saturday": 6, "sun": 7, "sunday": 7,
    ]
}

extension Context {
    /// A time as `log --since` and `checkin --at` take it, or a usage error naming `option`.
    func timeArgument(_ text: String, option: String, zone: Zone) throws -> Instant {
        guard let instant = TimeArgument.parse(text, now: now, zone: zone, zones: zones) else {
            if DurationText.seconds(text) != nil || TimeArgument.span(text) != nil {
                throw StreakdError.usage(
                    "\(option): \(quoted(text)) is a length of time, not a time; write \"\(text) ago\" or -\(text) for "
                        + "the past, +\(text) for the future")
            }
            throw StreakdError.usage("\(option): \(quoted(text)) is not a time; \(TimeArgument.rule)")
        }
        guard TimeArgument.range.contains(instant) else {
            throw StreakdError.usage(
                "\(option): \(quoted(text)) is out of range; use a time from \(TimeArgument.range.lowerBound) "
                    + "(@0) to \(TimeArgument.range.upperBound) (@\(TimeArgument.range.upperBound.seconds))")
        }
        return instant
    }
}

extension String {
    /// Without leading and trailing spaces.
    var trimmingSpaces: String {
        var s = Substring(self)
        while s.first == " " { s.removeFirst() }
        while s.last == " " { s.removeLast() }
        return String(s)
    }
}
