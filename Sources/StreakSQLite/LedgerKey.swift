import StreakCore
import StreakStore

/// The ledger's unique index holds a key's parts: looked up by (local date, kind, user, streak).
extension LedgerKey {
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
