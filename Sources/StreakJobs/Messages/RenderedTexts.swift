import StreakCore

/// Notices' texts as `MessageBook.render` writes them, each written once: `preview` lists a
/// million notices whose texts differ only by a few numbers, a language and a streak. Bounded:
/// forgets everything past `limit` different texts.
struct RenderedTexts {
    let book: MessageBook
    var limit = 65_536
    private var known: [Key: [UInt8]] = [:]
    /// The texts asked for lately, by a cheap mix of the key's numbers: most notices find theirs
    /// here, without hashing the whole key as `known` does. (Keys and texts apart: an optional
    /// pair was copied by the runtime's generic witnesses, its text retained, at every notice.)
    private var recentKeys = [Key?](repeating: nil, count: 4096)
    private var recentTexts = [[UInt8]](repeating: [], count: 4096)

    init(_ book: MessageBook) { self.book = book }

    /// Everything a notice's text may depend on (`MessageBook.values`, the kind, the language),
    /// the streak and language by their numbers in `NoticeNames`.
    private struct Key: Hashable {
        var kind: NotificationKind
        var tag: Int32
        var streak: Int32
        var length: Int
        var freezes: Int
        var count: Int
        var goal: Int
        var date: LocalDate
    }

    /// Calls `body` with the text (UTF-8) of `n`, its streak and language (-1: none) numbered in
    /// `names`, which only ever grows between calls. The bytes are valid during the call only.
    mutating func withText<R>(
        _ n: Notice, streak: Int32, tag: Int32, names: NoticeNames, _ body: (UnsafeRawBufferPointer) -> R
    ) -> R {
        let key = Key(
            kind: n.kind, tag: tag, streak: streak, length: n.length, freezes: n.freezes, count: n.count, goal: n.goal,
            date: n.date)
        var mix = UInt64(truncatingIfNeeded: n.length) &* 0x9E37_79B9_7F4A_7C15
        func add(_ part: Int) { mix = (mix ^ UInt64(truncatingIfNeeded: part)) &* 0x9E37_79B9_7F4A_7C15 }
        add(n.freezes)
        add(n.count)
        add(n.goal)
        add(n.date.day)
        add(Int(streak) << 8 ^ Int(tag))
        add(n.kind.number)
        let slot = Int(truncatingIfNeeded: mix >> 52)
        if recentKeys[slot] != key {
            let text: [UInt8]
            if let found = known[key] {
                text = found
            } else {
                if known.count >= limit { known.removeAll(keepingCapacity: true) }
                text = Array(book.render(n, streak: names.streak(streak), tag: names.language(tag)).text.utf8)
                known[key] = text
            }
            recentKeys[slot] = key
            recentTexts[slot] = text
        }
        return recentTexts[slot].withUnsafeBytes(body)
    }
}
