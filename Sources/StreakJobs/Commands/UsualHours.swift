import StreakCore
import StreakStore

/// `--remind-at usual` (SPEC §14). A usual user's reminder time in force is `UsualHour` over the
/// stored history of all their streaks, kept in the user's `remindAt`, so every reader (tick,
/// preview, status, retries) takes it as it takes a fixed time and none works it out. Each write
/// that can move it works it out again, in its transaction, for the usual users it touched:
/// check-ins (`checkin`, `import`, the API's check-ins and batches), `user add|set|import` and
/// the API's `PUT`, and a tick that finds the bounds changed. When it moves, the user is updated
/// as `user set --remind-at` would: each of their streaks' versions moves on and their runs are
/// planned again. Users with a fixed time cost nothing: they are never looked at.
extension Context {
    /// The time in force for `user` (whose `remindUsual` is set), from every streak's history as
    /// the transaction sees it, as of now.
    func usualTime(of user: User, in r: some HistoryReading) throws -> Int {
        let histories = try r.streaks(of: user.id).map { try history(of: user, streak: $0, in: r) }
        return UsualHour.time(histories, at: now, earliest: config.usualEarliest, latest: config.usualLatest)
    }

    /// `user` with its time in force worked out, when it is reminded at its usual hour. The first
    /// one worked out notes the bounds it was worked out by (`usualBoundsChanged`).
    func inForce(_ user: User, in w: any StoreWriter) throws -> User {
        guard user.remindUsual else { return user }
        if try w.meta(MetaKey.usualBounds) == nil { try w.setMeta(MetaKey.usualBounds, usualBoundsText) }
        var u = user
        u.remindAt = try usualTime(of: user, in: w)
        return u
    }

    /// Works a usual user's time in force out again; stores it when it moved. Answers the user as
    /// stored now, and whether it moved (then every streak of theirs is unplanned: their versions
    /// moved on). The user is locked first and read again, so that of two writers at once the
    /// second works it out from what the first stored (PostgreSQL; `UserWriting.lockUser`).
    @discardableResult
    func refreshUsual(_ stale: User, in w: any StoreWriter) throws -> (user: User, moved: Bool) {
        try w.lockUser(stale.id)
        guard let user = try w.user(stale.id), user.remindUsual else { return (stale, false) }
        let u = try inForce(user, in: w)
        guard u.remindAt != user.remindAt else { return (user, false) }
        try w.updateUser(u, at: now)
        return (u, true)
    }

    /// After a write stored check-ins, before their streaks are planned: each usual user among
    /// `users`, worked out again. An import and an API batch name the usual users they stored
    /// check-ins for (`CheckinImport.usualUsers`: not those of the store, nor one whose streak an
    /// earlier write changed, nor one whose check-ins were all duplicates).
    func refreshUsual(users: Set<String>, in w: any StoreWriter) throws {
        for id in users.sorted() {
            if let user = try w.user(id), user.remindUsual { try refreshUsual(user, in: w) }
        }
    }

    /// The bounds as `MetaKey.usualBounds` notes them.
    var usualBoundsText: String {
        "\(Validate.wallTimeText(config.usualEarliest))-\(Validate.wallTimeText(config.usualLatest))"
    }

    /// A tick's check that the usual users' times were worked out within the bounds configured
    /// now; when not (the configuration changed), every usual user's is worked out again, and
    /// those that moved are planned by this tick. A read first: a run that finds them the same,
    /// or no usual hour ever worked out, writes nothing.
    func usualBoundsChanged() throws {
        let bounds = usualBoundsText
        guard let noted = try store.read({ try $0.meta(MetaKey.usualBounds) }), noted != bounds else { return }
        try store.write { w in
            guard try w.meta(MetaKey.usualBounds) != bounds else { return }
            for id in try w.usualUsers() {
                if let user = try w.user(id) { try refreshUsual(user, in: w) }
            }
            try w.setMeta(MetaKey.usualBounds, bounds)
        }
    }
}
