/// Where one row's fields are in its line's bytes: between commas in CSV, between
/// the quotes of the values in JSON. A field the row leaves out (or JSON null) is nil.
struct RowFields {
    var user: Range<Int> = 0..<0
    var at: Range<Int> = 0..<0
    var streak: Range<Int>?
    var tz: Range<Int>?
    var id: Range<Int>?
    /// JSON only: the metadata object, `{` to `}`, checked to be plain (`metaText` writes it).
    var meta: Range<Int>?
}

/// The quick reader of check-in JSON lines: a flat object of SPEC §6 (`user`, `at`,
/// and `streak`, `tz`, `id`, `meta` or not, in any order), read on its bytes with
/// no allocation. It answers false for anything else (escapes, unknown or repeated
/// keys, null for `user` or `at`, metadata beyond strings, plain integers and
/// booleans, whitespace other than spaces and tabs, any error), and `JSONReader`
/// then reads the line: its answers and messages are the contract. What this
/// reader accepts, the full path stores alike (`PlainCheckinLineTests`).
struct PlainCheckinLine {
    /// The metadata entries of the object read last (keys to find one given twice; sorted to be written).
    private var entries: [(key: Range<Int>, value: Range<Int>, isString: Bool)] = []
    private var text: [UInt8] = []

    init() { entries.reserveCapacity(32) }

    /// Reads a plain line's fields into `f`; false when the line needs `JSONReader`.
    mutating func fields(_ b: UnsafeBufferPointer<UInt8>, into f: inout RowFields) -> Bool {
        var i = 0
        var seen: UInt8 = 0
        f = RowFields()
        skipSpace(b, &i)
        guard i < b.count, b[i] == 123 else { return false }  // {
        i += 1
        while true {
            skipSpace(b, &i)
            guard let key = string(b, &i) else { return false }
            skipSpace(b, &i)
            guard i < b.count, b[i] == 58 else { return false }  // :
            i += 1
            skipSpace(b, &i)
            guard let bit = Self.field(b, key), seen & bit == 0, i < b.count else { return false }
            seen |= bit
            if b[i] == 110 {  // null: left out, except where a value is required
                guard bit & (Self.user | Self.at) == 0, word(b, &i, Self.null) else { return false }
            } else if bit == Self.meta {
                guard let object = meta(b, &i) else { return false }
                f.meta = object
            } else {
                guard let value = string(b, &i) else { return false }
                switch bit {
                case Self.user: f.user = value
                case Self.at: f.at = value
                case Self.streak: f.streak = value
                case Self.tz: f.tz = value
                default: f.id = value
                }
            }
            skipSpace(b, &i)
            guard i < b.count else { return false }
            if b[i] == 44 {  // ,
                i += 1
                continue
            }
            guard b[i] == 125 else { return false }  // }
            i += 1
            break
        }
        skipSpace(b, &i)
        return i == b.count && !f.user.isEmpty && !f.at.isEmpty
    }

    /// The metadata object at `range` of a line `fields` accepted, as the store keeps
    /// it: compact JSON, keys in order (as `JSON.object` writes `JSONInput.meta`'s
    /// sorted keys); nil when it has no keys. False, should it not read (the full path then).
    mutating func metaText(_ b: UnsafeBufferPointer<UInt8>, _ range: Range<Int>, into meta: inout String?) -> Bool {
        var i = range.lowerBound
        guard self.meta(b, &i) == range else { return false }
        guard !entries.isEmpty else {
            meta = nil
            return true
        }
        // Keys are a-z, 0-9 and '_': their bytes sort as Swift sorts the strings.
        entries.sort { x, y in
            UnsafeBufferPointer(rebasing: b[x.key]).lexicographicallyPrecedes(UnsafeBufferPointer(rebasing: b[y.key]))
        }
        text.removeAll(keepingCapacity: true)
        text.append(123)
        for (n, e) in entries.enumerated() {
            if n > 0 { text.append(44) }
            text.append(34)
            text.append(contentsOf: b[e.key])
            text.append(contentsOf: [34, 58])
            if e.isString { text.append(34) }
            text.append(contentsOf: b[e.value])
            if e.isString { text.append(34) }
        }
        text.append(125)
        meta = String(decoding: text, as: UTF8.self)
        return true
    }

    // The fields, as bits of a mask: each may come once.
    private static let user: UInt8 = 1
    private static let at: UInt8 = 2
    private static let streak: UInt8 = 4
    private static let tz: UInt8 = 8
    private static let id: UInt8 = 16
    private static let meta: UInt8 = 32

