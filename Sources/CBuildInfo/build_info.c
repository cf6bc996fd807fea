#include "build_info.h"

// Package.swift defines STREAKD_COMMIT from the environment at build time; a C define carries a
// string into the binary, where Swift's own conditions only carry names.
#ifndef STREAKD_COMMIT
#define STREAKD_COMMIT ""
#endif

const char *streakd_commit(void) { return STREAKD_COMMIT; }
