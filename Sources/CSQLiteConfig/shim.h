// Process-wide SQLite settings. sqlite3_config is variadic, which Swift cannot call, and takes
// effect only before the process opens its first connection.
#include <sqlite3.h>

/// Whether SQLite counts the memory it uses (a global mutex around every allocation).
static inline int streakd_sqlite_memstatus(int on) { return sqlite3_config(SQLITE_CONFIG_MEMSTATUS, on); }
