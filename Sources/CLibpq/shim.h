// libpq, PostgreSQL's own client library, for StreakPostgres only.
// Its API has no variadic functions, so Swift calls it directly.
#include <libpq-fe.h>
#include <poll.h>
