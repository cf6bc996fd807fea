// The libpq functions StreakPostgres calls, each forwarding to libpq.so.5 opened at run time.
// Linking libpq itself made every streakd process load it and the 20 libraries it needs
// (Kerberos, LDAP, GnuTLS...) before main: about 3.8 ms of CPU of a `streakd --version`'s 11,
// paid by every tick and every command on SQLite too. Each function here has libpq-fe.h's own
// prototype; streakd_libpq_load() fills the table once (PGURL's init calls it first, so
// nothing else runs before it).
#include <dlfcn.h>
#include <pthread.h>
#include <stddef.h>
#include "CLibpq.h"

#define LIBPQ_FUNCTIONS(X) \
    X(int, PQbackendPID, (const PGconn *conn), (conn)) \
    X(int, PQcancel, (PGcancel *cancel, char *errbuf, int errbufsize), (cancel, errbuf, errbufsize)) \
    X(void, PQclear, (PGresult *res), (res)) \
    X(char *, PQcmdStatus, (PGresult *res), (res)) \
    X(char *, PQcmdTuples, (PGresult *res), (res)) \
    X(PostgresPollingStatusType, PQconnectPoll, (PGconn *conn), (conn)) \
    X(PGconn *, PQconnectStartParams, \
      (const char *const *keywords, const char *const *values, int expand_dbname), \
      (keywords, values, expand_dbname)) \
    X(void, PQconninfoFree, (PQconninfoOption *connOptions), (connOptions)) \
    X(PQconninfoOption *, PQconninfoParse, (const char *conninfo, char **errmsg), (conninfo, errmsg)) \
    X(int, PQconsumeInput, (PGconn *conn), (conn)) \
    X(char *, PQerrorMessage, (const PGconn *conn), (conn)) \
    X(int, PQfformat, (const PGresult *res, int field_num), (res, field_num)) \
    X(void, PQfinish, (PGconn *conn), (conn)) \
    X(int, PQflush, (PGconn *conn), (conn)) \
    X(char *, PQfname, (const PGresult *res, int field_num), (res, field_num)) \
    X(void, PQfreeCancel, (PGcancel *cancel), (cancel)) \
    X(void, PQfreemem, (void *ptr), (ptr)) \
    X(PGcancel *, PQgetCancel, (PGconn *conn), (conn)) \
    X(int, PQgetCopyData, (PGconn *conn, char **buffer, int async), (conn, buffer, async)) \
    X(PGresult *, PQgetResult, (PGconn *conn), (conn)) \
    X(int, PQgetisnull, (const PGresult *res, int tup_num, int field_num), (res, tup_num, field_num)) \
    X(int, PQgetlength, (const PGresult *res, int tup_num, int field_num), (res, tup_num, field_num)) \
    X(char *, PQgetvalue, (const PGresult *res, int tup_num, int field_num), (res, tup_num, field_num)) \
    X(int, PQisBusy, (PGconn *conn), (conn)) \
    X(int, PQnfields, (const PGresult *res), (res)) \
    X(int, PQntuples, (const PGresult *res), (res)) \
    X(int, PQputCopyData, (PGconn *conn, const char *buffer, int nbytes), (conn, buffer, nbytes)) \
    X(int, PQputCopyEnd, (PGconn *conn, const char *errormsg), (conn, errormsg)) \
    X(char *, PQresultErrorField, (const PGresult *res, int fieldcode), (res, fieldcode)) \
    X(char *, PQresultErrorMessage, (const PGresult *res), (res)) \
    X(ExecStatusType, PQresultStatus, (const PGresult *res), (res)) \
    X(int, PQsendPrepare, \
      (PGconn *conn, const char *stmtName, const char *query, int nParams, const Oid *paramTypes), \
      (conn, stmtName, query, nParams, paramTypes)) \
    X(int, PQsendQuery, (PGconn *conn, const char *query), (conn, query)) \
    X(int, PQsendQueryParams, \
      (PGconn *conn, const char *command, int nParams, const Oid *paramTypes, \
       const char *const *paramValues, const int *paramLengths, const int *paramFormats, int resultFormat), \
      (conn, command, nParams, paramTypes, paramValues, paramLengths, paramFormats, resultFormat)) \
    X(int, PQsendQueryPrepared, \
      (PGconn *conn, const char *stmtName, int nParams, const char *const *paramValues, \
       const int *paramLengths, const int *paramFormats, int resultFormat), \
      (conn, stmtName, nParams, paramValues, paramLengths, paramFormats, resultFormat)) \
    X(int, PQserverVersion, (const PGconn *conn), (conn)) \
    X(PQnoticeProcessor, PQsetNoticeProcessor, (PGconn *conn, PQnoticeProcessor proc, void *arg), \
      (conn, proc, arg)) \
    X(int, PQsetnonblocking, (PGconn *conn, int arg), (conn, arg)) \
    X(int, PQsocket, (const PGconn *conn), (conn)) \
    X(ConnStatusType, PQstatus, (const PGconn *conn), (conn)) \
    X(PGTransactionStatusType, PQtransactionStatus, (const PGconn *conn), (conn))

// The table: one pointer per function, filled once.
#define POINTER(ret, name, params, args) static ret(*name##_p) params;
LIBPQ_FUNCTIONS(POINTER)

static pthread_once_t once = PTHREAD_ONCE_INIT;
static const char *failure;

static void load(void) {
    void *lib = dlopen("libpq.so.5", RTLD_NOW | RTLD_LOCAL);
    if (lib == NULL) {
        failure = dlerror();
        return;
    }
#define FIND(ret, name, params, args) \
    if ((*(void **)&name##_p = dlsym(lib, #name)) == NULL) { \
        failure = dlerror(); \
        return; \
    }
    LIBPQ_FUNCTIONS(FIND)
}

int streakd_libpq_load(void) {
    pthread_once(&once, load);
    return failure == NULL ? 0 : -1;
}

const char *streakd_libpq_error(void) { return failure; }

// Each function forwards to libpq's. Only reached after streakd_libpq_load() returned 0.
#define FORWARD(ret, name, params, args) \
    ret name params { return name##_p args; }
LIBPQ_FUNCTIONS(FORWARD)
