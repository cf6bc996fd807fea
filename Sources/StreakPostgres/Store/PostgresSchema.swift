/// The PostgreSQL schema: append-only migrations, applied by `PGConnection.migrate` under an
/// advisory lock (several hosts may start at once). Never edit one that has shipped; add the next.
///
/// The same tables as SQLite's, in PostgreSQL's types (instants as bigint seconds, histories as
/// bytea), with two differences: a streak's planned run lives in its schedule row (`next_at`,
/// with `changed` as the change mark; PostgreSQL writes a new row version on every update
/// anyway, which SQLite's queue of runs was there to spare), and leases beat on the server's
/// clock (`runners.beat_at`, a timestamptz).
enum PostgresSchema {
    static let migrations = [
        PGMigration(
            "1-streakd",
            """
            CREATE TABLE users (
                id text PRIMARY KEY,
                zone text NOT NULL,
                remind_at integer NOT NULL,
                remind boolean NOT NULL,
                created_at bigint NOT NULL
            );
            CREATE TABLE user_zones (
                user_id text NOT NULL REFERENCES users(id) ON DELETE CASCADE,
                since bigint NOT NULL,
                zone text NOT NULL,
                PRIMARY KEY (user_id, since)
            );
            CREATE TABLE checkins (
                id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
                user_id text NOT NULL REFERENCES users(id) ON DELETE CASCADE,
                streak text NOT NULL,
                at bigint NOT NULL,
                zone text NOT NULL,
                event_id text,
                meta text,
                stored_at bigint NOT NULL
            );
            CREATE UNIQUE INDEX checkins_event ON checkins (user_id, event_id) WHERE event_id IS NOT NULL;
            CREATE INDEX checkins_streak ON checkins (user_id, streak, at) INCLUDE (zone, stored_at, event_id);
            CREATE TABLE freeze_events (
                id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
                user_id text NOT NULL REFERENCES users(id) ON DELETE CASCADE,
                streak text NOT NULL,
                at bigint NOT NULL,
                kind text NOT NULL CHECK (kind IN ('grant', 'refill', 'use')),
                date integer
            );
            CREATE INDEX freeze_events_streak ON freeze_events (user_id, streak, at);
            CREATE TABLE settings_epochs (
                streak text NOT NULL,
                since bigint NOT NULL,
                goal integer NOT NULL,
                leeway_hours integer NOT NULL,
                PRIMARY KEY (streak, since)
            );
            CREATE TABLE schedule (
                id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
                user_id text NOT NULL REFERENCES users(id) ON DELETE CASCADE,
                streak text NOT NULL,
                version bigint NOT NULL DEFAULT 1,
                changed boolean NOT NULL DEFAULT true,
                next_at bigint,
                handled_through bigint,
                history bytea,
                history_version bigint,
                UNIQUE (user_id, streak)
            );
            CREATE INDEX schedule_next ON schedule (next_at) WHERE next_at IS NOT NULL;
            CREATE INDEX schedule_changed ON schedule (id) WHERE changed;
            CREATE TABLE notifications (
                id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
                key text NOT NULL,
                user_id text NOT NULL REFERENCES users(id) ON DELETE CASCADE,
                streak text NOT NULL,
                kind text NOT NULL,
                local_date integer NOT NULL,
                due bigint NOT NULL,
                timezone text NOT NULL,
                local_due text NOT NULL,
                streak_length integer NOT NULL,
                message text NOT NULL,
                state text NOT NULL CHECK (state IN ('sent', 'expired')),
                recorded_at bigint NOT NULL
            );
            CREATE UNIQUE INDEX notifications_key ON notifications (local_date, kind, user_id, streak);
            CREATE TABLE deliveries (
                notification bigint NOT NULL REFERENCES notifications(id) ON DELETE CASCADE,
                sink text NOT NULL,
                state text NOT NULL CHECK (state IN ('pending', 'delivered', 'expired', 'dead')),
                attempts integer NOT NULL DEFAULT 0,
                last_attempt bigint,
                last_error text,
                owner text,
                PRIMARY KEY (notification, sink)
            );
            CREATE INDEX deliveries_pending ON deliveries (notification) WHERE state = 'pending';
            CREATE TABLE runners (
                run text PRIMARY KEY,
                host text NOT NULL,
                lease bigint NOT NULL,
                beat_at timestamptz NOT NULL
            );
            CREATE TABLE meta (
                key text PRIMARY KEY,
                value text NOT NULL
            );
            """),
        // Each user's language and each notification's heading in it (SPEC §10), and the store's
        // identity, which journal entries carry (STREAKD_STORE): SQLite's 8 and 9.
        PGMigration(
            "2-language-and-identity",
            """
            ALTER TABLE users ADD COLUMN language text;
            ALTER TABLE notifications ADD COLUMN title text;
            INSERT INTO meta (key, value) VALUES ('store_id', replace(gen_random_uuid()::text, '-', ''))
                ON CONFLICT (key) DO NOTHING;
            """),
        // Check-ins with metadata, which tagged badges count (SPEC §9), by user: SQLite's 10.
        PGMigration(
            "3-tagged-checkins",
            "CREATE INDEX checkins_tagged ON checkins (user_id) INCLUDE (streak, at, meta) WHERE meta IS NOT NULL;"),
        // A planned run carries its user's zone, reminder settings and language, beside the packed history
        // the row keeps: `preview` reads the schedule in run order without looking each user up
        // (a lookup each was most of its time at a million streaks). Kept while the version is
        // the run's: every user change moves it on. The queue's order is (next_at, id), an index
        // of its own, which `dueStreaks` uses too.
        PGMigration(
            "4-runs-carry-users",
            """
            ALTER TABLE schedule ADD COLUMN zone text, ADD COLUMN remind_at integer, ADD COLUMN remind boolean,
                ADD COLUMN language text;
            CREATE INDEX schedule_runs ON schedule (next_at, id) WHERE next_at IS NOT NULL;
            DROP INDEX schedule_next;
            """),
        // Check-ins one row per (user, streak), packed (`PackedCheckins`), and each user's event
        // ids once in a table of their own: a million streaks are a million rows, not seven
        // million with two indexes (an import of 7M check-ins spent 11 s of 20 building them). The
        // view `checkins` shows them as the rows they were, for people and psql.
        PGMigration(
            "5-packed-checkins",
            """
            CREATE TABLE checkin_lists (
                user_id text NOT NULL REFERENCES users(id) ON DELETE CASCADE,
                streak text NOT NULL,
                checkins bytea NOT NULL,
                tagged boolean NOT NULL,
                PRIMARY KEY (user_id, streak)
            );
            CREATE TABLE checkin_events (
                user_id text NOT NULL REFERENCES users(id) ON DELETE CASCADE,
                event_id text NOT NULL,
                PRIMARY KEY (user_id, event_id)
            );
            INSERT INTO checkin_lists (user_id, streak, checkins, tagged)
            SELECT user_id, streak,
                string_agg(\(PackedCheckins.sqlRecord(at: "at", storedAt: "stored_at", zone: "zone", eventID: "event_id", meta: "meta")),
                    ''::bytea ORDER BY at, id),
                bool_or(meta IS NOT NULL)
            FROM checkins GROUP BY user_id, streak ORDER BY user_id, streak;
            INSERT INTO checkin_events (user_id, event_id)
            SELECT user_id, event_id FROM checkins WHERE event_id IS NOT NULL ORDER BY user_id, event_id;
            DROP TABLE checkins;
            CREATE FUNCTION streakd_checkins(list bytea)
            RETURNS TABLE (at bigint, stored_at bigint, zone text, event_id text, meta text)
            LANGUAGE plpgsql IMMUTABLE STRICT AS $$
            DECLARE
                i int := 0;
                flags int;
                n int;
                current_zone text;
            BEGIN
                WHILE i < length(list) LOOP
                    at := ('x' || encode(substring(list FROM i + 1 FOR 8), 'hex'))::bit(64)::bigint;
                    stored_at := ('x' || encode(substring(list FROM i + 9 FOR 8), 'hex'))::bit(64)::bigint;
                    flags := get_byte(list, i + 16);
                    i := i + 17;
                    event_id := NULL;
                    meta := NULL;
                    IF flags & 1 <> 0 THEN
                        n := ('x' || encode(substring(list FROM i + 1 FOR 4), 'hex'))::bit(32)::int;
                        current_zone := convert_from(substring(list FROM i + 5 FOR n), 'UTF8');
                        i := i + 4 + n;
                    END IF;
                    IF flags & 2 <> 0 THEN
                        n := ('x' || encode(substring(list FROM i + 1 FOR 4), 'hex'))::bit(32)::int;
                        event_id := convert_from(substring(list FROM i + 5 FOR n), 'UTF8');
                        i := i + 4 + n;
                    END IF;
                    IF flags & 4 <> 0 THEN
                        n := ('x' || encode(substring(list FROM i + 1 FOR 4), 'hex'))::bit(32)::int;
                        meta := convert_from(substring(list FROM i + 5 FOR n), 'UTF8');
                        i := i + 4 + n;
                    END IF;
                    zone := current_zone;
                    RETURN NEXT;
                END LOOP;
            END
            $$;
            CREATE VIEW checkins AS
            SELECT l.user_id, l.streak, c.at, c.zone, c.event_id, c.meta, c.stored_at
            FROM checkin_lists l CROSS JOIN LATERAL streakd_checkins(l.checkins) c;
            """),
        // A run is valid while its version is the streak's (`run_version`): a writer that changes a
        // streak may plan it at once (`planChanged`: an import, a check-in), leaving it marked for
        // the next run, and readers of the queue find it there. A change that plans nothing moves
        // the version on and so makes the run stale. Unplanned rows (changed, no valid run) have
        // an index of their own: after a large import every row is changed, and planned.
        PGMigration(
            "6-run-versions",
            """
            ALTER TABLE schedule ADD COLUMN run_version bigint;
            UPDATE schedule SET run_version = version WHERE NOT changed AND next_at IS NOT NULL;
            CREATE INDEX schedule_unplanned ON schedule (id) WHERE changed AND run_version IS DISTINCT FROM version;
            """),
        // The HTTP API's tokens (SPEC §11): a name, a scope and the token's SHA-256: SQLite's 14.
        PGMigration(
            "7-api-tokens",
            """
            CREATE TABLE api_tokens (
                name text PRIMARY KEY,
                scope text NOT NULL,
                sha256 text NOT NULL UNIQUE,
                created_at bigint NOT NULL,
                last_used_at bigint
            );
            """),
        // Rest days (SPEC §14), with the goal and leeway seen: SQLite's 15.
        PGMigration(
            "8-rest-days",
            """
            ALTER TABLE settings_epochs ADD COLUMN rest_days integer NOT NULL DEFAULT 0;
            """),
        // Pauses and repairs (SPEC §14) as streak events, a span of dates with their author:
        // SQLite's 16.
        PGMigration(
            "9-pauses-repairs",
            """
            ALTER TABLE freeze_events DROP CONSTRAINT freeze_events_kind_check;
            ALTER TABLE freeze_events ADD CONSTRAINT freeze_events_kind_check
                CHECK (kind IN ('grant', 'refill', 'use', 'pause', 'repair'));
            ALTER TABLE freeze_events ADD COLUMN until_date integer, ADD COLUMN author text;
            """),
        // A webhook's `Retry-After` (SPEC §12): no try of the delivery before that instant.
        // SQLite's 17.
        PGMigration(
            "10-delivery-retry-at",
            """
            ALTER TABLE deliveries ADD COLUMN retry_at bigint;
            """),
        // `--remind-at usual` (SPEC §14): `remind_at` holds the time in force, `remind_usual` says
        // it follows the history; an index of the usual users alone, which a write of check-ins
        // asks. SQLite's 18.
        PGMigration(
            "11-remind-usual",
            """
            ALTER TABLE users ADD COLUMN remind_usual boolean NOT NULL DEFAULT false;
            CREATE INDEX users_usual ON users (id) WHERE remind_usual;
            """),
    ]
}
