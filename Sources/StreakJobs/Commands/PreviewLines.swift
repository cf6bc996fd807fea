import StreakCore

/// `preview`'s lines written straight into bytes: exactly what `Notification.line` and
/// `Notification.json.text` print (`PreviewLinesTests` compares them), without building a
/// notification, its JSON value or their strings for each of a million lines.
struct PreviewLines {
    var bytes: [UInt8] = []
    /// The last due instant (UTC), local due instant (and its offset) and date written, as
    /// written: notices come in due order, many thousand at each instant, about few dates.
    private var written = [(key: Int64, offset: Int, bytes: [UInt8])](repeating: (.min, 0, []), count: 3)

    /// One notice's line and its line break, `message` its text in the user's language. The
    /// zone is asked for only by a JSON line (a copy of it is references to retain and release).
    mutating func append(_ e: UpcomingQueue.Entry, zone: @autoclosure () -> Zone, message: String, json: Bool) {
        var (user, streak, message) = (e.user, e.streak, message)
        user.withUTF8 { user in
            streak.withUTF8 { streak in
                message.withUTF8 {
                    append(
                        e.notice, user: UnsafeRawBufferPointer(user), streak: UnsafeRawBufferPointer(streak), zone: zone(),
                        message: UnsafeRawBufferPointer($0), json: json)
                }
            }
        }
    }

    /// The same, for the notice `n`, its user id, streak id and text as UTF-8.
    mutating func append(
        _ n: Notice, user: UnsafeRawBufferPointer, streak: UnsafeRawBufferPointer, zone: @autoclosure () -> Zone,
        message: UnsafeRawBufferPointer, json: Bool
    ) {
        if !json {
            utcInstant(n.due)
            byte(0x20)
            ascii(n.kind.rawValue)
            byte(0x20)
            bytes.append(contentsOf: user)
            byte(0x2F)
            bytes.append(contentsOf: streak)
            byte(0x20)
            sameDate(n.date)
            ascii(": ")
            bytes.append(contentsOf: message)
            byte(0x0A)
            return
        }
        ascii(#"{"kind":"#)
        string(n.kind.rawValue)
        ascii(#","user":"#)
        byte(0x22)
        escaped(user)
        byte(0x22)
        ascii(#","streak":"#)
        byte(0x22)
        escaped(streak)
        byte(0x22)
        ascii(#","due":""#)
        utcInstant(n.due)
        ascii(#"","local_due":""#)
        let zone = zone()
        let offset = zone.offset(at: n.due)
        again(1, n.due.seconds, offset) { $0.instant(n.due, offset: offset, utcZ: false) }
        ascii(#"","timezone":"#)
        string(zone.identifier)
        ascii(#","local_date":""#)
        sameDate(n.date)
        ascii(#"","streak_length":"#)
        integer(n.length)
        ascii(#","message":"#)
        byte(0x22)
        escaped(message)
        byte(0x22)
        ascii(#","key":""#)
        escaped(n.kind.rawValue)
        byte(0x2F)
        escaped(user)
        byte(0x2F)
        escaped(streak)
        byte(0x2F)
        sameDate(n.date)
        ascii("\"}\n")
    }

    mutating func byte(_ b: UInt8) { bytes.append(b) }

    /// What `write` writes, copied from the last time when `key` and `offset` are the same as
    /// then (`slot`: which of `written`).
    private mutating func again(_ slot: Int, _ key: Int64, _ offset: Int, _ write: (inout PreviewLines) -> Void) {
        if written[slot].key == key && written[slot].offset == offset {
            written[slot].bytes.withUnsafeBufferPointer { bytes.append(contentsOf: $0) }
            return
        }
        let start = bytes.count
        write(&self)
        written[slot] = (key, offset, Array(bytes[start...]))
    }

    mutating func utcInstant(_ t: Instant) { again(0, t.seconds, 0) { $0.instant(t, offset: 0, utcZ: true) } }

    mutating func sameDate(_ d: LocalDate) { again(2, Int64(d.day), 0) { $0.date(d) } }

    /// Text as it is (`ascii` for the common case: any UTF-8 is copied unchanged).
    mutating func ascii(_ s: String) {
        var s = s
        s.withUTF8 { bytes.append(contentsOf: $0) }
    }

    /// A JSON string, quoted and escaped as `JSON.escape` does.
    mutating func string(_ s: String) {
        byte(0x22)
        escaped(s)
        byte(0x22)
    }

    /// `JSON.escape` without the quotes (`JSON.appendEscaped`).
    mutating func escaped(_ s: String) { JSON.appendEscaped(s, to: &bytes) }

    /// The same of UTF-8 bytes.
    mutating func escaped(_ utf8: UnsafeRawBufferPointer) { JSON.appendEscaped(utf8, to: &bytes) }

    mutating func integer(_ value: Int) { ascii(String(value)) }

    /// `n` as at least `width` digits (`Digits.pad` for non-negative values).
    mutating func digits(_ n: Int, _ width: Int) {
        guard n >= 0 else {
            ascii(String(n))
            return
        }
        var divisor = 1
        var length = 1
        while length < width || n / divisor >= 10 {
            divisor *= 10
            length += 1
        }
        var rest = n
        while divisor > 0 {
            byte(UInt8(48 + rest / divisor))
            rest %= divisor
            divisor /= 10
        }
    }

    /// `LocalDate.description`.
    mutating func date(_ d: LocalDate) {
        let (y, m, day) = d.components
        guard (0...9999).contains(y) else {
            ascii(d.description)
            return
        }
        digits(y, 4)
        byte(0x2D)
        digits(m, 2)
        byte(0x2D)
        digits(day, 2)
    }

    /// `RFC3339.format`.
    mutating func instant(_ t: Instant, offset: Int, utcZ: Bool) {
        let local = t.seconds + Int64(offset)
        let days = local >= 0 ? local / Instant.day : (local - Instant.day + 1) / Instant.day
        let secs = Int(local - days * Instant.day)
        date(LocalDate(day: Int(days)))
        byte(0x54)
        digits(secs / 3600, 2)
        byte(0x3A)
        digits(secs / 60 % 60, 2)
        byte(0x3A)
        digits(secs % 60, 2)
        if offset == 0 && utcZ {
            byte(0x5A)
            return
        }
        let a = abs(offset)
        byte(offset < 0 ? 0x2D : 0x2B)
        digits(a / 3600, 2)
        byte(0x3A)
        digits(a / 60 % 60, 2)
    }
}
