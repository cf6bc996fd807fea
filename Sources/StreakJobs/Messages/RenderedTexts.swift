import StreakCore

/// Notices' texts as `MessageBook.render` writes them, each written once: `preview` lists a
/// million notices whose texts differ only by a few numbers, a language and a streak. Bounded:
/// forgets everything past `limit` different texts.
struct RenderedTexts {
    let book: MessageBook
    var limit = 65_536
    private var known: [Key: String] = [:]

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
        if let text = known[key] { return text }
        if known.count >= limit { known.removeAll(keepingCapacity: true) }
        let text = book.render(n, streak: streak, tag: tag).text
        known[key] = text
        return text
    }
}
