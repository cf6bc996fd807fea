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
        return m
    }
}
