import StreakCore

/// A notification key's parts, as the ledger's unique index holds them: "kind/user/streak/date"
/// (user and streak ids hold no '/'), looked up by (local date, kind, user, streak).
struct LedgerKey: Equatable {
    var localDate: LocalDate
    var kind: Substring
    var user: Substring
    var streak: Substring

    init?(_ key: String) {
        let parts = key.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 4, let date = LocalDate(parts[3]) else { return nil }
        (kind, user, streak, localDate) = (parts[0], parts[1], parts[2], date)
    }

    /// The condition on the notifications table, its four parameters numbered from `first`.
    static func match(from first: Int) -> String {
        "local_date = ?\(first) AND kind = ?\(first + 1) AND user_id = ?\(first + 2) AND streak = ?\(first + 3)"
    }

    func bind(_ s: RawStatement, from first: Int32) {
        s.bind(first, Int64(localDate.day))
        s.bind(first + 1, String(kind))
        s.bind(first + 2, String(user))
        s.bind(first + 3, String(streak))
    }
}
