// Reference for Benchmarks/api: one-row inserts into a copy of streakd's store, each its own
// durable transaction (WAL, synchronous=FULL: the commit waits for the disk, as serve's do), in a
// plain C loop over libsqlite3 for SECONDS. The rows are serve's: a check-in of a random user of
// USERS (u0..), streak daily, now. One JSON line on stdout: rows per second.
//   sqlite-durable-loop DB USERS SECONDS
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec / 1e9;
}

static void check(int rc, sqlite3 *db, const char *what) {
    if (rc != SQLITE_OK && rc != SQLITE_DONE && rc != SQLITE_ROW) {
        fprintf(stderr, "sqlite-durable-loop: %s: %s\n", what, sqlite3_errmsg(db));
        exit(1);
    }
}

int main(int argc, char **argv) {
    if (argc != 4) {
        fprintf(stderr, "usage: sqlite-durable-loop DB USERS SECONDS\n");
        return 64;
    }
    int users = atoi(argv[2]);
    double seconds = atof(argv[3]);
    sqlite3 *db;
    check(sqlite3_open(argv[1], &db), db, "open");
    check(sqlite3_exec(db, "PRAGMA journal_mode=WAL; PRAGMA synchronous=FULL; PRAGMA busy_timeout=30000", 0, 0, 0),
          db, "pragmas");
    sqlite3_stmt *begin, *insert, *commit;
    check(sqlite3_prepare_v2(db, "BEGIN IMMEDIATE", -1, &begin, 0), db, "prepare");
    check(sqlite3_prepare_v2(db, "COMMIT", -1, &commit, 0), db, "prepare");
    check(sqlite3_prepare_v2(db,
                             "INSERT INTO checkins (user_id, streak, at, id, zone, stored_at) "
                             "VALUES (?1, 'daily', ?2, ?3, 'Europe/Berlin', ?2)",
                             -1, &insert, 0),
          db, "prepare");
    srand(20261127);
    long rows = 0;
    double start = now(), end = start + seconds;
    char user[32];
    while (now() < end) {
        snprintf(user, sizeof user, "u%d", rand() % users);
        check(sqlite3_step(begin), db, "begin");
        sqlite3_reset(begin);
        sqlite3_bind_text(insert, 1, user, -1, SQLITE_TRANSIENT);
        sqlite3_bind_int64(insert, 2, (sqlite3_int64)time(0));
        sqlite3_bind_int64(insert, 3, rows + 1000000000);
        check(sqlite3_step(insert), db, "insert");
        sqlite3_reset(insert);
        check(sqlite3_step(commit), db, "commit");
        sqlite3_reset(commit);
        rows++;
    }
    double took = now() - start;
    printf("{\"rows\":%ld,\"seconds\":%.3f,\"per_second\":%.1f}\n", rows, took, rows / took);
    sqlite3_close(db);
    return 0;
}
