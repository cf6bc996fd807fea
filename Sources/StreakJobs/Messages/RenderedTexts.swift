import StreakCore

/// Notices' texts as `MessageBook.render` writes them, each written once: `preview` lists a
/// million notices whose texts differ only by a few numbers, a language and a streak. Bounded:
/// forgets everything past `limit` different texts.
struct RenderedTexts {
    let book: MessageBook
    var limit = 65_536
    private var known: [Key: String] = [:]
    /// The texts asked for lately, by a cheap mix of the key's numbers: most notices find theirs
    /// here, without hashing the key's strings (the streak, the language) as `known` does.
    private var recent = [(key: Key, text: String)?](repeating: nil, count: 4096)

    init(_ book: MessageBook) { self.book = book }

    /// Everything a notice's text may depend on (`MessageBook.values`, the kind, the language).
    private struct Key: Hashable {
        var kind: NotificationKind
        var tag: String?
        var streak: String
        var length: Int
        var freezes: Int
        var count: Int
        var goal: Int
        var date: LocalDate
    }

    mutating func text(_ n: Notice, streak: String, tag: String?) -> String {
        let key = Key(
            kind: n.kind, tag: tag, streak: streak, length: n.length, freezes: n.freezes, count: n.count, goal: n.goal,
            date: n.date)
        var mix = UInt64(truncatingIfNeeded: n.length) &* 0x9E37_79B9_7F4A_7C15
        func add(_ part: Int) { mix = (mix ^ UInt64(truncatingIfNeeded: part)) &* 0x9E37_79B9_7F4A_7C15 }
        add(n.freezes)
        add(n.count)
        add(n.goal)
        add(n.date.day)
        add(n.kind.rawValue.utf8.count)  // the kinds' names differ in length; the key itself is compared
        let slot = Int(truncatingIfNeeded: mix >> 52)
        if let hit = recent[slot], hit.key == key { return hit.text }
        let text: String
        if let found = known[key] {
            text = found
        } else {
            if known.count >= limit { known.removeAll(keepingCapacity: true) }
            text = book.render(n, streak: streak, tag: tag).text
            known[key] = text
        }
        recent[slot] = (key, text)
        return text
    }
}
