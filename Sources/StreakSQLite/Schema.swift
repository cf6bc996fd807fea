import GRDB

/// The SQLite schema: append-only plain-SQL migrations. Never edit one that
/// has shipped; add the next.
enum Schema {
    static var migrator: DatabaseMigrator {
        var m = DatabaseMigrator()
        m.registerMigration("1-users-checkins-freezes") { db in
            try db.execute(
                sql: """
                    CREATE TABLE users (
                        id TEXT PRIMARY KEY NOT NULL,
                        zone TEXT NOT NULL,
                        remind_at INTEGER NOT NULL,
                        remind INTEGER NOT NULL,
                        created_at INTEGER NOT NULL
                    );
                    CREATE TABLE user_zones (
                        user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
                        since INTEGER NOT NULL,
                        zone TEXT NOT NULL,
                        PRIMARY KEY (user_id, since)
                    );
                    CREATE TABLE checkins (
                        id INTEGER PRIMARY KEY,
                        user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
                        streak TEXT NOT NULL,
                        at INTEGER NOT NULL,
                        zone TEXT NOT NULL,
                        event_id TEXT,
                        meta TEXT,
                        stored_at INTEGER NOT NULL
                    );
                    CREATE UNIQUE INDEX checkins_event ON checkins(user_id, event_id) WHERE event_id IS NOT NULL;
                    CREATE INDEX checkins_streak ON checkins(user_id, streak, at);
                    CREATE TABLE freeze_events (
                        id INTEGER PRIMARY KEY,
                        user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
                        streak TEXT NOT NULL,
                        at INTEGER NOT NULL,
                        kind TEXT NOT NULL CHECK (kind IN ('grant', 'refill', 'use')),
                        date INTEGER
                    );
                    CREATE INDEX freeze_events_streak ON freeze_events(user_id, streak, at);
                    CREATE TABLE settings_epochs (
                        streak TEXT NOT NULL,
                        since INTEGER NOT NULL,
                        goal INTEGER NOT NULL,
                        leeway_hours INTEGER NOT NULL,
                        PRIMARY KEY (streak, since)
                    );
                    """)
        }
        m.registerMigration("2-ledger-schedule") { db in
            try db.execute(
                sql: """
                    CREATE TABLE notifications (
                        key TEXT PRIMARY KEY NOT NULL,
                        user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
                        streak TEXT NOT NULL,
                        kind TEXT NOT NULL,
                        local_date INTEGER NOT NULL,
                        due INTEGER NOT NULL,
                        timezone TEXT NOT NULL,
                        local_due TEXT NOT NULL,
                        streak_length INTEGER NOT NULL,
                        message TEXT NOT NULL,
                        state TEXT NOT NULL CHECK (state IN ('sent', 'expired')),
                        recorded_at INTEGER NOT NULL
                    );
                    CREATE INDEX notifications_streak ON notifications(user_id, streak);
                    CREATE TABLE deliveries (
                        key TEXT NOT NULL REFERENCES notifications(key) ON DELETE CASCADE,
                        sink TEXT NOT NULL,
                        state TEXT NOT NULL CHECK (state IN ('pending', 'delivered', 'expired', 'dead')),
                        attempts INTEGER NOT NULL DEFAULT 0,
                        last_attempt INTEGER,
                        last_error TEXT,
                        owner TEXT,
                        PRIMARY KEY (key, sink)
                    );
                    CREATE INDEX deliveries_pending ON deliveries(state) WHERE state = 'pending';
                    CREATE TABLE schedule (
                        user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
                        streak TEXT NOT NULL,
                        next_at INTEGER,
                        handled_through INTEGER,
                        version INTEGER NOT NULL DEFAULT 0,
                        PRIMARY KEY (user_id, streak)
                    );
                    CREATE INDEX schedule_next ON schedule(next_at) WHERE next_at IS NOT NULL;
                    CREATE TABLE meta (
                        key TEXT PRIMARY KEY NOT NULL,
                        value TEXT NOT NULL
                    );
                    INSERT INTO schedule (user_id, streak, next_at)
                        SELECT DISTINCT user_id, streak, 0 FROM checkins;
                    """)
        }
        // A run reads each due streak's history: covering indexes keep one user's rows together
        // (check-ins arrive in time order, so the table scatters them over many pages).
        m.registerMigration("3-covering-indexes") { db in
            try db.execute(
                sql: """
                    DROP INDEX checkins_streak;
                    CREATE INDEX checkins_streak ON checkins(user_id, streak, at, zone, stored_at, event_id);
                    CREATE INDEX user_zones_history ON user_zones(user_id, since, zone);
                    CREATE INDEX users_lookup ON users(id, zone, remind_at, remind);
                    """)
        }
        // Each streak's history packed by the run that last read it, and the version it was
        // read at: valid while the streak's version is still that (PackedHistory).
        m.registerMigration("4-packed-histories") { db in
            try db.execute(
                sql: """
                    ALTER TABLE schedule ADD COLUMN history BLOB;
                    ALTER TABLE schedule ADD COLUMN history_version INTEGER;
                    """)
        }
        // The ledger in date order: a run's new notifications go to the end of its indexes (today's
        // part), not to random places in million-row ones. The key is unique as (local date, kind,
        // user, streak), the tuple its text is made of; deliveries name their notification by id.
        // A user's notifications are found by a scan when the user is removed (no index of their own).
        m.registerMigration("5-ledger-by-date") { db in
            try db.execute(
                sql: """
                    CREATE TABLE ledger (
                        id INTEGER PRIMARY KEY,
                        key TEXT NOT NULL,
                        user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
                        streak TEXT NOT NULL,
                        kind TEXT NOT NULL,
                        local_date INTEGER NOT NULL,
                        due INTEGER NOT NULL,
                        timezone TEXT NOT NULL,
                        local_due TEXT NOT NULL,
                        streak_length INTEGER NOT NULL,
                        message TEXT NOT NULL,
                        state TEXT NOT NULL CHECK (state IN ('sent', 'expired')),
                        recorded_at INTEGER NOT NULL
                    );
                    INSERT INTO ledger (key, user_id, streak, kind, local_date, due, timezone, local_due,
                            streak_length, message, state, recorded_at)
                        SELECT key, user_id, streak, kind, local_date, due, timezone, local_due,
                            streak_length, message, state, recorded_at
                        FROM notifications ORDER BY local_date, recorded_at, key;
                    CREATE UNIQUE INDEX notifications_key ON ledger(local_date, kind, user_id, streak);
                    CREATE TABLE sink_deliveries (
                        notification INTEGER NOT NULL REFERENCES ledger(id) ON DELETE CASCADE,
                        sink TEXT NOT NULL,
                        state TEXT NOT NULL CHECK (state IN ('pending', 'delivered', 'expired', 'dead')),
                        attempts INTEGER NOT NULL DEFAULT 0,
                        last_attempt INTEGER,
                        last_error TEXT,
                        owner TEXT,
                        PRIMARY KEY (notification, sink)
                    ) WITHOUT ROWID;
                    INSERT INTO sink_deliveries
                        SELECT l.id, d.sink, d.state, d.attempts, d.last_attempt, d.last_error, d.owner
                        FROM deliveries d JOIN notifications n ON n.key = d.key
                        JOIN ledger l ON l.local_date = n.local_date AND l.kind = n.kind
                            AND l.user_id = n.user_id AND l.streak = n.streak
                        ORDER BY l.id, d.sink;
                    DROP TABLE deliveries;
                    DROP TABLE notifications;
                    ALTER TABLE ledger RENAME TO notifications;
                    ALTER TABLE sink_deliveries RENAME TO deliveries;
                    CREATE INDEX deliveries_pending ON deliveries(state) WHERE state = 'pending';
                    """)
        }
        // A streak's next run in a queue of its own, in time order: a run takes the rows due now
        // from the front and adds the next ones near the end, a few hundred pages where updating
        // each due streak's schedule row wrote one page per streak. A schedule row's next_at now
        // only marks a change (0: look again); its planned run is in `runs`, valid while the
        // streak's version is the run's (docs/ARCHITECTURE.md, "The schedule and its queue"). Runs name their
        // streak by its ids, read from the front of the queue alone, and by its schedule row's id:
        // the table is rebuilt with an INTEGER PRIMARY KEY, which VACUUM keeps (it may renumber a
        // plain rowid).
        m.registerMigration("6-runs") { db in
            try db.execute(
                sql: """
                    CREATE TABLE schedule_rows (
                        id INTEGER PRIMARY KEY,
                        user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
                        streak TEXT NOT NULL,
                        next_at INTEGER,
                        handled_through INTEGER,
                        version INTEGER NOT NULL DEFAULT 0,
                        history BLOB,
                        history_version INTEGER,
                        UNIQUE (user_id, streak)
                    );
                    INSERT INTO schedule_rows (id, user_id, streak, next_at, handled_through, version, history,
                            history_version)
                        SELECT rowid, user_id, streak, CASE WHEN next_at > 0 THEN NULL ELSE next_at END,
                            handled_through, version, history, history_version
                        FROM schedule ORDER BY rowid;
                    CREATE TABLE runs (
                        next_at INTEGER NOT NULL,
                        row INTEGER NOT NULL,
                        version INTEGER NOT NULL,
                        handled_through INTEGER,
                        user_id TEXT NOT NULL,
                        streak TEXT NOT NULL,
                        PRIMARY KEY (next_at, row)
                    ) WITHOUT ROWID;
                    INSERT INTO runs (next_at, row, version, handled_through, user_id, streak)
                        SELECT next_at, rowid, version, handled_through, user_id, streak FROM schedule
                        WHERE next_at > 0 ORDER BY next_at, rowid;
                    DROP TABLE schedule;
                    ALTER TABLE schedule_rows RENAME TO schedule;
                    CREATE INDEX schedule_next ON schedule(next_at) WHERE next_at IS NOT NULL;
                    CREATE INDEX runs_row ON runs(row);
                    """)
        }
        // The runs delivering notifications, with a lease kept alive by heartbeats on this host's
        // clock (`RunRegistry`): another run takes a run's deliveries over once the lease is out.
        m.registerMigration("7-runners") { db in
            try db.execute(
                sql: """
                    CREATE TABLE runners (
                        run TEXT PRIMARY KEY NOT NULL,
                        host TEXT NOT NULL,
                        lease INTEGER NOT NULL,
                        beat_at INTEGER NOT NULL
                    );
                    """)
        }
        // Each user's language (NULL: the configuration's default language), in the covering index
        // a run looks users up by; each notification's title (the desktop's summary line) in the
        // user's language beside its message, so a retry shows what the first try would have.
        m.registerMigration("8-user-language") { db in
            try db.execute(
                sql: """
                    ALTER TABLE users ADD COLUMN language TEXT;
                    DROP INDEX users_lookup;
                    CREATE INDEX users_lookup ON users(id, zone, remind_at, remind, language);
                    ALTER TABLE notifications ADD COLUMN title TEXT;
                    """)
        }
        // The store's identity (MetaKey.storeID): 128 random bits, written once, carried by every
        // journal entry as STREAKD_STORE so that `log` shows this store's entries alone.
        m.registerMigration("9-store-id") { db in
            try db.execute(
                sql: """
                    INSERT INTO meta (key, value) VALUES ('store_id', lower(hex(randomblob(16))))
                        ON CONFLICT (key) DO NOTHING;
                    """)
        }
        // Check-ins with metadata, which tagged badges count (SPEC §9), by user: few in most
        // stores, so a user's are found without reading their whole history.
        m.registerMigration("10-tagged-checkins") { db in
            try db.execute(
                sql: "CREATE INDEX checkins_tagged ON checkins(user_id, streak, at, meta) WHERE meta IS NOT NULL;")
        }
        // A planned run carries what planning its streak reads: the user's zone, reminder
        // settings and language, and the packed history, at the run's version (its schedule row's copy). Read
        // in the queue's order, they need no lookup of each streak's row and user: `preview`
        // reads the queue front to back (docs/ARCHITECTURE.md, "The path of one preview"). Runs planned before carry
        // nothing (NULL) until a run plans them again; readers then look them up as before.
        m.registerMigration("11-runs-carry-histories") { db in
            try db.execute(
                sql: """
                    ALTER TABLE runs ADD COLUMN zone TEXT;
                    ALTER TABLE runs ADD COLUMN remind_at INTEGER;
                    ALTER TABLE runs ADD COLUMN remind INTEGER;
                    ALTER TABLE runs ADD COLUMN language TEXT;
                    ALTER TABLE runs ADD COLUMN history BLOB;
                    """)
        }
        // The check-ins clustered on the key a run reads them by (docs/ARCHITECTURE.md, "SQLite
        // specifics"): the table was a rowid table plus a covering index holding every column but
        // `meta` again (`checkins_streak`, migration 3), so each row was written twice. Without a
        // rowid the table is that index, in (user, streak, at) order; `id` keeps rows at one
        // instant apart (two check-ins in one second are both stored) and keeps its values: new
        // rows take theirs from a counter in `meta` (`SQLiteCheckinImport.idsKey`), as nothing
        // can ask the new table for its largest id without reading it all. Nothing reads a
        // check-in by its id. The rows go over sorted, so each new page is written once.
        m.registerMigration("12-checkins-clustered") { db in
            try db.execute(
                sql: """
                    CREATE TABLE checkins_clustered (
                        user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
                        streak TEXT NOT NULL,
                        at INTEGER NOT NULL,
                        id INTEGER NOT NULL,
                        zone TEXT NOT NULL,
                        stored_at INTEGER NOT NULL,
                        event_id TEXT,
                        meta TEXT,
                        PRIMARY KEY (user_id, streak, at, id)
                    ) WITHOUT ROWID;
                    INSERT INTO checkins_clustered (user_id, streak, at, id, zone, stored_at, event_id, meta)
                        SELECT user_id, streak, at, id, zone, stored_at, event_id, meta FROM checkins
                        ORDER BY user_id, streak, at, id;
                    INSERT INTO meta (key, value) SELECT 'checkin_ids', coalesce(max(id), 0) FROM checkins
                        WHERE true ON CONFLICT (key) DO UPDATE SET value = excluded.value;
                    DROP TABLE checkins;
                    ALTER TABLE checkins_clustered RENAME TO checkins;
                    CREATE UNIQUE INDEX checkins_event ON checkins(user_id, event_id) WHERE event_id IS NOT NULL;
                    CREATE INDEX checkins_tagged ON checkins(user_id, streak, at, meta) WHERE meta IS NOT NULL;
                    """)
        }
        // Every run in the queue at its streak's version: a change to a streak (its version moved
        // on, marked unplanned: `ScheduleMark`) deletes its run, keeping in its row the instant
        // that run last handled it; a writer that plans the changed streak at once adds its new
        // run. Readers of the queue then look nothing up (before, a marked row's run was stale,
        // and readers left those out by a set of marked rows or a join). Runs already stale go.
        m.registerMigration("13-runs-follow-changes") { db in
            try db.execute(
                sql: """
                    CREATE TRIGGER schedule_changed AFTER UPDATE OF version ON schedule
                    WHEN new.next_at = \(ScheduleMark.unplanned)
                    BEGIN
                        UPDATE schedule SET handled_through = (SELECT max(h) FROM (SELECT new.handled_through AS h
                            UNION ALL SELECT handled_through FROM runs WHERE row = new.rowid))
                        WHERE rowid = new.rowid AND EXISTS (SELECT 1 FROM runs WHERE row = new.rowid);
                        DELETE FROM runs WHERE row = new.rowid;
                    END;
                    UPDATE schedule SET handled_through = (SELECT max(h) FROM (SELECT schedule.handled_through AS h
                        UNION ALL SELECT handled_through FROM runs WHERE row = schedule.rowid))
                    WHERE next_at IS NOT NULL AND rowid IN (SELECT row FROM runs);
                    DELETE FROM runs WHERE row IN (SELECT rowid FROM schedule WHERE next_at IS NOT NULL)
                        OR row NOT IN (SELECT rowid FROM schedule);
                    """)
        }
        // The HTTP API's tokens (SPEC §11): a name, a scope and the token's SHA-256, never the token.
        m.registerMigration("14-api-tokens") { db in
            try db.execute(
                sql: """
                    CREATE TABLE api_tokens (
                        name TEXT PRIMARY KEY,
                        scope TEXT NOT NULL,
                        sha256 TEXT NOT NULL UNIQUE,
                        created_at INTEGER NOT NULL,
                        last_used_at INTEGER
                    );
                    """)
        }
        // Rest days (SPEC §14) follow the goal's rule: recorded with the settings seen, a bit per
        // ISO weekday (Monday 1).
        m.registerMigration("15-rest-days") { db in
            try db.execute(sql: "ALTER TABLE settings_epochs ADD COLUMN rest_days INTEGER NOT NULL DEFAULT 0;")
        }
        // Pauses and repairs (SPEC §14) are streak events beside the freeze events: a span of dates
        // (`date` through `until_date`) with the instant and author that recorded it. SQLite cannot
        // change a CHECK, so the table is made again.
        m.registerMigration("16-pauses-repairs") { db in
            try db.execute(
                sql: """
                    CREATE TABLE freeze_events_new (
                        id INTEGER PRIMARY KEY,
                        user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
                        streak TEXT NOT NULL,
                        at INTEGER NOT NULL,
                        kind TEXT NOT NULL CHECK (kind IN ('grant', 'refill', 'use', 'pause', 'repair')),
                        date INTEGER,
                        until_date INTEGER,
                        author TEXT
                    );
                    INSERT INTO freeze_events_new (id, user_id, streak, at, kind, date)
                        SELECT id, user_id, streak, at, kind, date FROM freeze_events;
                    DROP TABLE freeze_events;
                    ALTER TABLE freeze_events_new RENAME TO freeze_events;
                    CREATE INDEX freeze_events_streak ON freeze_events(user_id, streak, at);
                    """)
        }
        // A webhook's `Retry-After` (SPEC §12): no try of the delivery before that instant.
        // PostgreSQL's 10.
        m.registerMigration("17-delivery-retry-at") { db in
            try db.execute(sql: "ALTER TABLE deliveries ADD COLUMN retry_at INTEGER")
        }
        // `--remind-at usual` (SPEC §14): `remind_at` holds the time in force, `remind_usual` says
        // it follows the history. In the covering index a run looks users up by, and an index of
        // the usual users alone, which a write of check-ins asks (PostgreSQL's 11).
        m.registerMigration("18-remind-usual") { db in
            try db.execute(
                sql: """
                    ALTER TABLE users ADD COLUMN remind_usual INTEGER NOT NULL DEFAULT 0;
                    DROP INDEX users_lookup;
                    CREATE INDEX users_lookup ON users(id, zone, remind_at, remind, language, remind_usual);
                    CREATE INDEX users_usual ON users(id) WHERE remind_usual = 1;
                    """)
        }
        return m
    }
}
