#include "openapi.h"

// The API's one description, docs/openapi.json, carried into the binary as it is in the
// repository (`GET /openapi.json` serves these bytes). #embed is C23; clang takes it in C17 too.
#pragma clang diagnostic ignored "-Wc23-extensions"
static const char document[] = {
#embed "../../docs/openapi.json"
    , 0};

const char *streakd_openapi(void) { return document; }
