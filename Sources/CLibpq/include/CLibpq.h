// libpq, PostgreSQL's own client library, for StreakPostgres only. Its API has no variadic
// functions, so Swift calls it directly. libpq.so.5 (with the Kerberos, LDAP and TLS libraries it
// brings) is opened on first use, not when streakd starts: every command pays for loading it
// otherwise, on SQLite too (see libpq.c).
#include <postgresql/libpq-fe.h>
#include <poll.h>

/// Opens libpq.so.5 and finds every function StreakPostgres calls; 0 when they are all there,
/// else -1 with the reason in streakd_libpq_error(). Called before any other libpq function.
int streakd_libpq_load(void);
/// Why streakd_libpq_load() failed (dlerror's text), or NULL.
const char *streakd_libpq_error(void);