    private static func field(_ b: UnsafeBufferPointer<UInt8>, _ key: Range<Int>) -> UInt8? {
        let k = key.lowerBound
        switch key.count {
        case 2:
            switch (b[k], b[k + 1]) {
            case (97, 116): return at
            case (116, 122): return tz
            case (105, 100): return id
            default: return nil
            }
        case 4:
            if b[k] == 117 && b[k + 1] == 115 && b[k + 2] == 101 && b[k + 3] == 114 { return user }
            if b[k] == 109 && b[k + 1] == 101 && b[k + 2] == 116 && b[k + 3] == 97 { return meta }
            return nil
        case 6:
            let streak: [UInt8] = [115, 116, 114, 101, 97, 107]
            for n in 0..<6 where b[k + n] != streak[n] { return nil }
            return Self.streak
        default: return nil
        }
    }

    /// A plain metadata object: at most 32 valid keys, each once, with values that are
    /// strings of at most 1024 bytes, plain integers of at most 18 digits, or booleans.
    /// Its entries are left in `entries`.
    private mutating func meta(_ b: UnsafeBufferPointer<UInt8>, _ i: inout Int) -> Range<Int>? {
        let start = i
        guard i < b.count, b[i] == 123 else { return nil }  // {
        i += 1
        entries.removeAll(keepingCapacity: true)
        skipSpace(b, &i)
        if i < b.count && b[i] == 125 {
            i += 1
            return start..<i
        }
        while true {
            skipSpace(b, &i)
            guard let key = string(b, &i), Self.isMetaKey(b, key), entries.count < 32 else { return nil }
            for other in entries where other.key.count == key.count {
                if b[other.key].elementsEqual(b[key]) { return nil }
            }
            skipSpace(b, &i)
            guard i < b.count, b[i] == 58 else { return nil }  // :
            i += 1
            skipSpace(b, &i)
            guard i < b.count else { return nil }
            let value = i
            switch b[i] {
            case 34:
                guard let text = string(b, &i), text.count <= 1024 else { return nil }
                entries.append((key, text, true))
            case 116:
                guard word(b, &i, Self.true) else { return nil }
                entries.append((key, value..<i, false))
            case 102:
                guard word(b, &i, Self.false) else { return nil }
                entries.append((key, value..<i, false))
            case 45, 48...57:
                guard integer(b, &i) else { return nil }
                entries.append((key, value..<i, false))
            default: return nil
            }
            skipSpace(b, &i)
            guard i < b.count else { return nil }
            if b[i] == 44 {  // ,
                i += 1
                continue
            }
            guard b[i] == 125 else { return nil }  // }
            i += 1
            return start..<i
        }
    }

    /// `^[a-z][a-z0-9_]{0,63}$` (`Validate.metaKey`).
    private static func isMetaKey(_ b: UnsafeBufferPointer<UInt8>, _ key: Range<Int>) -> Bool {
        guard (1...64).contains(key.count), b[key.lowerBound] >= 97, b[key.lowerBound] <= 122 else { return false }
        for c in b[key] where !((c >= 97 && c <= 122) || (c >= 48 && c <= 57) || c == 95) { return false }
        return true
    }

    /// `-?(0|[1-9][0-9]*)`, at most 18 digits, not `-0`: an Int64 written as Swift writes it.
    private func integer(_ b: UnsafeBufferPointer<UInt8>, _ i: inout Int) -> Bool {
        let negative = b[i] == 45
        if negative { i += 1 }
        let start = i
        while i < b.count, b[i] >= 48, b[i] <= 57 { i += 1 }
        let digits = i - start
        guard digits >= 1, digits <= 18, b[start] != 48 || (digits == 1 && !negative) else { return false }
        return i == b.count || (b[i] != 46 && b[i] != 101 && b[i] != 69)  // . e E
    }

    /// A string without escapes or control characters: the range of its text.
    private func string(_ b: UnsafeBufferPointer<UInt8>, _ i: inout Int) -> Range<Int>? {
        guard i < b.count, b[i] == 34 else { return nil }
        i += 1
        let start = i
        while i < b.count {
            let c = b[i]
            if c == 34 {
                i += 1
                return start..<(i - 1)
            }
            if c == 92 || c < 32 { return nil }  // a backslash or a control character
            i += 1
        }
        return nil
    }

    private static let null: [UInt8] = Array("null".utf8)
    private static let `true`: [UInt8] = Array("true".utf8)
    private static let `false`: [UInt8] = Array("false".utf8)

    private func word(_ b: UnsafeBufferPointer<UInt8>, _ i: inout Int, _ w: [UInt8]) -> Bool {
        guard i + w.count <= b.count else { return false }
        for n in 0..<w.count where b[i + n] != w[n] { return false }
        i += w.count
        // A letter or digit after it would make another word (`nullx`).
        if i < b.count, (b[i] >= 97 && b[i] <= 122) || (b[i] >= 48 && b[i] <= 57) { return false }
        return true
    }

    /// Spaces and tabs: what JSON writers put between tokens (`json.dumps` writes ", " and ": ").
    private func skipSpace(_ b: UnsafeBufferPointer<UInt8>, _ i: inout Int) {
        while i < b.count, b[i] == 32 || b[i] == 9 { i += 1 }
    }
}
