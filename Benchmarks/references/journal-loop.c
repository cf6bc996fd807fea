/* Reference: N sd_journal_send() calls with the fields of streakd's at_risk reminder entries,
 * timed around the loop with CLOCK_MONOTONIC. Built and run by ./journal-loop.
 *   journal-loop-bin N RUN_ID     prints the loop's seconds, failed sends, entries/s on stdout */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <systemd/sd-journal.h>

int main(int argc, char **argv) {
    if (argc != 3) {
        fprintf(stderr, "usage: %s N RUN_ID\n", argv[0]);
        return 2;
    }
    long n = strtol(argv[1], NULL, 10);
    const char *run = argv[2];
    long failed = 0;
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (long i = 0; i < n; i++) {
        int length = 1 + (int)(i % 365);
        int r = sd_journal_send(
            "MESSAGE=u%07ld: your streak \"daily\" (%d days) ends at midnight; check in before 20:00 \xe2\x80\xa6",
            i, length,
            "MESSAGE_ID=b8f3a2c7d1e04f6a9c2b5e8d7a1f3c46",
            "PRIORITY=5",
            "SYSLOG_IDENTIFIER=streakd-ref",
            "STREAKD_KIND=at_risk",
            "STREAKD_USER=u%07ld", i,
            "STREAKD_STREAK=daily",
            "STREAKD_LOCAL_DATE=2026-11-21",
            "STREAKD_STREAK_LENGTH=%d", length,
            "STREAKD_DUE=2026-11-21T19:00:00Z",
            "STREAKD_LOCAL_DUE=2026-11-21T20:00:00+01:00",
            "STREAKD_TIMEZONE=Europe/Berlin",
            "STREAKD_KEY=at_risk/u%07ld/daily/2026-11-21", i,
            "STREAKD_RUN=%s", run,
            NULL);
        if (r < 0) failed++;
    }
    clock_gettime(CLOCK_MONOTONIC, &t1);
    double s = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
    if (failed) fprintf(stderr, "journal-loop: %ld of %ld sends failed\n", failed, n);
    printf("%.6f %ld %.0f\n", s, failed, n / s);
    return 0;
}
