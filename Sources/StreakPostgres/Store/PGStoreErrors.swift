import StreakStore

/// PostgreSQL's errors as the store's kinds (exit codes, SPEC §6). What the next run may get past
/// (a lost connection, a time-out, a deadlock, a server out of connections) is `busy` (75, which
/// the units count as success); what it never will (a role without the rights, a read-only
/// connection or standby, a `search_path` without streakd's tables) is permanent, 77 or 69, with
/// what to change: a refusal every quarter hour must be seen (issue 31).
extension PostgresStore {
    static func storeError(_ e: PGError, reachedBefore: Bool, url: PGURL) -> StoreError {
        let (kind, advice) = refusal(e, url: url)
        if let kind {
            return StoreError(kind, e.message + (advice.map { "; " + $0 } ?? ""))
        }
        var base = Self.kind(of: e)
        if base == .unavailable && e.kind == .unreachable && reachedBefore { base = .busy }
        return StoreError(base, e.message, unreachable: base == .busy && [.lost, .unreachable].contains(e.kind))
    }

    static func kind(of e: PGError) -> StoreError.Kind {
        switch e.kind {
        case .unreachable, .badURL: .unavailable
        case .lost, .timedOut, .conflict: .busy
        case .newerSchema: .unavailable
        case .uniqueViolation, .other: .busy
        }
    }

    /// The kind a server's SQLSTATE implies when it is not one to wait out, and what to do about
    /// it; (nil, nil) leaves the error to `kind(of:)`. Only errors the server sent (with an
    /// SQLSTATE) and not already sorted (lost, timed out, conflict) are looked at.
    static func refusal(_ e: PGError, url: PGURL) -> (StoreError.Kind?, String?) {
        guard let state = e.sqlState, e.kind == .other else {
            return (nil, nil)
        }
        let role = "the role the URL connects as (\(url))"
        switch state {
        case "53100":  // disk_full: the server's disk
            return (.full, nil)
        case "42501":  // insufficient_privilege
            return (
                .denied,
                "\(role) may not do what streakd needs: it must own streakd's tables (the role that "
                    + "set them up) or be granted SELECT, INSERT, UPDATE, DELETE on them and USAGE on their "
                    + "sequences (docs/POSTGRES.md); this is not retried"
            )
        case "25006":  // read_only_sql_transaction
            return (
                .readOnly,
                "the server answers read-only: a standby, or default_transaction_read_only on for the "
                    + "role or database; point --store at the primary (target_session_attrs=read-write), "
                    + "this is not retried"
            )
        case "3F000", "42P01", "42883", "42704":  // no schema, undefined table, function or object
            return (
                .unavailable,
                "streakd's tables are not where the connection looks: check search_path (the role's, "
                    + "the database's or the URL's options) names the schema that holds them; this is not retried"
            )
        case "XX001", "XX002":  // data_corrupted, index_corrupted
            return (.damaged, "the database is damaged: see PostgreSQL's amcheck and restore a backup")
        default:
            break
        }
        switch state.prefix(2) {
        // Insufficient resources (too many connections, out of memory), an object in use, the
        // operator's intervention, a system error on the server: the next run may get past them.
        case "53", "55", "57", "58", "40", "08": return (nil, nil)
        // Authorization, a catalog or schema name, a statement the server refuses, a feature not
        // there: the same next time.
        case "28", "3D", "3F", "42", "0A", "25", "2B", "2F", "38", "39", "44", "F0", "P0":
            return (.unavailable, "this is not retried: the next run would meet it again")
        default:
            return (nil, nil)
        }
    }
}
