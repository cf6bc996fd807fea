#ifndef STREAKD_OPENAPI_H
#define STREAKD_OPENAPI_H

/// docs/openapi.json, NUL-terminated.
const char *streakd_openapi(void);

#endif
